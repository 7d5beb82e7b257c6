import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test, type TestContext } from "node:test";
import { XMLParser } from "fast-xml-parser";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { SERVICE_OWNER_ID, loadSetup } from "../../src/tenancy/auth-sessions.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import { inCi } from "../../src/testing/references.ts";
import { launchChromium } from "./chromium.ts";

/**
 * The hosted setup page behind `authFlowUrl`, in real headless Chromium against the real service on
 * loopback, with a simulated Web Connector configured only from what the page gives the end user
 * (the downloaded `.qwc` and the password shown).
 */

let sys: System;
let browser: Browser | undefined;
let appServer: Server;
let appUrl: string;
const embedded = new Map<string, string>();
let fileCount = 0;

before(async () => {
  sys = await startSystem(null, { config: { CONNECTOR_HOLD_MS: "300" } });
  // The embedding app: a return page for redirects and a page that puts the setup link in an iframe.
  appServer = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/embed") {
      const src = embedded.get(url.searchParams.get("key") ?? "") ?? "about:blank";
      const sandbox = url.searchParams.get("sandbox");
      const attribute = (value: string): string => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(`<!doctype html><title>Embedding app</title><h1>Embedding app</h1>
<script>window.setupMessages = []; window.addEventListener("message", function (e) { window.setupMessages.push(e.data); });</script>
<iframe id="setup" src="${attribute(src)}"${sandbox ? ` sandbox="${attribute(sandbox)}"` : ""} style="width:100%;height:1400px;border:0"></iframe>`);
      return;
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html><title>Back in the app</title><h1>Back in the app</h1>`);
  });
  await new Promise<void>((resolve) => appServer.listen(0, "127.0.0.1", resolve));
  appUrl = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => appServer.close(() => resolve()));
  await sys.close();
});

interface Session {
  id: string;
  clientSecret: string;
  authFlowUrl: string;
  endUserId: string;
}

async function createEndUser(companyName: string): Promise<string> {
  fileCount++;
  const response = await sys.call("POST", "/v1/end-users", {
    key: sys.project.keys.secretTest,
    body: { companyName, sourceId: `setup-page-${fileCount}` },
  });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { id: string }).id;
}

async function createSession(
  endUserId: string,
  options: { redirectUrl?: string; linkExpiryMins?: number } = {},
): Promise<Session> {
  const response = await sys.call("POST", "/v1/auth-sessions", {
    key: sys.project.keys.secretTest,
    body: { publishableKey: sys.project.keys.publishableTest, endUserId, ...options },
  });
  assert.equal(response.status, 201, await response.clone().text());
  const session = (await response.json()) as Session;
  assert.ok(session.authFlowUrl.startsWith(`${sys.url}/setup/${session.id}?clientSecret=`));
  return session;
}

/** A company file in the simulated accounting application, open, as the end user would have it. */
function openCompanyFile(companyName: string): void {
  const path = `C:\\Company Files\\${companyName.replace(/[^A-Za-z0-9 ]/g, "")} ${fileCount}.qbw`;
  sys.ledger.createCompanyFile(path, { companyName, seed: "sample" });
  sys.ledger.openCompanyFile(path);
}

function startConnector(t: TestContext, qwc: string, password: string): SimulatedWebConnector {
  const connector = new SimulatedWebConnector({ qwc, password, application: sys.ledger, noOpPauseMs: 20 });
  t.after(() => connector.stop());
  connector.start();
  return connector;
}

async function newPage(t: TestContext): Promise<{ context: BrowserContext; page: Page } | null> {
  if (!browser) {
    assert.ok(!inCi(), "chromium is not on PATH; CI must run the browser tests (apt-get install chromium)");
    t.skip("chromium is not on PATH (apt-get install chromium)");
    return null;
  }
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  // The page must work under its CSP (no inline script or style, decision 0033): any violation or
  // script error, in the page or in a frame, fails the test.
  const problems: string[] = [];
  page.on("console", (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  t.after(async () => {
    await context.close();
    assert.deepEqual(problems, [], "no CSP violation or script error");
  });
  return { context, page };
}

/** The CSP of a hosted page: scripts and styles from the service only, framing open. */
function assertStrictCsp(csp: string): void {
  assert.match(csp, /frame-ancestors \*/);
  const directive = (name: string): string | undefined =>
    csp
      .split(";")
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${name} `))
      ?.slice(name.length + 1);
  assert.equal(directive("script-src"), "'self'", csp);
  assert.equal(directive("style-src"), "'self'", csp);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|unsafe-hashes/, csp);
}

