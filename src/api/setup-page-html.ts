/**
 * Markup of the hosted setup flow behind `authFlowUrl` (architecture §5, auth session flow).
 *
 * No inline script or style (decision 0033): the page loads one stylesheet and one script of our
 * own from the service ({@link HOSTED_PAGE_ASSETS}, files in `api/setup/`), under a CSP that allows
 * scripts and styles from the service only, so escaping is no longer the only defence against an
 * injected script. Every interpolated value is still escaped; data for the script travels in a JSON
 * block with `<` escaped (a data block: the CSP does not run it). Nothing comes from elsewhere, so
 * the page works inside an iframe and on a machine without internet access beyond the service.
 */

/** The hosted pages' own files, by URL: served by api/routes/setup-pages.ts from `api/setup/`. */
export const HOSTED_PAGE_ASSETS = {
  stylesheet: "/setup/assets/pages.css",
  setupScript: "/setup/assets/setup.js",
} as const;

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

/** A complete page in the hosted pages' style (the service's own stylesheet) around `body`. */
export function pageDocument(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${HOSTED_PAGE_ASSETS.stylesheet}">
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
<script src="${HOSTED_PAGE_ASSETS.setupScript}"></script>
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
