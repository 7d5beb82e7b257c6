/**
 * Markup of the hosted setup flow behind `authFlowUrl` (architecture §5, auth session flow).
 *
 * Self-contained: inline CSS and a small inline script, no external assets, so the page works
 * offline on the end user's computer, when shared, and inside an iframe. Every interpolated value is
 * escaped; data for the script travels in a JSON block with `<` escaped.
 */

/** URLs of the setup routes for one session (absolute paths on the service, secret included). */
export interface SetupUrls {
  page: string;
  qwc: string;
  status: string;
  cancel: string;
  /** Simulator mode only. */
  simulate: string;
}

/** The walkthrough (or its finished state when the session is already completed or canceled). */
export interface SetupPageView {
  state: "waiting" | "completed" | "canceled";
  /** Name of the app that sent the link (the project name). */
  appName: string;
  /** End user's company, as the app knows it. */
  companyLabel: string;
  /** Company name the connector reported; null until the first check-in. */
  companyName: string | null;
  password: string | null;
  connectionStatus: string | null;
  redirectTo: string | null;
  qwcFileName: string;
  urls: SetupUrls;
  /** Simulator mode (SIMULATOR=on): offer a simulated company file instead of the end user's. */
  simulator: boolean;
}

/** Pages for links that cannot be used (expired, superseded, invalid, already finished). */
export interface ProblemPageView {
  title: string;
  heading: string;
  message: string;
  hint: string;
}

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** JSON for a `<script type="application/json">` block: no `<`, so no `</script>` or `<!--`. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** One helpful line per connection status, shown under the waiting indicator. */
export const STATUS_HINTS: Readonly<Record<string, string>> = {
  pending_setup:
    "The Web Connector has not checked in yet. Make sure you added the file, entered the password and ticked the checkbox next to the application.",
  online: "The Web Connector checked in and reached your company file. Finishing setup…",
  ledger_unavailable:
    "The Web Connector checked in but could not open your accounting application. Open your accounting application with your company file, then click “Update Selected” in the Web Connector.",
  company_file_mismatch:
    "The Web Connector opened a different company file than the one this connection was set up with. Open the right company file in your accounting application and click “Update Selected” again.",
  offline:
    "The Web Connector has not checked in recently. Make sure it is running and the checkbox next to the application is ticked.",
  disabled: "This connection is disabled. Contact the app that sent you this link.",
};

export const STATUS_LABELS: Readonly<Record<string, string>> = {
  pending_setup: "Waiting for the Web Connector",
  online: "Online",
  ledger_unavailable: "Accounting application not available",
  company_file_mismatch: "Different company file",
  offline: "Offline",
  disabled: "Disabled",
};

const STYLE = `
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #d9dee7; --accent: #1f5fbf;
  --ok: #16794a; --warn: #9a5b00; --bad: #b3261e; --bg: #f5f7fb; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
main { max-width: 720px; margin: 0 auto; padding: 24px 16px 48px; }
header h1 { font-size: 1.5rem; margin: 0 0 4px; }
header p { margin: 0 0 20px; color: var(--muted); }
ol.steps { list-style: none; margin: 0; padding: 0; counter-reset: none; }
.step { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px;
  margin: 0 0 14px; }
.step h2 { font-size: 1.1rem; margin: 0 0 8px; display: flex; gap: 10px; align-items: baseline; }
.num { display: inline-flex; width: 1.7em; height: 1.7em; border-radius: 50%; background: var(--accent);
  color: #fff; font-size: .9rem; align-items: center; justify-content: center; flex: none; }
.step p, .step ul { margin: 6px 0; }
.step ul { padding-left: 22px; }
.button, button { display: inline-block; font: inherit; border-radius: 8px; padding: 8px 16px;
  border: 1px solid var(--accent); background: var(--accent); color: #fff; text-decoration: none;
  cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
.password { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
.password code { font: 1.05rem/1.4 ui-monospace, "Cascadia Mono", Consolas, monospace; background: var(--bg);
  border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; user-select: all;
  word-break: break-all; }
.copied { color: var(--ok); font-size: .9rem; }
.status { display: flex; gap: 10px; align-items: center; margin: 6px 0; }
.dot { width: 10px; height: 10px; border-radius: 50%; background: var(--warn); flex: none; }
.status[data-status="online"] .dot { background: var(--ok); }
.status[data-status="company_file_mismatch"] .dot,
.status[data-status="disabled"] .dot { background: var(--bad); }
.spinner { width: 16px; height: 16px; border: 2px solid var(--line); border-top-color: var(--accent);
  border-radius: 50%; animation: spin 1s linear infinite; flex: none; }
@keyframes spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { .spinner { animation: none; } }
.hint { color: var(--muted); }
.result { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 20px; }
.result h2 { margin: 0 0 8px; }
.result.ok h2 { color: var(--ok); }
.footer { margin-top: 20px; display: flex; justify-content: space-between; align-items: center;
  gap: 12px; flex-wrap: wrap; color: var(--muted); font-size: .9rem; }
[hidden] { display: none !important; }
`;