async function statusOf(session: Session): Promise<{ code: number; body: Record<string, unknown> }> {
  const response = await fetch(
    `${sys.url}/setup/${session.id}/status?clientSecret=${encodeURIComponent(session.clientSecret)}`,
  );
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

test("the walkthrough: steps, password, .qwc download, first check-in completes and redirects", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { context, page } = opened;
  const endUserId = await createEndUser("Acme Books");
  const session = await createSession(endUserId, { redirectUrl: `${appUrl}/return?from=setup` });

  const response = await page.goto(session.authFlowUrl);
  assert.ok(response);
  assert.equal(response.status(), 200);
  const headers = response.headers();
  assert.match(headers["content-type"] ?? "", /^text\/html/);
  assertStrictCsp(headers["content-security-policy"] ?? "");
  assert.equal(headers["x-frame-options"], undefined);
  // No inline script or style at all: the script and the stylesheet are the service's own files.
  assert.equal(await page.locator("script:not([src]):not([type='application/json'])").count(), 0);
  assert.equal(await page.locator("style, [style], [onclick], [onload], [onerror]").count(), 0);
  assert.deepEqual(
    await page
      .locator("script[src], link[rel=stylesheet]")
      .evaluateAll((elements) =>
        elements.map((element) => element.getAttribute("src") ?? element.getAttribute("href")),
      ),
    ["/setup/assets/pages.css", "/setup/assets/setup.js"],
  );
  for (const [asset, type] of [
    ["/setup/assets/setup.js", /^text\/javascript/],
    ["/setup/assets/pages.css", /^text\/css/],
  ] as const) {
    const fetched = await fetch(`${sys.url}${asset}`);
    assert.equal(fetched.status, 200, asset);
    assert.match(fetched.headers.get("content-type") ?? "", type, asset);
    assert.equal(fetched.headers.get("x-content-type-options"), "nosniff", asset);
  }
  assert.equal(headers["cache-control"], "no-store");
  assert.equal(headers["referrer-policy"], "no-referrer");

  // The four numbered steps.
  for (const heading of [
    /Download the connection file/,
    /Add the application to the Web Connector/,
    /Enter the password/,
    /Waiting for the first connection…/,
  ]) {
    await page.getByRole("heading", { name: heading }).waitFor();
  }
  await page.getByText("Yes, always; allow access even if not running").waitFor();
  assert.equal(await page.locator("#status").getAttribute("data-status"), "pending_setup");

  // The password on the page is the one the connector needs.
  const shownPassword = (await page.locator("#password").textContent())?.trim() ?? "";
  const setup = await loadSetup(sys.deps, session.id, session.clientSecret);
  assert.equal(setup.state, "waiting");
  assert.ok(setup.state === "waiting");
  assert.equal(shownPassword, setup.password);
  assert.match(shownPassword, /^[A-Za-z0-9]{24}$/);

  // Copy button puts it on the clipboard.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: sys.url });
  await page.getByRole("button", { name: "Copy password" }).click();
  await page.locator("#copy-result").filter({ hasText: "Copied" }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shownPassword);

  // Step 1: the download, as the browser saves it.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.locator("#download-qwc").click(),
  ]);
  assert.equal(download.suggestedFilename(), "Acme Books.qwc");
  const downloadedPath = await download.path();
  const qwc = await readFile(downloadedPath, "utf8");
  const parsed = new XMLParser({ parseTagValue: false }).parse(qwc) as {
    QBWCXML: Record<string, unknown> & { Scheduler: Record<string, string> };
  };
  const doc = parsed.QBWCXML;
  assert.equal(doc.AppURL, `${sys.url}/connector`);
  assert.equal(doc.UserName, setup.connection.username);
  assert.equal(doc.OwnerID, SERVICE_OWNER_ID);
  assert.equal(doc.FileID, setup.connection.file_id);
  assert.equal(doc.QBType, "QBFS");
  assert.ok(
    Number(doc.Scheduler.RunEveryNMinutes ?? doc.Scheduler.RunEveryNSeconds) > 0,
    "a Scheduler interval",
  );
  assert.match(String(doc.AppName), /Acme Books/);

  // Steps 2–3 as the end user does them: add the file, paste the password, tick the box.
  openCompanyFile("Acme Books");
  startConnector(t, qwc, shownPassword);

  // Step 4: the page notices the first check-in, says so, then returns to the app.
  await page.getByRole("heading", { name: "Connected: Acme Books" }).waitFor();
  await page.waitForURL(`${appUrl}/return?**`);
  const landed = new URL(page.url());
  assert.equal(landed.pathname, "/return");
  assert.equal(landed.searchParams.get("from"), "setup");
  assert.equal(landed.searchParams.get("authSessionId"), session.id);
  assert.equal(landed.searchParams.get("status"), "completed");

  const status = await statusOf(session);
  assert.equal(status.code, 200);
  assert.equal(status.body.state, "completed");
  assert.equal(status.body.companyName, "Acme Books");

  // The file is offered only while the setup waits.
  const late = await fetch(
    `${sys.url}/setup/${session.id}/qwc?clientSecret=${encodeURIComponent(session.clientSecret)}`,
  );
  assert.equal(late.status, 410);
});

