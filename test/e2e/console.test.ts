import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test, type TestContext } from "node:test";
import type { Browser, Page } from "playwright-core";
import { createProject } from "../../src/tenancy/api-keys.ts";
import { inCi } from "../../src/testing/references.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import { startWebhookReceiver } from "../../src/testing/webhook-receiver.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  eventually,
  json,
  passthroughPath,
  stopConnector,
} from "./helpers.ts";
import { launchChromium } from "./chromium.ts";
import { WAITING_CONFIG, checkInsEvery, queueRead, readRequest } from "./waiting-helpers.ts";
import { endpointFor, type DeliveryResource } from "./webhook-helpers.ts";

/**
 * The operator console at `/console` (decision 0026) in real headless Chromium against the real
 * service and simulated connectors on loopback. The page reads everything through the public API
 * with the key typed into it. With `CONSOLE_SCREENSHOTS=1` the tests write the README's screenshots
 * to docs/console/.
 */
const SCREENSHOTS =
  process.env.CONSOLE_SCREENSHOTS === "1" ? join(import.meta.dirname, "../../docs/console") : null;
const MINUTE = 60_000;

let browser: Browser | undefined;

before(async () => {
  browser = await launchChromium();
  if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
});

after(async () => browser?.close());

interface Opened {
  page: Page;
  /** Content Security Policy violations and page errors seen so far. */
  problems: string[];
}

async function newPage(t: TestContext): Promise<Opened | null> {
  if (!browser) {
    assert.ok(!inCi(), "chromium is not on PATH; CI must run the browser tests (apt-get install chromium)");
    t.skip("chromium is not on PATH (apt-get install chromium)");
    return null;
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  t.after(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  page.on("console", (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  return { page, problems };
}

async function signIn(page: Page, sys: System, key: string): Promise<void> {
  await page.goto(`${sys.url}/console`);
  await page.getByLabel("Secret key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "End users & connections" }).waitFor();
}

/** A link of the console's navigation. */
const nav = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Console pages" }).getByRole("link", { name, exact: true });

async function screenshot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** What the page shows for a timestamp. */
const shown = (iso: string): string => `${iso.replace("T", " ").slice(0, 19)} UTC`;

test("the page: strict CSP, never framed, no store; a bad key is refused; the key is kept nowhere", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page, problems } = opened;
  const sys = await startSystem(t, E2E_CONFIG);

  const response = await page.goto(`${sys.url}/console`);
  assert.equal(response?.status(), 200);
  const headers = response?.headers() ?? {};
  const csp = headers["content-security-policy"] ?? "";
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.equal(headers["x-frame-options"], "DENY");
  assert.equal(headers["cache-control"], "no-store");
  const slash = await fetch(`${sys.url}/console/`, { redirect: "manual" });
  assert.equal(slash.status, 301);
  assert.equal(slash.headers.get("location"), "/console");
  for (const asset of ["/console/console.js", "/console/console.css"]) {
    const fetched = await fetch(`${sys.url}${asset}`);
    assert.equal(fetched.status, 200, asset);
    assert.equal(fetched.headers.get("x-content-type-options"), "nosniff");
  }

  // A wrong key: the API's answer, on the page; still signed out.
  await page.getByLabel("Secret key").fill(`sk_live_${"A".repeat(32)}`);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "API_KEY_INVALID" }).waitFor();
  assert.equal(await page.getByRole("navigation", { name: "Console pages" }).isVisible(), false);
  // Not a secret key at all.
  await page.getByLabel("Secret key").fill(sys.project.keys.publishableLive);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "begins sk_live_ or sk_test_" }).waitFor();

  await page.getByLabel("Secret key").fill(sys.project.keys.secretLive);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "End users & connections" }).waitFor();
  await page.getByText("live mode").waitFor();
  const kept = await page.evaluate(() => ({
    url: location.href,
    cookie: document.cookie,
    local: localStorage.length,
    session: sessionStorage.length,
    input: (document.getElementById("secret-key") as HTMLInputElement).value,
  }));
  assert.ok(!kept.url.includes(sys.project.keys.secretLive));
  assert.deepEqual({ ...kept, url: "" }, { url: "", cookie: "", local: 0, session: 0, input: "" });

  // Keyboard: the pages are links, reached with Tab and followed with Enter.
  await nav(page, "Keys").focus();
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Keys" }).waitFor();

  // Reloading forgets the key.
  await page.reload();
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  assert.equal(await page.getByRole("heading", { name: "Keys" }).count(), 0);
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});