const SCRIPT = `
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("setup-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var finished = false;

  function show(id) { var el = $(id); if (el) el.hidden = false; }
  function hide(id) { var el = $(id); if (el) el.hidden = true; }
  function text(id, value) { var el = $(id); if (el) el.textContent = value; }

  // Copy button: the Clipboard API where allowed, else select the text and use execCommand.
  var copy = $("copy-password");
  if (copy) copy.addEventListener("click", function () {
    var value = $("password").textContent;
    var done = function () { text("copy-result", "Copied"); };
    var fallback = function () {
      var range = document.createRange();
      range.selectNodeContents($("password"));
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
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
        { type: "ledger-bridge.setup", authSessionId: data.authSessionId, status: status, redirectTo: redirectTo },
        "*"
      );
    } catch (e) { /* ignore */ }
  }

  // Leave for the redirect URL at the top level. Inside an iframe the browser may refuse to move the
  // top window without a click; then the "Continue" link (target=_top) is the way out.
  function leave(url) {
    var link = $("continue");
    link.href = url;
    show("continue-row");
    if (window.top === window.self) { window.location.assign(url); return; }
    try { window.top.location.href = url; } catch (e) { /* blocked: the link stays */ }
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
      text("result-message", redirectTo
        ? "Setup is complete. Taking you back to " + data.appName + "…"
        : "Setup is complete. You can close this page.");
    } else {
      $("result").className = "result";
      text("result-title", "Setup canceled");
      text("result-message", redirectTo
        ? "Taking you back to " + data.appName + "…"
        : "Nothing was connected. You can close this page.");
    }
    tellParent(state, redirectTo);
    if (redirectTo) setTimeout(function () { leave(redirectTo); }, state === "completed" ? 1000 : 0);
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
    if (body.state === "waiting") { showStatus(body.connectionStatus); return; }
    if (body.state === "completed" || body.state === "canceled") {
      finish(body.state, body.companyName, body.redirectTo);
    } else if (body.state === "expired") {
      problem("This setup link has expired", "Ask " + data.appName + " for a new link.");
    } else if (body.state === "superseded") {
      problem("A newer setup link was created", "Use the newest link from " + data.appName + ", or ask for a new one.");
    } else {
      problem("This setup link is not valid", "Ask " + data.appName + " for a new link.");
    }
  }

  function poll() {
    if (finished) return;
    fetch(data.urls.status, { cache: "no-store", headers: { accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (body) { hide("network-error"); handle(body); })
      .catch(function () { show("network-error"); })
      .then(function () { if (!finished) setTimeout(poll, data.pollMs); });
  }

  // Simulator mode: the service attaches its simulated Web Connector; polling then sees it check in.
  var simulateForm = $("simulate-form");
  if (simulateForm) simulateForm.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = $("use-simulator");
    button.disabled = true;
    text("simulate-result", "Connecting a simulated company file…");
    fetch(data.urls.simulate, { method: "POST", cache: "no-store", headers: { accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (body) { text("simulate-result", ""); handle(body); })
      .catch(function () { button.disabled = false; text("simulate-result", ""); show("network-error"); });
  });

  var cancelForm = $("cancel-form");
  if (cancelForm) cancelForm.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = $("cancel");
    button.disabled = true;
    fetch(data.urls.cancel, { method: "POST", cache: "no-store", headers: { accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (body) { handle(body); })
      .catch(function () { button.disabled = false; show("network-error"); });
  });

  if (data.state === "waiting") {
    showStatus(data.connectionStatus);
    setTimeout(poll, data.pollMs);
  } else {
    finish(data.state, data.companyName, data.redirectTo);
  }
})();
`;