test("cancel: returns to the app with status=canceled; without a redirect URL the page says so", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  const company = `O'Brien & <Sons> "Ltd"`;
  const endUserId = await createEndUser(company);
  const session = await createSession(endUserId, { redirectUrl: `${appUrl}/return` });

  await page.goto(session.authFlowUrl);
  // Interpolated text is escaped: it shows literally and injects nothing.
  await page.getByRole("heading", { name: `Connect ${company} to System test` }).waitFor();
  assert.equal(await page.locator("main sons, main [onerror]").count(), 0);

  const qwcResponse = await fetch(
    `${sys.url}/setup/${session.id}/qwc?clientSecret=${encodeURIComponent(session.clientSecret)}`,
  );
  assert.equal(qwcResponse.status, 200);
  assert.match(qwcResponse.headers.get("content-type") ?? "", /^application\/xml/);
  assert.match(
    qwcResponse.headers.get("content-disposition") ?? "",
    /^attachment; filename="[A-Za-z0-9 ._()-]+\.qwc"; filename\*=UTF-8''/,
  );

  await page.getByRole("button", { name: "Cancel setup" }).click();
  await page.waitForURL(`${appUrl}/return?**`);
  const landed = new URL(page.url());
  assert.equal(landed.searchParams.get("authSessionId"), session.id);
  assert.equal(landed.searchParams.get("status"), "canceled");
  const status = await statusOf(session);
  assert.deepEqual(status, {
    code: 200,
    body: { state: "canceled", connectionStatus: null, companyName: null, redirectTo: landed.toString() },
  });

  // A session without a redirect URL: the page itself confirms.
  const other = await createSession(await createEndUser("No Redirect Co"));
  await page.goto(other.authFlowUrl);
  await page.getByRole("button", { name: "Cancel setup" }).click();
  await page.getByRole("heading", { name: "Setup canceled" }).waitFor();
  assert.equal(new URL(page.url()).origin, sys.url);
  assert.equal((await statusOf(other)).body.state, "canceled");
});

/** Embeds a fresh session's link in an iframe on `embedOrigin`, brings the connector online. */
async function embedAndConnect(
  t: TestContext,
  page: Page,
  embedOrigin: string,
  company: string,
  sandbox?: string,
) {
  const endUserId = await createEndUser(company);
  const session = await createSession(endUserId, { redirectUrl: `${appUrl}/return` });
  embedded.set(session.id, session.authFlowUrl);

  const query = new URLSearchParams({ key: session.id, ...(sandbox ? { sandbox } : {}) });
  await page.goto(`${embedOrigin}/embed?${query}`);
  const frame = page.frameLocator("#setup");
  await frame.getByRole("heading", { name: /Download the connection file/ }).waitFor();
  await frame.getByRole("heading", { name: /Waiting for the first connection…/ }).waitFor();
  const password = (await frame.locator("#password").textContent())?.trim() ?? "";
  assert.match(password, /^[A-Za-z0-9]{24}$/);
  const qwcHref = await frame.locator("#download-qwc").getAttribute("href");
  assert.ok(qwcHref);
  const qwc = await (await fetch(new URL(qwcHref, sys.url))).text();

  openCompanyFile(company);
  startConnector(t, qwc, password);
  return { session, frame };
}

function assertLandedCompleted(page: Page, sessionId: string): void {
  const landed = new URL(page.url());
  assert.equal(landed.origin, appUrl);
  assert.equal(landed.pathname, "/return");
  assert.equal(landed.searchParams.get("authSessionId"), sessionId);
  assert.equal(landed.searchParams.get("status"), "completed");
}

test("embedded in a same-site iframe: steps render in the frame, completion moves the top window", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  const { session } = await embedAndConnect(t, page, appUrl, "Framed Traders");
  // Chromium lets a same-site frame navigate the top window without a click.
  await page.waitForURL(`${appUrl}/return?**`);
  assertLandedCompleted(page, session.id);
});

