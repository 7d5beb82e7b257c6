import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { startSystem, type ConnectedEndUser, type System } from "../../../src/testing/system.ts";
import { watchApplication } from "../../../src/testing/application-watch.ts";
import { startWebhookReceiver } from "../../../src/testing/webhook-receiver.ts";
import { E2E_CONFIG, bringOnline, eventually } from "../../../test/e2e/helpers.ts";
import { LedgerBridge, LedgerBridgeError, WebhookVerificationError, verifyWebhook } from "../src/index.ts";
import { headerOf, startDroppingProxy } from "./dropping-proxy.ts";

/**
 * The typed client against a real service and simulated end user (no mocks): the service, its
 * connector endpoint, a simulated Web Connector and company file, on loopback.
 */
const CONFIG = { webhooks: true, config: { ...E2E_CONFIG.config, WEBHOOK_ALLOW_LOOPBACK: "on" } };

/**
 * One system and one connected end user for the tests of this file (each test uses its own names
 * and records), and every request document the simulated application received, watched from its
 * first session on.
 */
const applicationSaw: string[] = [];
let shared: Promise<{ sys: System; eu: ConnectedEndUser }> | undefined;
after(async () => (await shared)?.sys.close());

async function connected(): Promise<{ sys: System; eu: ConnectedEndUser }> {
  shared ??= (async () => {
    const sys = await startSystem(null, CONFIG);
    watchApplication(sys, (xml) => void applicationSaw.push(xml));
    const eu = await sys.connectEndUser({ companyName: "Client Co" });
    await bringOnline(sys, eu);
    return { sys, eu };
  })();
  return shared;
}

/** How many request documents carried `needle`. */
const sawTimes = (needle: string): number => applicationSaw.filter((xml) => xml.includes(needle)).length;

/** The real global fetch, counting the calls that went out. */
function countingFetch(): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: (input, init) => {
      urls.push(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
      return fetch(input, init);
    },
  };
}

test("a typed create whose answer is lost is retried with the same Idempotency-Key and reaches the application once", async (t) => {
  const { sys, eu } = await connected();
  const proxy = await startDroppingProxy(sys.url, (line) =>
    line.startsWith("POST /v1/ledger-desktop/invoices "),
  );
  t.after(() => proxy.close());
  const client = new LedgerBridge({
    apiKey: eu.key,
    baseUrl: proxy.url,
    endUserId: eu.endUserId,
    retryDelayMs: 10,
  });

  const [customer] = (await client.ledger.customers.list({ limit: 1 })).data;
  const [item] = (await client.ledger.serviceItems.list({ limit: 1 })).data;
  assert.ok(customer?.id && item?.id, "the sample company file has a customer and a service item");
  const invoice = await client.ledger.invoices.create({
    customerId: customer.id,
    memo: "Lost answer",
    lines: [{ itemId: item.id, quantity: 2, rate: "12.50" }],
  });

  assert.equal(proxy.dropped, 1, "the first answer was lost");
  const posts = proxy.heads.filter((h) => h.startsWith("POST /v1/ledger-desktop/invoices "));
  assert.equal(posts.length, 2, "sent twice");
  const keys = posts.map((h) => headerOf(h, "idempotency-key"));
  assert.ok(keys[0]);
  assert.equal(keys[1], keys[0], "one key for the logical write, reused on the retry");
  assert.equal(sawTimes("<Memo>Lost answer</Memo>"), 1, "the application received the invoice exactly once");
  assert.equal(invoice.objectType, "ledger_invoice");
  assert.equal(invoice.memo, "Lost answer");
  assert.equal(invoice.customer?.id, customer.id);
  const read = await client.ledger.invoices.retrieve(invoice.id ?? assert.fail("an id"));
  assert.equal(read.id, invoice.id);
});