test("an offline end user's waiting request shows its reason and expected check-in, then completes on the page", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page, problems } = opened;
  const sys = await startSystem(t, WAITING_CONFIG);
  const clock = sys.fakeClock;
  assert.ok(clock);
  const eu = await sys.connectEndUser({ companyName: "Schedule Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  // A schedule of its own: a check-in every five minutes, four times.
  await checkInsEvery(sys, eu, 5 * MINUTE, 4);
  await clock.advance(MINUTE);
  const id = await queueRead(sys, eu);
  const waiting = await readRequest(sys, id);
  assert.ok(waiting.waitingReason, "the request waits for a reason");
  const expectedAt = waiting.diagnosis?.connector.expectedCheckInAt;
  assert.ok(expectedAt, "an expected check-in");
  const connection = (
    await json<{ integrationConnections: { status: string; expectedCheckInAt: string | null }[] }>(
      await sys.call("GET", `/v1/end-users/${eu.endUserId}`),
    )
  ).integrationConnections[0];
  assert.ok(connection);

  await signIn(page, sys, eu.key);
  // End users & connections: status, expected check-in with its basis.
  const row = page.locator(`tr[data-end-user-id="${eu.endUserId}"]`);
  await row.getByText("Schedule Co", { exact: true }).waitFor();
  assert.equal(await row.locator(".status").getAttribute("data-status"), connection.status);
  const rowExpected = (await row.locator(".expected-check-in").textContent()) ?? "";
  assert.ok(connection.expectedCheckInAt);
  assert.ok(rowExpected.includes(shown(connection.expectedCheckInAt)), rowExpected);
  assert.match(rowExpected, /observed_schedule/);
  await screenshot(page, "end-users");

  // Requests: the list, filtered by status, then the request's page.
  await nav(page, "Requests").click();
  await page.getByLabel("Status").selectOption(waiting.status);
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL((url) => url.hash === `#/requests?status=${waiting.status}`);
  const listed = page.locator(`tr[data-request-id="${id}"]`);
  await listed.getByText(waiting.waitingReason).waitFor();
  await screenshot(page, "requests");
  await listed.getByRole("link", { name: id }).click();
  await page.getByRole("heading", { name: `Request ${id}` }).waitFor();
  assert.equal(await page.locator("#waiting-reason").textContent(), waiting.waitingReason);
  const pageExpected = (await page.locator("#expected-check-in").textContent()) ?? "";
  assert.ok(pageExpected.includes(shown(expectedAt)), pageExpected);
  assert.match(pageExpected, /confidence high/);
  assert.equal(await page.locator('.timeline [data-segment="queued"]').count(), 1);
  await screenshot(page, "request-waiting");

  // Two minutes later (the service's clock) the connector returns: the page follows the request to its end.
  await clock.advance(2 * MINUTE);
  void eu.connector.checkInNow();
  await page.locator('dd [data-status="succeeded"]').waitFor({ timeout: 60_000 });
  await page.locator('.timeline [data-segment="answered"]').first().waitFor();
  // The drawing: two minutes queued, then sent and answered.
  assert.match((await page.locator(".timeline-figure figcaption").textContent()) ?? "", /^Queued 2 min,/);
  assert.match(
    (await page.locator('.timeline [data-segment="queued"]').textContent()) ?? "",
    /queued · 2 min/,
  );
  // Where the time went (decision 0047): the bar's parts are the Request's timings.
  const timed = await json<{ timings: { queuedMs: number; connectorMs: number; ledgerMs: number } }>(
    await sys.call("GET", `/v1/requests/${id}`),
  );
  assert.ok(timed.timings.connectorMs >= 2 * MINUTE, "it waited two minutes for the connector");
  for (const [name, ms] of [
    ["connector", timed.timings.connectorMs],
    ["queue", timed.timings.queuedMs - timed.timings.connectorMs],
    ["ledger", timed.timings.ledgerMs],
    ["svc", 0],
  ] as const) {
    assert.equal(await page.locator(`#timings [data-timing="${name}"]`).getAttribute("data-ms"), String(ms));
  }
  await page.getByText("No diagnosis: the request did not wait or run long.").waitFor();
  assert.match(
    (await page.getByLabel("Result JSON").textContent()) ?? "",
    /"xml"|CustomerRet|CustomerQueryRs/,
  );
  await screenshot(page, "request-done");
  // Its XML: the message as handed over and the application's answer (secrets masked by the API).
  await page.getByText("The message sent to the application and its answer").click();
  const message = (await page.locator("#xml-message pre").textContent()) ?? "";
  assert.match(message, /<QBXMLMsgsRq onError="stopOnError">\n\s+<CustomerQueryRq>/);
  const answer = (await page.locator("#xml-answer pre").textContent()) ?? "";
  assert.match(answer, /<CustomerQueryRs statusCode="0"/);
  await page.locator("#xml-answer").scrollIntoViewIfNeeded();
  await screenshot(page, "request-xml");

  // The end user's page: the connection's status history and its 7-day availability strip.
  await nav(page, "End users").click();
  await page.getByRole("link", { name: "Schedule Co" }).click();
  await page.getByRole("heading", { name: "Status history" }).waitFor();
  const history = await json<{
    changes: { status: string }[];
    availability: { segments: { state: string }[] };
  }>(await sys.call("GET", `/v1/end-users/${eu.endUserId}/connection-history`));
  const bands = await page
    .locator("#availability-strip .band")
    .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-state")));
  assert.deepEqual(
    bands,
    history.availability.segments.map((segment) => segment.state),
  );
  assert.ok(bands.includes("online"), "it was online");
  const rows = page.locator("table tbody tr");
  assert.equal(await rows.count(), history.changes.length);
  assert.ok(history.changes.length >= 2, "it went online, and offline while away");
  assert.match((await page.locator("#availability-totals").textContent()) ?? "", /online: \d/);
  // The bands fill the strip, each as wide as its span lasted (set through the CSS object model).
  const widths = await page
    .locator("#availability-strip .band")
    .evaluateAll((nodes) => nodes.map((node) => node.getBoundingClientRect().width));
  const strip = await page.locator("#availability-strip").evaluate((node) => node.clientWidth);
  assert.ok(Math.abs(widths.reduce((a, b) => a + b, 0) - strip) <= 2, `${widths.join("+")} ≈ ${strip}`);
  assert.equal(await page.getByText("null", { exact: true }).count(), 0);
  await screenshot(page, "end-user");
  await stopConnector(sys, eu);
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});

