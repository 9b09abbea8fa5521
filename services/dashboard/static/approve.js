// The approver's page. The token arrives in the URL fragment, which browsers never send to a
// server, and leaves only in the Authorization header of the /api/approvals/<job> endpoints.
(function () {
  "use strict";
  var root = document.getElementById("approval");
  if (!root) { return; }
  var jobId = root.dataset.jobId;
  var base = "/api/approvals/" + encodeURIComponent(jobId);
  var storageKey = "esteira-approval:" + jobId;
  var message = document.getElementById("approval-message");
  var token = takeToken();
  var OPEN = ["Waiting", "Released"];

  function takeToken() {
    var fromLink = window.location.hash.slice(1);
    if (!fromLink) {
      try { return window.sessionStorage.getItem(storageKey); } catch (e) { return null; }
    }
    try {
      window.sessionStorage.setItem(storageKey, fromLink);
      // Out of the address bar and the history; a reload in this tab finds it in storage.
      window.history.replaceState(null, "", window.location.pathname + window.location.search);
    } catch (e) { /* no storage: keep the fragment so a reload still works */ }
    return fromLink;
  }

  function say(text, isError) {
    message.textContent = text;
    message.className = "notice" + (isError ? " error" : "");
  }

  function call(path, method, body) {
    var headers = { "Authorization": "Bearer " + token };
    if (body) { headers["Content-Type"] = "application/json"; }
    // No cookies: the token is the approver's only credential here.
    return fetch(base + path, { method: method || "GET", headers: headers, cache: "no-store",
                                credentials: "omit", referrerPolicy: "no-referrer",
                                body: body ? JSON.stringify(body) : undefined });
  }

  function refusal(response) {
    return response.json().then(function (body) {
      return (body.code ? body.code + ": " : "") + (body.message || response.statusText);
    }, function () { return "The server answered " + response.status + "."; });
  }

  function text(id, value) { document.getElementById(id).textContent = value || "—"; }

  function ruleText(rule) {
    var of = rule.approvers ? " of " + rule.approvers.length : "";
    return rule.quorum + of + " approver(s) must approve; a single rejection stops it.";
  }

  function render(view) {
    text("a-file", view.fileName);
    text("a-profile", view.profile);
    text("a-sha256", view.stagedSha256);
    text("a-rule", ruleText(view.rule || {}));
    text("a-state", view.approvalState + " (job " + view.status + ")");
    text("a-expires", view.expiresAt ? new Date(view.expiresAt).toUTCString() : "never");
    text("a-you", view.you);
    var rows = document.getElementById("a-decisions");
    rows.replaceChildren();
    view.decisions.forEach(function (d) {
      var row = document.createElement("tr");
      [d.approver, d.email, d.decision, d.reason || "", new Date(d.at).toUTCString()]
        .forEach(function (value) {
          var cell = document.createElement("td");
          cell.textContent = value;
          row.appendChild(cell);
        });
      rows.appendChild(row);
    });
    if (!view.decisions.length) {
      var empty = document.createElement("tr");
      var cell = document.createElement("td");
      cell.colSpan = 5;
      cell.textContent = "No decisions yet.";
      empty.appendChild(cell);
      rows.appendChild(empty);
    }
    var mine = view.decisions.filter(function (d) { return d.approver === view.you; })[0];
    var open = OPEN.indexOf(view.approvalState) >= 0;
    document.getElementById("decide").hidden = Boolean(mine) || !open;
    if (mine) {
      say("You " + mine.decision.toLowerCase() + " this file.");
    } else if (!open) {
      say("This request is closed (" + view.approvalState + "): no decision is needed.");
    } else {
      say("Check the file, then approve or reject it.");
    }
    document.getElementById("approval-details").hidden = false;
  }

  function load() {
    return call("").then(function (response) {
      if (!response.ok) {
        return refusal(response).then(function (why) { say(why, true); });
      }
      return response.json().then(render);
    });
  }

  function preview(fileName) {
    var note = document.getElementById("a-preview-note");
    return call("/preview").then(function (response) {
      if (!response.ok) {
        return refusal(response).then(function (why) { note.textContent = why; });
      }
      return response.blob().then(function (png) {
        var image = document.getElementById("a-preview");
        image.src = URL.createObjectURL(png);
        image.alt = "First page of " + fileName;
        image.hidden = false;
        note.textContent = "The first page of the copy held for signing.";
      });
    });
  }

  function decide(path, body, buttons) {
    buttons.forEach(function (b) { b.disabled = true; });
    return call(path, "POST", body).then(function (response) {
      if (response.ok) { return load(); }
      return refusal(response).then(function (why) { say(why, true); });
    }).finally(function () { buttons.forEach(function (b) { b.disabled = false; }); });
  }

  if (!token) {
    say("This link has no approval credential. Open the link from your e-mail again.", true);
    return;
  }
  var buttons = Array.prototype.slice.call(document.querySelectorAll("#decide button"));
  document.getElementById("approve-form").addEventListener("submit", function (event) {
    event.preventDefault();
    decide("/approve", null, buttons);
  });
  var reason = document.getElementById("reject-reason");
  reason.addEventListener("input", function () { reason.setCustomValidity(""); });
  document.getElementById("reject-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var why = reason.value.trim();
    if (!why) {
      reason.setCustomValidity("Say why you reject this file.");
      reason.reportValidity();
      return;
    }
    decide("/reject", { reason: why }, buttons);
  });
  load().then(function () {
    var file = document.getElementById("a-file").textContent;
    if (!document.getElementById("approval-details").hidden) { preview(file); }
  });
})();
