// The pickup board: cards kept live by the event stream, and staff actions that send the
// version the card shows (a refusal brings the card as it is now).
(function () {
  "use strict";
  var board, notices;

  function cardOf(id) {
    return board.querySelector('tbody tr[data-student-id="' + id + '"]');
  }

  function swap(html) {
    // A <template> parses a lone <tr>; anything else would drop it.
    var holder = document.createElement("template");
    holder.innerHTML = html.trim();
    var fresh = holder.content.querySelector("tr[data-student-id]");
    var old = fresh && cardOf(fresh.dataset.studentId);
    if (!old || Number(fresh.dataset.version) < Number(old.dataset.version)) {
      return;  // an answer older than what the card shows arrived late
    }
    var hadFocus = old.contains(document.activeElement) || old.dataset.busy === "1";
    old.replaceWith(fresh);
    if (hadFocus) {
      (fresh.querySelector("button") || fresh.querySelector(".name")).focus();
    }
  }

  function say(text, code, kind) {
    var line = document.createElement("p");
    line.className = "notice" + (kind ? " " + kind : "");
    if (code) {
      var tag = document.createElement("code");
      tag.textContent = code;
      line.append(tag, " ");
    }
    line.append(text);
    notices.replaceChildren(line);
  }

  function refresh(id) {
    return fetch(board.dataset.cards + id + "/card", {credentials: "same-origin"})
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (html) { if (html) { swap(html); } })
      .catch(function () { /* the next event or action refreshes it */ });
  }

  function act(form) {
    var card = form.closest("tr");
    var buttons = card.querySelectorAll("button");
    card.dataset.busy = "1";
    buttons.forEach(function (b) { b.disabled = true; });
    fetch(form.action, {
      method: "POST", credentials: "same-origin",
      body: new URLSearchParams(new FormData(form)),
      headers: {"Accept": "application/json", "X-CSRF-Token": form.elements.csrf_token.value}
    }).then(function (answer) {
      var type = answer.headers.get("Content-Type") || "";
      if (type.indexOf("application/json") === -1) {
        window.location.reload();  // signed out, or a stale CSRF token: the page knows better
        return;
      }
      return answer.json().then(function (body) {
        if (body.card) { swap(body.card); } else { buttons.forEach(function (b) { b.disabled = false; }); }
        say(body.message, answer.ok ? null : body.code, answer.ok ? "" : "error");
      });
    }).catch(function () {
      delete card.dataset.busy;
      buttons.forEach(function (b) { b.disabled = false; });
      say("Sem conexão com o servidor: tente de novo.", null, "error");
    });
  }

  function listen(status) {
    var source = new EventSource(board.dataset.events);
    source.onopen = function () { status.textContent = "Live."; };
    source.onerror = function () { status.textContent = "Reconnecting…"; };
    source.addEventListener("StudentStateChanged", function (message) {
      var data = JSON.parse(message.data);
      var card = cardOf(data.studentId);
      if (!card) { return; }
      if (Number(data.version) > Number(card.dataset.version)) { refresh(data.studentId); }
      if (data.origin === "timeout") {
        // The seed: "left because it timed out" is alerted, unlike a pickup.
        say(data.name + " saiu do quadro: " + data.reason + ".", null, "warning");
      }
    });
    source.addEventListener("StudentRosterChanged", function () { window.location.reload(); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    board = document.getElementById("board");
    notices = document.getElementById("notices");
    if (!board || !board.dataset.cards) { return; }
    board.addEventListener("submit", function (event) {
      var form = event.target.closest("form.card-action");
      if (!form) { return; }
      event.preventDefault();
      act(form);
    });
    if (window.EventSource) { listen(document.getElementById("live-state")); }
  });
})();