test("embedded in a cross-site iframe: completion moves the top window to the redirect URL", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  // `localhost` and `127.0.0.1` are different sites.
  const embedOrigin = appUrl.replace("127.0.0.1", "localhost");
  const { session } = await embedAndConnect(t, page, embedOrigin, "Cross Site Traders");
  await page.waitForURL(`${appUrl}/return?**`);
  assertLandedCompleted(page, session.id);
});

test("embedded in a sandboxed iframe without top navigation: message to the parent, link shown, top stays", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  const embedOrigin = appUrl.replace("127.0.0.1", "localhost");
  // No allow-top-navigation*: the frame may never move the top window; the embedder reacts to the message.
  // (Playwright's own script evaluations count as user activation, so `...-by-user-activation` cannot
  // be tested for the no-click case here.)
  const sandbox = "allow-scripts allow-same-origin allow-forms allow-downloads";
  const { session, frame } = await embedAndConnect(t, page, embedOrigin, "Sandboxed Traders", sandbox);

  await frame.getByRole("heading", { name: "Connected: Sandboxed Traders" }).waitFor();
  await page.waitForFunction(() =>
    (window as unknown as { setupMessages: Array<{ status?: string }> }).setupMessages.some(
      (m) => m.status === "completed",
    ),
  );
  const messages = await page.evaluate(
    () => (window as unknown as { setupMessages: unknown[] }).setupMessages,
  );
  assert.deepEqual(messages, [
    {
      type: "ledger-bridge.setup",
      authSessionId: session.id,
      status: "completed",
      redirectTo: `${appUrl}/return?authSessionId=${session.id}&status=completed`,
    },
  ]);
  // The automatic move of the top window is refused by the sandbox; the page offers the link anyway.
  const continueLink = frame.getByRole("link", { name: "Continue" });
  await continueLink.waitFor();
  assert.equal(await continueLink.getAttribute("target"), "_top");
  assert.equal(
    await continueLink.getAttribute("href"),
    `${appUrl}/return?authSessionId=${session.id}&status=completed`,
  );
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(new URL(page.url()).pathname, "/embed");
  assert.equal((await statusOf(session)).body.state, "completed");
});

