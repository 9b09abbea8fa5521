// The guardian page: each student's card kept live by the guardian's event stream.
// Without scripts the page still works: "Estou chegando" is a plain form post.
(function () {
  "use strict";
  var list, status, notes;

  function cardOf(id) {
    return list.querySelector('li[data-student-id="' + id + '"]');
  }

  function parse(html, selector) {
    var holder = document.createElement("template");
    holder.innerHTML = html.trim();
    return holder.content.querySelector(selector);
  }

  function refreshCard(id) {
    return fetch(list.dataset.cards + id + "/card", {credentials: "same-origin"})
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (html) {
        var fresh = html && parse(html, "li[data-student-id]");
        var old = cardOf(id);
        if (!fresh || !old || Number(fresh.dataset.version) < Number(old.dataset.version)) {
          return;
        }
        var hadFocus = old.contains(document.activeElement);
        old.replaceWith(fresh);
        if (hadFocus) { (fresh.querySelector("button") || fresh).focus(); }
        var label = fresh.querySelector(".chip");
        status.textContent = fresh.querySelector(".name").textContent + ": " +
          (label ? label.textContent : "");
      })
      .catch(function () { /* the next event refreshes it */ });
  }

  function refreshNotes() {
    return fetch(notes.dataset.source, {credentials: "same-origin"})
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (html) {
        var fresh = html && parse(html, "#notification-list");
        var old = document.getElementById("notification-list");
        if (fresh && old) { old.replaceWith(fresh); }
      })
      .catch(function () { /* kept as it was */ });
  }

  function listen() {
    var source = new EventSource(list.dataset.events);
    source.onopen = function () { status.textContent = "Atualizando ao vivo."; };
    source.onerror = function () {
      status.textContent = source.readyState === EventSource.CLOSED ?
        "Sessão encerrada: recarregue a página." : "Reconectando…";
    };
    source.addEventListener("StudentStateChanged", function (message) {
      var data = JSON.parse(message.data);
      var card = cardOf(data.studentId);
      if (card && Number(data.version) > Number(card.dataset.version)) {
        refreshCard(data.studentId).then(refreshNotes);
      }
    });
    source.addEventListener("StudentRosterChanged", function () { window.location.reload(); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    list = document.getElementById("students");
    status = document.getElementById("live-state");
    notes = document.getElementById("notifications");
    if (list && status && notes && window.EventSource) { listen(); }
  });
})();