test("a lost answer with no retries left is a CONNECTION_ERROR; sent again with its key, the write is replayed", async (t) => {
  const { sys, eu } = await connected();
  // The first answer of each kind is lost.
  const lost = new Set<string>();
  const proxy = await startDroppingProxy(
    sys.url,
    (line) => {
      const kind = line.split("?")[0] ?? line;
      if (lost.has(kind) || !/^(POST|GET) \/v1\/ledger-desktop\/customers/.test(kind)) return false;
      lost.add(kind);
      return true;
    },
    2,
  );
  t.after(() => proxy.close());
  const client = new LedgerBridge({
    apiKey: eu.key,
    baseUrl: proxy.url,
    endUserId: eu.endUserId,
    retryDelayMs: 10,
  });
  // A read is sent again by itself.
  const page = await client.ledger.customers.list({ limit: 2 });
  assert.equal(page.data.length, 2);
  assert.equal(proxy.dropped, 1);

  const once = { idempotencyKey: "client-test-customer-1", maxRetries: 0 };
  const lostWrite = await client.ledger.customers
    .create({ name: "Lost Once" }, once)
    .catch((e: unknown) => e);
  assert.ok(lostWrite instanceof LedgerBridgeError);
  assert.equal(lostWrite.code, "CONNECTION_ERROR");
  assert.equal(lostWrite.httpStatus, null);
  assert.equal(proxy.dropped, 2);
  const replayed = await client.ledger.customers.create({ name: "Lost Once" }, once);
  assert.equal(replayed.name, "Lost Once");
  assert.equal(sawTimes("<Name>Lost Once</Name>"), 1, "applied once");
});

test("auto-pagination follows the cursor over 3 pages", async () => {
  const { eu, sys } = await connected();
  const counting = countingFetch();
  const client = new LedgerBridge({
    apiKey: eu.key,
    baseUrl: sys.url,
    endUserId: eu.endUserId,
    fetch: counting.fetch,
  });
  const all = await client.ledger.invoices.list({ limit: 150 });
  assert.equal(all.hasMore, false);
  const total = all.data.length;
  assert.ok(total >= 3, `the sample file has ${total} invoices`);
  const limit = Math.max(1, Math.floor(total / 3));
  counting.urls.length = 0;

  const seen: string[] = [];
  for await (const invoice of client.ledger.invoices.list({ limit })) {
    assert.equal(invoice.objectType, "ledger_invoice");
    seen.push(invoice.id ?? "");
  }
  const pages = counting.urls.length;
  assert.ok(pages >= 3, `${pages} pages`);
  assert.equal(pages, Math.ceil(total / limit));
  assert.ok(counting.urls.slice(1).every((url) => new URL(url).searchParams.has("cursor")));
  assert.deepEqual([...seen].sort(), all.data.map((i) => i.id ?? "").sort(), "every invoice once");

  // Awaited, the same call is its first page.
  const first = await client.ledger.invoices.list({ limit });
  assert.equal(first.data.length, limit);
  assert.equal(first.hasMore, true);
});

