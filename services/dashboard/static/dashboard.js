// Dialogs opened by [data-open] / closed by [data-close], and the pickup board's live feed.
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

  function startBoard() {
    var board = document.getElementById("board");
    if (!board || !window.EventSource) { return; }
    var status = document.getElementById("live-state");
    var source = new EventSource(board.dataset.events);
    source.onopen = function () { status.textContent = "Live."; };
    source.onerror = function () { status.textContent = "Reconnecting…"; };
    source.addEventListener("StudentStateChanged", function (message) {
      var data = JSON.parse(message.data);
      var row = board.querySelector('tr[data-student-id="' + data.student_id + '"]');
      if (!row) { return; }
      var chip = document.createElement("span");
      chip.className = "chip state-" + String(data.to || "").toLowerCase();
      chip.textContent = data.to;
      var cell = row.querySelector(".state");
      cell.replaceChildren(chip);
      row.querySelector(".since").textContent = data.at;
    });
    source.addEventListener("StudentRosterChanged", function () { window.location.reload(); });
  }
  function openFromHash() {
    // /jobs links a row's "Delete…" to the job page with #delete: open its dialog there.
    if (window.location.hash === "#delete") {
      var dialog = document.getElementById("delete-dialog");
      if (dialog) { dialog.showModal(); }
    }
  }
  document.addEventListener("DOMContentLoaded", startBoard);
  document.addEventListener("DOMContentLoaded", openFromHash);
})();
