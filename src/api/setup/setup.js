/*
 * The setup page's script (api/setup-page-html.ts), served at /setup/assets/setup.js: a file of our
 * own under a CSP whose script-src is 'self' only, so no inline script can run on the page, whatever
 * an interpolated value held (decision 0033). Its data comes from the page's JSON block
 * (`<script type="application/json" id="setup-data">`), which is data, never run.
 */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("setup-data").textContent);
  var $ = function (id) {
    return document.getElementById(id);
  };
  var finished = false;

  function show(id) {
    var el = $(id);
    if (el) el.hidden = false;
  }
  function hide(id) {
    var el = $(id);
    if (el) el.hidden = true;
  }
  function text(id, value) {
    var el = $(id);
    if (el) el.textContent = value;
  }

  // Copy button: the Clipboard API where allowed, else select the text and use execCommand.
  var copy = $("copy-password");
  if (copy)
    copy.addEventListener("click", function () {
      var value = $("password").textContent;
      var done = function () {
        text("copy-result", "Copied");
      };
      var fallback = function () {
        var range = document.createRange();
        range.selectNodeContents($("password"));
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        var ok = false;
        try {
          ok = document.execCommand("copy");
        } catch {
          ok = false;
        }
        text("copy-result", ok ? "Copied" : "Press Ctrl+C to copy");
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(value).then(done, fallback);
      } else {
        fallback();
      }
    });

  function tellParent(status, redirectTo) {
    if (window.parent === window) return;
    try {
      window.parent.postMessage(
        {
          type: "ledger-bridge.setup",
          authSessionId: data.authSessionId,
          status: status,
          redirectTo: redirectTo,
        },
        "*",
      );
    } catch {
      /* ignore */
    }
  }

  // Leave for the redirect URL at the top level. Inside an iframe the browser may refuse to move the
  // top window without a click; then the "Continue" link (target=_top) is the way out.
  function leave(url) {
    var link = $("continue");
    link.href = url;
    show("continue-row");
    if (window.top === window.self) {
      window.location.assign(url);
      return;
    }
    try {
      window.top.location.href = url;
    } catch {
      /* blocked: the link stays */
    }
  }

  function finish(state, companyName, redirectTo) {
    if (finished) return;
    finished = true;
    hide("steps");
    hide("cancel-row");
    show("result");
    if (state === "completed") {
      $("result").className = "result ok";
      text("result-title", "Connected: " + (companyName || data.companyLabel));
      text(
        "result-message",
        redirectTo
          ? "Setup is complete. Taking you back to " + data.appName + "…"
          : "Setup is complete. You can close this page.",
      );
    } else {
      $("result").className = "result";
      text("result-title", "Setup canceled");
      text(
        "result-message",
        redirectTo
          ? "Taking you back to " + data.appName + "…"
          : "Nothing was connected. You can close this page.",
      );
    }
    tellParent(state, redirectTo);
    if (redirectTo)
      setTimeout(
        function () {
          leave(redirectTo);
        },
        state === "completed" ? 1000 : 0,
      );
  }

  function problem(title, message) {
    finished = true;
    hide("steps");
    hide("cancel-row");
    show("result");
    $("result").className = "result";
    text("result-title", title);
    text("result-message", message);
  }

  function showStatus(status) {
    var box = $("status");
    if (!box || !status) return;
    box.setAttribute("data-status", status);
    text("status-label", data.statusLabels[status] || status);
    text("status-hint", data.statusHints[status] || "");
  }

  function handle(body) {
    if (!body || typeof body.state !== "string") return;
    if (body.state === "waiting") {
      showStatus(body.connectionStatus);
      return;
    }
    if (body.state === "completed" || body.state === "canceled") {
      finish(body.state, body.companyName, body.redirectTo);
    } else if (body.state === "expired") {
      problem("This setup link has expired", "Ask " + data.appName + " for a new link.");
    } else if (body.state === "superseded") {
      problem(
        "A newer setup link was created",
        "Use the newest link from " + data.appName + ", or ask for a new one.",
      );
    } else {
      problem("This setup link is not valid", "Ask " + data.appName + " for a new link.");
    }
  }

  function poll() {
    if (finished) return;
    fetch(data.urls.status, { cache: "no-store", headers: { accept: "application/json" } })
      .then(function (response) {
        return response.json();
      })
      .then(function (body) {
        hide("network-error");
        handle(body);
      })
      .catch(function () {
        show("network-error");
      })
      .then(function () {
        if (!finished) setTimeout(poll, data.pollMs);
      });
  }

  // Simulator mode: the service attaches its simulated Web Connector; polling then sees it check in.
  var simulateForm = $("simulate-form");
  if (simulateForm)
    simulateForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = $("use-simulator");
      button.disabled = true;
      text("simulate-result", "Connecting a simulated company file…");
      fetch(data.urls.simulate, {
        method: "POST",
        cache: "no-store",
        headers: { accept: "application/json" },
      })
        .then(function (response) {
          return response.json();
        })
        .then(function (body) {
          text("simulate-result", "");
          handle(body);
        })
        .catch(function () {
          button.disabled = false;
          text("simulate-result", "");
          show("network-error");
        });
    });

  var cancelForm = $("cancel-form");
  if (cancelForm)
    cancelForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = $("cancel");
      button.disabled = true;
      fetch(data.urls.cancel, { method: "POST", cache: "no-store", headers: { accept: "application/json" } })
        .then(function (response) {
          return response.json();
        })
        .then(function (body) {
          handle(body);
        })
        .catch(function () {
          button.disabled = false;
          show("network-error");
        });
    });

  if (data.state === "waiting") {
    showStatus(data.connectionStatus);
    setTimeout(poll, data.pollMs);
  } else {
    finish(data.state, data.companyName, data.redirectTo);
  }
})();