test("a Request with a card number shows it masked everywhere on its page: input, result, XML (decision 0032)", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page, problems } = opened;
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Card Page Co" });
  await bringOnline(sys, eu);
  const card = "4111111111111111";
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: {
      name: "Card Page Holder",
      creditCard: { number: card, expirationMonth: 12, expirationYear: 2031 },
    },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const id = created.headers.get("svc-request-id");
  assert.ok(id);
  await signIn(page, sys, eu.key);
  await page.goto(`${sys.url}/console#/requests/${id}`);
  await page.getByRole("heading", { name: `Request ${id}` }).waitFor();
  await page.getByText("The message sent to the application and its answer").click();
  await page.locator("#xml-answer pre").waitFor();
  assert.match((await page.getByLabel("Result JSON").textContent()) ?? "", /"number": "•{12}1111"/);
  assert.match((await page.locator("#xml-message pre").textContent()) ?? "", /•{12}1111/);
  const everything = await page.content();
  assert.ok(
    !everything.includes(card) && !everything.includes(card.slice(0, 12)),
    "the page shows the number",
  );
  await stopConnector(sys, eu);
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});

test("webhooks: a failed delivery shows its attempts and is resent from the page", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page, problems } = opened;
  const sys = await startSystem(t, {
    webhooks: true,
    config: { ...E2E_CONFIG.config, WEBHOOK_ALLOW_LOOPBACK: "on" },
  });
  const clock = sys.fakeClock;
  assert.ok(clock);
  const receiver = await startWebhookReceiver(t);
  receiver.respond = () => ({ status: 500, body: "down" });
  const endpoint = await endpointFor(sys, receiver.url, { description: "Orders app" });
  const sent = await json<DeliveryResource>(
    await sys.call("POST", `/v1/webhook-endpoints/${endpoint.id}/test`, { body: {} }),
  );
  const deliveryOf = async (deliveryId: string): Promise<DeliveryResource | undefined> =>
    (
      await json<{ data: DeliveryResource[] }>(
        await sys.call("GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100`),
      )
    ).data.find((d) => d.id === deliveryId);
  // Eight failed attempts on the schedule, the clock moved to each.
  for (let attempt = 1; attempt <= 8; attempt++) {
    const d = await eventually(`attempt ${attempt}`, async () => {
      const found = await deliveryOf(sent.id);
      return found && found.attemptCount >= attempt ? found : null;
    });
    if (d.nextAttemptAt) await clock.advance(Date.parse(d.nextAttemptAt) - clock.now());
  }
  assert.equal((await deliveryOf(sent.id))?.status, "failed");
  receiver.respond = () => ({ status: 200, body: "ok" });

  await signIn(page, sys, sys.project.keys.secretLive);
  await nav(page, "Webhooks").click();
  await page.getByRole("link", { name: receiver.url }).waitFor();
  const failed = page.locator(`tr[data-delivery-id="${sent.id}"]`);
  assert.equal(await failed.locator(".status").getAttribute("data-status"), "failed");
  assert.equal(await failed.locator(".attempts li").count(), 8);
  assert.match((await failed.locator(".attempts li").first().textContent()) ?? "", /500/);
  await failed.getByRole("button", { name: `Resend delivery ${sent.id}` }).click();
  const result = page.locator("#resend-result");
  await result.filter({ hasText: /^Resent as whd_/ }).waitFor();
  const newId = /(whd_[0-9a-z]{26})/.exec((await result.textContent()) ?? "")?.[1];
  assert.ok(newId);
  await page.locator(`tr[data-delivery-id="${newId}"]`).waitFor();
  const resent = await eventually("the resent delivery succeeded", async () => {
    const found = await deliveryOf(newId);
    return found?.status === "succeeded" ? found : null;
  });
  assert.equal(resent.eventId, sent.eventId, "the same event, the same webhook-id");
  await nav(page, "Webhooks").click();
  await page.locator(`tr[data-delivery-id="${newId}"] [data-status="succeeded"]`).waitFor();
  await screenshot(page, "webhooks");
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});