test("without JavaScript, the Cancel form posts and is redirected (303)", async () => {
  const withRedirect = await createSession(await createEndUser("Form Post Co"), {
    redirectUrl: `${appUrl}/return`,
  });
  const cancelUrl = `${sys.url}/setup/${withRedirect.id}/cancel?clientSecret=${encodeURIComponent(withRedirect.clientSecret)}`;
  const posted = await fetch(cancelUrl, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "",
  });
  assert.equal(posted.status, 303);
  assert.equal(
    posted.headers.get("location"),
    `${appUrl}/return?authSessionId=${withRedirect.id}&status=canceled`,
  );
  assert.equal(posted.headers.get("cache-control"), "no-store");

  const noRedirect = await createSession(await createEndUser("Form Post Two"));
  const pageUrl = `/setup/${noRedirect.id}?clientSecret=${encodeURIComponent(noRedirect.clientSecret)}`;
  const second = await fetch(`${sys.url}${pageUrl.replace("?", "/cancel?")}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "",
  });
  assert.equal(second.status, 303);
  assert.equal(second.headers.get("location"), pageUrl);
  const page = await fetch(`${sys.url}${pageUrl}`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /"state":"canceled"/);
  // JSON callers get JSON; a second cancel reports the state as it is.
  const again = await fetch(`${sys.url}${pageUrl.replace("?", "/cancel?")}`, { method: "POST" });
  assert.deepEqual(await again.json(), { state: "canceled", redirectTo: null });
});

test("unusable links: invalid secret 404, superseded 410, expired 410", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  const endUserId = await createEndUser("Old Links Ltd");
  const first = await createSession(endUserId);

  // Invalid: wrong secret, unknown id, no secret.
  const wrong = await page.goto(`${sys.url}/setup/${first.id}?clientSecret=as_secret_wrong`);
  assert.equal(wrong?.status(), 404);
  await page.getByRole("heading", { name: "This setup link is not valid" }).waitFor();
  assert.equal(await page.locator("#password").count(), 0);
  assert.equal((await fetch(`${sys.url}/setup/${first.id}`)).status, 404);
  assert.equal((await fetch(`${sys.url}/setup/authsess_nope?clientSecret=x`)).status, 404);
  const wrongStatus = await fetch(`${sys.url}/setup/${first.id}/status?clientSecret=as_secret_wrong`);
  assert.equal(wrongStatus.status, 404);
  assert.deepEqual(await wrongStatus.json(), {
    state: "invalid",
    connectionStatus: null,
    companyName: null,
    redirectTo: null,
  });
  const wrongCancel = await fetch(`${sys.url}/setup/${first.id}/cancel?clientSecret=as_secret_wrong`, {
    method: "POST",
  });
  assert.equal(wrongCancel.status, 404);
  assert.equal((await statusOf(first)).body.state, "waiting");

  // Superseded: a second link for the same end user replaces the first.
  const second = await createSession(endUserId, { linkExpiryMins: 15 });
  const superseded = await page.goto(first.authFlowUrl);
  assert.equal(superseded?.status(), 410);
  await page.getByRole("heading", { name: "A newer setup link was created" }).waitFor();
  assert.equal(await page.locator("#password").count(), 0);
  const supersededQwc = await fetch(
    `${sys.url}/setup/${first.id}/qwc?clientSecret=${encodeURIComponent(first.clientSecret)}`,
  );
  assert.equal(supersededQwc.status, 410);
  assert.equal((await page.goto(second.authFlowUrl))?.status(), 200);

  // Expired: 15-minute link, 16 minutes later (the service's clock).
  assert.ok(sys.fakeClock);
  await sys.fakeClock.advance(16 * 60_000);
  const expired = await page.goto(second.authFlowUrl);
  assert.equal(expired?.status(), 410);
  assertStrictCsp(expired?.headers()["content-security-policy"] ?? "");
  await page.getByRole("heading", { name: "This setup link has expired" }).waitFor();
  await page.getByText("Ask System test for a new link.").waitFor();
  assert.equal(await page.locator("#password").count(), 0);
  assert.deepEqual(await statusOf(second), {
    code: 410,
    body: { state: "expired", connectionStatus: null, companyName: null, redirectTo: null },
  });
});

test("simulator mode: any end user finishes setup with a simulated company file, then the first call runs", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  // The service in simulator mode (SIMULATOR=on), with its own store.
  const simulated = await startSystem(t, { simulator: true, config: { CONNECTOR_HOLD_MS: "300" } });
  const key = simulated.project.keys.secretTest;
  const created = await simulated.call("POST", "/v1/end-users", {
    key,
    body: { companyName: "Newcomer Books", sourceId: "newcomer-1" },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const endUserId = ((await created.json()) as { id: string }).id;
  const sessionResponse = await simulated.call("POST", "/v1/auth-sessions", {
    key,
    body: {
      publishableKey: simulated.project.keys.publishableTest,
      endUserId,
      redirectUrl: `${appUrl}/return?from=simulator`,
    },
  });
  assert.equal(sessionResponse.status, 201, await sessionResponse.clone().text());
  const session = (await sessionResponse.json()) as Session;

  await page.goto(session.authFlowUrl);
  await page.getByRole("heading", { name: /simulator mode/ }).waitFor();
  await page.getByRole("button", { name: "Use a simulated company file" }).click();
  await page.waitForURL((url) => url.pathname === "/return", { timeout: 30_000 });
  const returned = new URL(page.url());
  assert.equal(returned.searchParams.get("status"), "completed");
  assert.equal(returned.searchParams.get("authSessionId"), session.id);
  assert.equal(returned.searchParams.get("from"), "simulator");

  // The first call runs against the simulated company file, named after the end user's company.
  const health = await simulated.call("GET", "/v1/ledger-desktop/health-check", { key, endUserId });
  assert.equal(health.status, 200, await health.clone().text());
  const body = (await health.json()) as { ledger: { companyName: string } };
  assert.equal(body.ledger.companyName, "Newcomer Books");
  const customers = await simulated.call("POST", `/v1/end-users/${endUserId}/passthrough/ledger_desktop`, {
    key,
    body: "<CustomerQueryRq><MaxReturned>2</MaxReturned></CustomerQueryRq>",
  });
  assert.equal(customers.status, 200, await customers.clone().text());
  assert.match(await customers.text(), /<CustomerRet>/);
});

test("without simulator mode the page offers no simulated company file, and the route does not exist", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  const session = await createSession(await createEndUser("Real Books Only"));
  await page.goto(session.authFlowUrl);
  await page.getByRole("heading", { name: /Download the connection file/ }).waitFor();
  assert.equal(await page.locator("#use-simulator").count(), 0);
  assert.equal(await page.getByText(/simulator mode/i).count(), 0);
  const response = await fetch(
    `${sys.url}/setup/${session.id}/simulate?clientSecret=${encodeURIComponent(session.clientSecret)}`,
    { method: "POST" },
  );
  assert.equal(response.status, 404);
  assert.equal((await statusOf(session)).body.state, "waiting", "nothing was attached");
});
