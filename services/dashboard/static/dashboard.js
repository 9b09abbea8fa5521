// Dialogs opened by [data-open] / closed by [data-close] (the pickup board: pickup_board.js).
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var opener = event.target.closest("[data-open]");
    if (opener) {
      var dialog = document.getElementById(opener.dataset.open);
      if (dialog) { dialog.returnFocus = opener; dialog.showModal(); }
      return;
    }
    var closer = event.target.closest("[data-close]");
    if (closer) {
      var target = document.getElementById(closer.dataset.close);
      if (target) { target.close(); }
    }
  });
  document.addEventListener("close", function (event) {
    if (event.target.returnFocus) { event.target.returnFocus.focus(); }
  }, true);

  function openFromHash() {
    // /jobs links a row's "Delete…" to the job page with #delete: open its dialog there.
    if (window.location.hash === "#delete") {
      var dialog = document.getElementById("delete-dialog");
      if (dialog) { dialog.showModal(); }
    }
  }
  document.addEventListener("DOMContentLoaded", openFromHash);
})();