test("errors are typed by code, with type, param, status and request id; a refusal is not retried", async () => {
  const { eu, sys } = await connected();
  const counting = countingFetch();
  const client = new LedgerBridge({
    apiKey: eu.key,
    baseUrl: sys.url,
    endUserId: eu.endUserId,
    fetch: counting.fetch,
  });

  const missing = await client.ledger.invoices.retrieve("FFFF-1700000000").catch((e: unknown) => e);
  assert.ok(missing instanceof LedgerBridgeError);
  assert.equal(missing.code, "LEDGER_OBJECT_NOT_FOUND");
  assert.equal(missing.httpStatus, 404);
  assert.match(missing.requestId ?? "", /^req_/);
  assert.equal(missing.retryable, false);

  counting.urls.length = 0;
  const invalid = await client.ledger.invoices.list({ transactionDateFrom: "2024-02-30" }).then(
    () => assert.fail("refused"),
    (e: unknown) => e,
  );
  assert.ok(invalid instanceof LedgerBridgeError);
  if (invalid.code === "INVALID_PARAMETER") {
    assert.equal(invalid.type, "INVALID_REQUEST_ERROR");
    assert.equal(invalid.param, "transactionDateFrom");
    assert.equal(invalid.httpStatus, 400);
    assert.equal(invalid.outcome, "not_applied");
    assert.match(invalid.requestId ?? "", /^call_/);
  } else assert.fail(`code ${invalid.code}`);
  assert.equal(counting.urls.length, 1, "Svc-Should-Retry: false is not retried");

  // A missing end user is the service's refusal too, before anything is queued.
  const noEndUser = new LedgerBridge({ apiKey: eu.key, baseUrl: sys.url });
  await assert.rejects(noEndUser.ledger.healthCheck(), { code: "END_USER_ID_MISSING", httpStatus: 400 });
  // … and the end user can be given per call instead of per client.
  const health = await noEndUser.ledger.healthCheck({ endUserId: eu.endUserId });
  assert.equal(health.status, "ok");
});

test("async: respond-async answers 202 with the Request, the client waits on it and returns the typed result", async () => {
  const { eu, sys } = await connected();
  const client = new LedgerBridge({ apiKey: eu.key, baseUrl: sys.url });
  const scoped = client.withEndUser(eu.endUserId);
  const accepted: string[] = [];
  const customer = await scoped.ledger.customers.create(
    { name: "Async Customer" },
    { async: { onAccepted: (request) => accepted.push(request.id) } },
  );
  assert.equal(customer.name, "Async Customer");
  assert.equal(customer.objectType, "ledger_customer");
  assert.equal(accepted.length, 1);
  const request = (await client.requests.retrieve(accepted[0] ?? "")) as { mode: string; status: string };
  assert.equal(request.mode, "async");
  assert.equal(request.status, "succeeded");
  // An async call that fails throws the Request's error.
  await assert.rejects(
    scoped.ledger.customers.create({ name: "Async Customer" }, { async: true }),
    (error: unknown) => error instanceof LedgerBridgeError && error.code === "LEDGER_DUPLICATE_NAME",
  );
});

test("async: a write whose answer was lost (outcome_unknown) ends in LEDGER_WRITE_OUTCOME_UNKNOWN after one look, never polled again", async (t) => {
  // Own system: the connector faults below must not reach the shared end user's other tests.
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Unknown Outcome Co" });
  await bringOnline(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  // Every look at the Request, counted; a client that keeps polling fails here instead of looping.
  const looks: string[] = [];
  const guarded: typeof fetch = (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url.includes("/v1/requests/")) looks.push(url);
    if (looks.length > 10) return Promise.reject(new Error(`polled ${looks.length} times`));
    return fetch(input, init);
  };
  const client = new LedgerBridge({
    apiKey: eu.key,
    baseUrl: sys.url,
    endUserId: eu.endUserId,
    fetch: guarded,
    retryDelayMs: 10,
  });
  // The application applies the write, the answer is lost; at the next check-in the service learns
  // it (outcome_unknown) and asks for the stored result, a read the connector then loses too: the
  // Request stays outcome_unknown.
  eu.connector.setFault({ kind: "lose_answer_after_write" });
  const accepted: string[] = [];
  const pending = client.ledger.customers
    .create({ name: "Maybe Applied" }, { async: { onAccepted: (r) => accepted.push(r.id) } })
    .then(
      () => assert.fail("an outcome_unknown write is not a success"),
      (e: unknown) => e,
    );
  await eventually("the application applied the write", async () => file.count("Customer") === before + 1);
  eu.connector.setFault({ kind: "crash_on_hand_over", match: "read" });
  void eu.connector.checkInNow();
  const error = await pending;
  assert.ok(error instanceof LedgerBridgeError, String(error));
  assert.equal(error.code, "LEDGER_WRITE_OUTCOME_UNKNOWN", error.message);
  assert.equal(error.httpStatus, 502);
  assert.equal(error.retryable, false);
  assert.equal(error.outcome, "unknown");
  assert.equal(error.requestId, accepted[0]);
  assert.ok(looks.length <= 3, `looked ${looks.length} times: ${looks.join(", ")}`);
  const request = (await client.requests.retrieve(accepted[0] ?? "")) as { status: string };
  assert.equal(request.status, "outcome_unknown");
  assert.equal(file.count("Customer"), before + 1, "applied once, never resent");
});