test("keys: a new key's secret is shown once; revoking one on the page stops it at once", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page, problems } = opened;
  const sys = await startSystem(t, E2E_CONFIG);
  await signIn(page, sys, sys.project.keys.secretLive);
  await nav(page, "Keys").click();
  await page.getByRole("heading", { name: "Keys" }).waitFor();
  const rows = page.locator("tr[data-key-id]");
  assert.equal(await rows.count(), 2);
  const html = await page.content();
  for (const secret of [sys.project.keys.secretLive, sys.project.keys.publishableLive]) {
    assert.ok(!html.includes(secret), "no secret on the page");
  }
  // The signed-in key is marked and cannot be revoked from here.
  const own = rows.filter({ hasText: "this key" });
  assert.equal(await own.count(), 1);
  assert.equal(await own.getByRole("button").count(), 0);

  await page.getByLabel("Read-only (secret keys)").check();
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = (await page.locator("#new-secret").textContent()) ?? "";
  assert.match(secret, /^sk_live_[A-Za-z0-9]{32}$/);
  assert.equal(await rows.count(), 3);
  assert.equal((await sys.call("GET", "/v1/end-users", { key: secret })).status, 200);

  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: `Revoke key ending ${secret.slice(-4)}` }).click();
  await page
    .locator("#key-result")
    .filter({ hasText: `Revoked the key ending ${secret.slice(-4)}` })
    .waitFor();
  const revokedRow = rows.filter({ hasText: `…${secret.slice(-4)}` });
  assert.match((await revokedRow.locator(".revoked").textContent()) ?? "", /^revoked /);
  assert.equal((await sys.call("GET", "/v1/end-users", { key: secret })).status, 401);
  // The new key's secret is not shown again.
  await nav(page, "End users").click();
  await nav(page, "Keys").click();
  await page.getByRole("heading", { name: "Keys" }).waitFor();
  assert.ok(!(await page.content()).includes(secret));
  await screenshot(page, "keys");

  // A read-only key sees the keys and may not change them: the API's refusal, on the page.
  const readOnly = await json<{ secret: string }>(
    await sys.call("POST", "/v1/api-keys", { body: { readOnly: true } }),
  );
  await signIn(page, sys, readOnly.secret);
  await nav(page, "Keys").click();
  await page.getByRole("button", { name: "Create key" }).click();
  await page.locator("#key-result").filter({ hasText: "API_KEY_READ_ONLY" }).waitFor();
  assert.equal(await rows.count(), 4, "nothing was created");
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});