/** A complete page in the hosted pages' style (inline CSS, no external assets) around `body`. */
export function pageDocument(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The step-by-step page (or the finished panel for completed/canceled sessions). */
export function renderSetupPage(view: SetupPageView, authSessionId: string, pollMs: number): string {
  const e = escapeHtml;
  const waiting = view.state === "waiting";
  const data = {
    authSessionId,
    state: view.state,
    appName: view.appName,
    companyLabel: view.companyLabel,
    companyName: view.companyName,
    connectionStatus: view.connectionStatus,
    redirectTo: view.redirectTo,
    urls: { status: view.urls.status, cancel: view.urls.cancel, simulate: view.urls.simulate },
    pollMs,
    statusLabels: STATUS_LABELS,
    statusHints: STATUS_HINTS,
  };
  const status = view.connectionStatus ?? "pending_setup";
  const body = `
<header>
  <h1>Connect ${e(view.companyLabel)} to ${e(view.appName)}</h1>
  <p>Do these steps on the computer where your accounting application and your company file are.</p>
</header>
<noscript><p class="hint">This page checks the connection automatically when JavaScript is on. Without it, reload the page after step 3.</p></noscript>
<ol class="steps" id="steps"${waiting ? "" : " hidden"}>
  <li class="step" id="step-download">
    <h2><span class="num">1</span>Download the connection file</h2>
    <p>It tells the Web Connector how to reach ${e(view.appName)} for this company file.</p>
    <p><a class="button" id="download-qwc" href="${e(view.urls.qwc)}" download="${e(view.qwcFileName)}">Download ${e(view.qwcFileName)}</a></p>
  </li>
  <li class="step" id="step-add">
    <h2><span class="num">2</span>Add the application to the Web Connector</h2>
    <ul>
      <li>Open your accounting application and sign in to your company file as an administrator.</li>
      <li>Open the Web Connector (in your accounting application: File → Update Web Services).</li>
      <li>In the Web Connector, choose <strong>Add an application</strong> and pick the file you downloaded.</li>
      <li>Your accounting application asks whether to allow access. Choose <strong>“Yes, always; allow access even if not running”</strong>, then <strong>Continue</strong> and <strong>Done</strong>.</li>
    </ul>
  </li>
  <li class="step" id="step-password">
    <h2><span class="num">3</span>Enter the password and turn it on</h2>
    <p>In the Web Connector, find the new application and paste this password into its <strong>Password</strong> field. Confirm with <strong>Yes</strong> when asked to save it.</p>
    <div class="password">
      <code id="password">${e(view.password ?? "")}</code>
      <button type="button" class="secondary" id="copy-password">Copy password</button>
      <span class="copied" id="copy-result" aria-live="polite"></span>
    </div>
    <p>Then tick the checkbox at the start of the application's row so it runs automatically, and click <strong>Update Selected</strong>.</p>
  </li>
  <li class="step" id="step-wait">
    <h2><span class="num">4</span>Waiting for the first connection…</h2>
    <div class="status" id="status" data-status="${e(status)}" aria-live="polite">
      <span class="spinner" aria-hidden="true"></span>
      <span class="dot" aria-hidden="true"></span>
      <strong id="status-label">${e(STATUS_LABELS[status] ?? status)}</strong>
    </div>
    <p class="hint" id="status-hint">${e(STATUS_HINTS[status] ?? "")}</p>
    <p class="hint" id="network-error" hidden>Cannot reach the server right now; still trying…</p>
  </li>
</ol>
${waiting && view.simulator ? simulatorSection(view) : ""}
<section class="result" id="result" aria-live="polite"${waiting ? " hidden" : ""}>
  <h2 id="result-title"></h2>
  <p id="result-message"></p>
  <p id="continue-row" hidden><a class="button" id="continue" href="#" target="_top">Continue</a></p>
</section>
<div class="footer" id="cancel-row"${waiting ? "" : " hidden"}>
  <span>Changed your mind? You can stop here; nothing is connected until step 4 finishes.</span>
  <form id="cancel-form" method="post" action="${e(view.urls.cancel)}">
    <button type="submit" class="danger" id="cancel">Cancel setup</button>
  </form>
</div>
<script type="application/json" id="setup-data">${scriptJson(data)}</script>
<script>${SCRIPT}</script>
`;
  return pageDocument(`Connect ${view.companyLabel} – ${view.appName}`, body);
}

/**
 * Simulator mode only (the service runs with SIMULATOR=on, for development): instead of a real Web
 * Connector, connect a simulated one with a sample company file. Never rendered otherwise.
 */
function simulatorSection(view: SetupPageView): string {
  const e = escapeHtml;
  return `<section class="step" id="simulator">
  <h2>No accounting application here? (simulator mode)</h2>
  <p class="hint">This service runs in simulator mode. It can connect a simulated Web Connector and a sample company file named “${e(view.companyLabel)}” instead, so you can try everything on this computer.</p>
  <form id="simulate-form" method="post" action="${e(view.urls.simulate)}">
    <button type="submit" class="secondary" id="use-simulator">Use a simulated company file</button>
    <span class="hint" id="simulate-result" aria-live="polite"></span>
  </form>
</section>`;
}

/** A page for a link that cannot be used. */
export function renderProblemPage(view: ProblemPageView): string {
  const body = `
<section class="result" id="result">
  <h2 id="result-title">${escapeHtml(view.heading)}</h2>
  <p id="result-message">${escapeHtml(view.message)}</p>
  <p class="hint">${escapeHtml(view.hint)}</p>
</section>
`;
  return pageDocument(view.title, body);
}