test("platform namespaces and the raw operations: end users, requests (auto-paginated), passthrough, batch", async () => {
  const { eu, sys } = await connected();
  const client = new LedgerBridge({ apiKey: eu.key, baseUrl: sys.url, endUserId: eu.endUserId });
  const endUser = (await client.endUsers.retrieve(eu.endUserId)) as { id: string; objectType: string };
  assert.equal(endUser.id, eu.endUserId);
  assert.equal(endUser.objectType, "end_user");

  const raw = (await client.endUsers.passthrough(eu.endUserId, "ledger_desktop", {
    xml: "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>",
  })) as { xml?: string };
  assert.match(raw.xml ?? "", /<CustomerQueryRs /);

  const batch = await client.ledger.batch({
    requests: [
      { operationId: "ledger.customers.list", query: { limit: 1 } },
      { operationId: "ledger.invoices.retrieve", pathParams: { id: "FFFF-1700000000" } },
    ],
    onError: "continueOnError",
  });
  assert.deepEqual(
    batch.results.map((r) => [r.operationId, r.status]),
    [
      ["ledger.customers.list", "succeeded"],
      ["ledger.invoices.retrieve", "failed"],
    ],
  );

  // Requests are a cursor list too: every one of this end user's, 2 to a page.
  for (let i = 0; i < 3; i++) await client.ledger.customers.list({ limit: 1 });
  const ids: string[] = [];
  for await (const request of client.requests.list({ endUserId: eu.endUserId, limit: 2 })) {
    ids.push((request as { id: string }).id);
  }
  const firstPage = (await client.requests.list({ endUserId: eu.endUserId, limit: 100 })) as {
    data: unknown[];
  };
  assert.ok(ids.length > 2);
  assert.equal(ids.length, firstPage.data.length);
  assert.equal(new Set(ids).size, ids.length);
});