test("the end user's page shows the mirror per group and sets its groups (issue 26)", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page, problems } = opened;
  const sys = await startSystem(t, { ...E2E_CONFIG, mirror: true });
  const clock = sys.fakeClock;
  assert.ok(clock);
  const eu = await sys.connectEndUser({ companyName: "Mirror Page Co", application: { clock } });
  await bringOnline(sys, eu);
  type Group = {
    resource: string;
    state: string;
    records: number;
    asOf: string | null;
    lastChangeAppliedAt: string | null;
  };
  const mirror = async (): Promise<Group[]> =>
    (await json<{ resources: Group[] }>(await sys.call("GET", `/v1/end-users/${eu.endUserId}/mirror`)))
      .resources;

  await signIn(page, sys, eu.key);
  await page.goto(`${sys.url}/console#/end-users/${eu.endUserId}`);
  await page.getByRole("heading", { name: "Mirror", exact: true }).waitFor();
  await page.getByText("Not mirrored: every read goes to the application.").waitFor();
  const input = page.getByLabel("Mirrored groups (comma-separated)");
  const set = page.getByRole("button", { name: "Set mirrored groups" });

  // A group that cannot be mirrored: the API's refusal on the page, and nothing changes.
  await input.fill("customers, nonsense");
  await set.click();
  await page.locator("#mirror-result").filter({ hasText: "INVALID_PARAMETER" }).waitFor();
  assert.deepEqual(await mirror(), []);

  await input.fill("customers, invoices");
  await set.click();
  await page.locator("#mirror-result").filter({ hasText: "Mirroring customers, invoices." }).waitFor();
  const rows = page.locator("tr[data-mirror-resource]");
  assert.deepEqual(
    await rows.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-mirror-resource"))),
    ["customers", "invoices"],
  );
  // The page follows the fill until both groups are ready, and then shows what the API says.
  await page.locator('tr[data-mirror-resource] [data-status="ready"]').nth(1).waitFor({ timeout: 60_000 });
  const groups = await mirror();
  assert.ok(groups.every((group) => group.state === "ready"));
  for (const group of groups) {
    const row = page.locator(`tr[data-mirror-resource="${group.resource}"]`);
    assert.equal(await row.locator(".records").textContent(), String(group.records));
    assert.ok(group.asOf && group.lastChangeAppliedAt);
    assert.equal(await row.locator(".as-of").textContent(), shown(group.asOf));
    assert.ok(((await row.textContent()) ?? "").includes(shown(group.lastChangeAppliedAt)));
  }
  assert.ok(groups.every((group) => group.records > 0));
  await screenshot(page, "end-user-mirror");

  // Emptied: the mirror is off and its copy deleted.
  await input.fill("");
  await set.click();
  await page.locator("#mirror-result").filter({ hasText: "The mirror is off" }).waitFor();
  await page.getByText("Not mirrored: every read goes to the application.").waitFor();
  assert.deepEqual(await mirror(), []);
  await stopConnector(sys, eu);
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});

