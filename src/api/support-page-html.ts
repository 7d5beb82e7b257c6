import { escapeHtml, pageDocument } from "./setup-page-html.ts";

/**
 * The support page behind the `AppSupport` URL of every generated `.qwc` file (tenancy/qwc.ts,
 * `${PUBLIC_URL}/support`): the Web Connector links to it from the application's row. It is read
 * by the end user, not by a developer, so it says what the connection does, how to check the Web
 * Connector, and whom to ask. It is the same for everyone: it names no app, company or person, and
 * uses only the neutral words "the accounting application" and "Web Connector".
 */
export interface SupportPageView {
  /** How often the Web Connector checks in, from the `.qwc` file (`CONNECTOR_CHECK_IN_SECONDS`). */
  checkInSeconds: number;
}

function checkInPhrase(seconds: number): string {
  if (seconds % 60 !== 0) return `every ${seconds} seconds`;
  const minutes = seconds / 60;
  return minutes === 1 ? "every minute" : `every ${minutes} minutes`;
}

export function renderSupportPage(view: SupportPageView): string {
  const body = `
<header>
  <h1>Help with your Web Connector connection</h1>
  <p>You reached this page from the ledger-bridge entry in your Web Connector.</p>
</header>
<section class="step" id="what-it-does">
  <h2>What this connection does</h2>
  <p>An app you use connected your company file through ledger-bridge. ledger-bridge itself never runs on your computer: the Web Connector does. It checks in with ledger-bridge ${escapeHtml(checkInPhrase(view.checkInSeconds))} and whenever you click <strong>Update Selected</strong>.</p>
  <ul>
    <li>When the app asks to read from or write to your company file, ledger-bridge hands the request to the Web Connector, the Web Connector passes it to the accounting application, and the answer goes back to the app.</li>
    <li>Requests wait while the Web Connector is not running or cannot reach the accounting application, and run when it checks in again. A change is never sent twice.</li>
    <li>The connection only works with the company file it was set up with.</li>
  </ul>
</section>
<section class="step" id="check">
  <h2>Check the Web Connector</h2>
  <ul>
    <li>Open the accounting application and the company file this connection is for.</li>
    <li>Open the Web Connector (in the accounting application: File → Update Web Services).</li>
    <li>Find the ledger-bridge row for your company. Make sure the checkbox at the start of the row is ticked, so it runs automatically.</li>
    <li>Tick the row and click <strong>Update Selected</strong>. The row's status shows how the update went; if it shows an error, note the message for the app's support.</li>
    <li>If the Web Connector asks for a password, enter the one shown on the setup page. If you no longer have it, ask the app for a new setup link: it gives you a new connection file and password.</li>
    <li>Close any dialog box that is open in the accounting application: an open dialog stops the Web Connector from working.</li>
    <li>If the accounting application asks whether to allow access, allow it, also when the application is not running.</li>
    <li>Keep the Web Connector running and the computer awake while the app needs your data.</li>
  </ul>
</section>
<section class="step" id="help">
  <h2>Where to get help</h2>
  <p>Contact the app that sent you the setup link. It set up this connection and can see each of its requests, with the reason one is waiting or failed. Tell them when the problem happened and what the Web Connector showed.</p>
  <p class="hint">For the app's developers: the API reference of this service is at <a href="/docs">/docs</a>.</p>
</section>
`;
  return pageDocument("Web Connector help – ledger-bridge", body);
}