test("the mirror (issue 26): set and read through client.endUsers.mirror; a typed list with Svc-Max-Staleness-Seconds says source: mirror, without it source: live", async (t) => {
  const sys = await startSystem(t, { ...E2E_CONFIG, mirror: true });
  const clock = sys.fakeClock;
  assert.ok(clock);
  const eu = await sys.connectEndUser({ companyName: "Client Mirror Co", application: { clock } });
  await bringOnline(sys, eu);
  const client = new LedgerBridge({ apiKey: eu.key, baseUrl: sys.url, endUserId: eu.endUserId });
  const set = await client.endUsers.mirror.update(eu.endUserId, { resources: ["customers"] });
  assert.deepEqual(
    set.resources.map((group) => [group.resource, group.state]),
    [["customers", "filling"]],
  );
  for (const started = Date.now(); ;) {
    const mirror = await client.endUsers.mirror.retrieve(eu.endUserId);
    if (mirror.resources[0]?.state === "ready") break;
    assert.ok(Date.now() - started < 30_000, `never ready: ${JSON.stringify(mirror)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const mirrored = await client.ledger.customers.list(
    { limit: 2 },
    { headers: { "Svc-Max-Staleness-Seconds": "3600" } },
  );
  assert.equal(mirrored.source, "mirror");
  assert.equal(mirrored.data.length, 2);
  const live = await client.ledger.customers.list({ limit: 2 });
  assert.equal(live.source, "live");
  assert.deepEqual(mirrored.data, live.data);
  const off = await client.endUsers.mirror.update(eu.endUserId, { resources: [] });
  assert.deepEqual(off.resources, []);
});

test("webhooks: a real delivery verifies; a tampered one, a wrong secret and a stale timestamp are refused", async (t) => {
  const { eu, sys } = await connected();
  const receiver = await startWebhookReceiver(t);
  const client = new LedgerBridge({ apiKey: eu.key, baseUrl: sys.url, endUserId: eu.endUserId });
  const endpoint = (await client.webhookEndpoints.create({
    url: receiver.url,
    eventTypes: ["request.*"],
  })) as { id: string; secret: string };
  const accepted: string[] = [];
  await client.ledger.customers.list({ limit: 1 }, { async: { onAccepted: (r) => accepted.push(r.id) } });
  await receiver.waitFor("the request's event", (r) => r.some((w) => w.event.data.id === accepted[0]));
  const delivery = receiver.received.find((w) => w.event.data.id === accepted[0]);
  assert.ok(delivery);

  const event = verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
  // The official Standard Webhooks package agrees.
  new Webhook(endpoint.secret).verify(delivery.body, {
    "webhook-id": delivery.id,
    "webhook-timestamp": delivery.timestamp,
    "webhook-signature": delivery.signature,
  });
  assert.equal(event.type, "request.succeeded");
  assert.equal(event.id, delivery.id);
  assert.equal(event.data.id, accepted[0]);
  // The new and the previous secret during a rotation: any one that signed is enough.
  verifyWebhook(delivery.body, delivery.headers, [
    "whsec_" + Buffer.alloc(32, 1).toString("base64"),
    endpoint.secret,
  ]);

  const tampered = delivery.body.replace("request.succeeded", "request.failed");
  assert.notEqual(tampered, delivery.body);
  assert.throws(() => verifyWebhook(tampered, delivery.headers, endpoint.secret), WebhookVerificationError);
  assert.throws(
    () => verifyWebhook(delivery.body, delivery.headers, "whsec_" + Buffer.alloc(32, 7).toString("base64")),
    WebhookVerificationError,
  );
  const sentAt = Number(delivery.timestamp) * 1000;
  assert.throws(
    () => verifyWebhook(delivery.body, delivery.headers, endpoint.secret, { now: () => sentAt + 301_000 }),
    /too old/,
  );
});

test("a 429 is retried after its Retry-After, as Svc-Should-Retry says", async (t) => {
  const sys = await startSystem(t, { config: { RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_MS: "1000" } });
  const waits: number[] = [];
  const counting = countingFetch();
  const client = new LedgerBridge({
    apiKey: sys.project.keys.secretLive,
    baseUrl: sys.url,
    fetch: counting.fetch,
    maxRetries: 3,
    sleep: (ms) => {
      waits.push(ms);
      return new Promise((resolve) => setTimeout(resolve, ms));
    },
  });
  for (let i = 0; i < 3; i++) await client.endUsers.list();
  assert.ok(counting.urls.length > 3, "at least one call was refused and sent again");
  assert.ok(waits.length >= 1);
  // Each wait is the answer's Retry-After (whole seconds), not the client's own backoff (500 ms).
  for (const ms of waits) assert.ok(ms >= 1000 && ms % 1000 === 0, `waited ${ms} ms`);
  // With no retries left the typed error comes out.
  const impatient = new LedgerBridge({
    apiKey: sys.project.keys.secretLive,
    baseUrl: sys.url,
    maxRetries: 0,
  });
  const outcomes = await Promise.allSettled([
    impatient.endUsers.list(),
    impatient.endUsers.list(),
    impatient.endUsers.list(),
  ]);
  const refused = outcomes.find((o) => o.status === "rejected");
  assert.ok(refused?.status === "rejected");
  assert.ok(refused.reason instanceof LedgerBridgeError);
  assert.equal(refused.reason.code, "RATE_LIMITED");
  assert.equal(refused.reason.httpStatus, 429);
});