test("isolation: another project's end users, requests, endpoints and keys never appear", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page } = opened;
  const sys = await startSystem(t, { config: { ...E2E_CONFIG.config, WEBHOOK_ALLOW_LOOPBACK: "on" } });
  const ours = await sys.call("POST", "/v1/end-users", {
    body: { companyName: "Ours Ltd", sourceId: "ours-1" },
  });
  const oursId = (await json<{ id: string }>(ours)).id;

  const theirs = await createProject(sys.deps, { name: "Theirs" });
  const theirKey = theirs.keys.secretLive;
  const theirEndUser = await json<{ id: string }>(
    await sys.call("POST", "/v1/end-users", {
      key: theirKey,
      body: { companyName: "Theirs Secret Co", sourceId: "theirs-1" },
    }),
  );
  const theirEndpoint = await endpointFor(sys, "http://127.0.0.1:9/theirs-hook", {}, theirKey);
  const theirRequest = await sys.call("POST", passthroughPath(theirEndUser.id), {
    key: theirKey,
    body: READ,
    headers: { prefer: "respond-async" },
  });
  const theirRequestId = theirRequest.status === 202 ? (await json<{ id: string }>(theirRequest)).id : null;
  const theirKeys = (
    await json<{ data: { id: string }[] }>(await sys.call("GET", "/v1/api-keys", { key: theirKey }))
  ).data;
  const foreign = [
    theirEndUser.id,
    "Theirs Secret Co",
    theirEndpoint.id,
    "theirs-hook",
    ...theirKeys.map((key) => key.id),
    ...(theirRequestId ? [theirRequestId] : []),
  ];

  await signIn(page, sys, sys.project.keys.secretLive);
  await page.locator(`tr[data-end-user-id="${oursId}"]`).waitFor();
  const seen: string[] = [];
  seen.push(await page.content());
  for (const [link, heading] of [
    ["Requests", "Requests"],
    ["Webhooks", "Webhooks"],
    ["Keys", "Keys"],
  ] as const) {
    await nav(page, link).click();
    await page.getByRole("heading", { name: heading, exact: true }).waitFor();
    await page.waitForLoadState("networkidle");
    seen.push(await page.content());
  }
  for (const html of seen) {
    for (const value of foreign) assert.ok(!html.includes(value), `${value} does not appear`);
  }
  // Asked for by address, another project's request is missing as the API says.
  if (theirRequestId) {
    await page.goto(`${sys.url}/console#/requests/${theirRequestId}`);
    await page.getByLabel("Secret key").fill(sys.project.keys.secretLive);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "RESOURCE_MISSING" }).waitFor();
  }
  // So is another project's end user (its page reads its history too), asked for by address.
  await page.goto(`${sys.url}/console#/end-users/${theirEndUser.id}`);
  await page.reload(); // a new load: signed out, the address kept
  await page.getByLabel("Secret key", { exact: true }).fill(sys.project.keys.secretLive);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "RESOURCE_MISSING" }).waitFor();
  assert.ok(!(await page.content()).includes("Theirs Secret Co"));
});

test("the end user's page downloads a support bundle (issue 28)", async (t) => {
  const opened = await newPage(t);
  if (!opened) return;
  const { page, problems } = opened;
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Bundle Page Co" });
  await bringOnline(sys, eu);
  const read = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
  assert.equal(read.status, 200);
  const requestId = read.headers.get("svc-request-id");
  assert.ok(requestId);

  await signIn(page, sys, eu.key);
  await page.goto(`${sys.url}/console#/end-users/${eu.endUserId}`);
  await page.getByRole("heading", { name: "Support bundle", exact: true }).waitFor();
  await page.getByLabel("Window").selectOption("1h");
  const downloading = page.waitForEvent("download");
  await page.getByRole("button", { name: "Download support bundle" }).click();
  const download = await downloading;
  assert.equal(download.suggestedFilename(), `support-bundle-${eu.endUserId}.json`);
  const path = await download.path();
  const { readFile } = await import("node:fs/promises");
  const bundle = JSON.parse(await readFile(path, "utf8")) as {
    objectType: string;
    endUser: { id: string };
    requests: { request: { id: string } }[];
  };
  assert.equal(bundle.objectType, "support_bundle");
  assert.equal(bundle.endUser.id, eu.endUserId);
  assert.deepEqual(
    bundle.requests.map((r) => r.request.id),
    [requestId],
  );
  await page.locator("#bundle-result").filter({ hasText: "Downloaded: 1 requests" }).waitFor();
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});
