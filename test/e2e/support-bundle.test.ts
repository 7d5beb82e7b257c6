import assert from "node:assert/strict";
import { test } from "node:test";
import { createProject } from "../../src/tenancy/api-keys.ts";
import { startSystem } from "../../src/testing/system.ts";
import { startWebhookReceiver } from "../../src/testing/webhook-receiver.ts";
import { bringOnline, customerAdd, eventually, json, passthroughPath, READ } from "./helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";
import { SYSTEM_CONFIG, endpointFor, ofType, untilDispatchSettled } from "./webhook-helpers.ts";

/**
 * Support bundles (issue 28 item 1, decision 0049) through HTTP, the SOAP connector and the
 * simulated application: a write whose answer was lost and recovered, a card number in a typed
 * create, a read; the bundle holds them with their messages, answers, timelines, sessions and
 * webhook deliveries, and nothing of another end user, mode or project, and no card number.
 */
const CARD = "4111111111111111";
const CARD_PREFIX = CARD.slice(0, 12);

interface Bundle {
  objectType: string;
  bundleVersion: number;
  window: { since: string; until: string };
  endUser: { id: string };
  connection: {
    id: string;
    status: string;
    companyFile: { path: string | null; companyName: string | null; xmlVersion: string | null };
    checkIn: { lastCheckInAt: string | null; recentCheckIns: string[] };
    statusChanges: Array<{ status: string }>;
  } | null;
  requests: Array<{
    request: {
      id: string;
      endUserId: string;
      status: string;
      recovered: boolean;
      timeline: Array<{ status: string }>;
      error: unknown;
    };
    messages: { message: { xml: string | null }; answer: { xml: string | null }; input: { json: unknown } };
    sessionId: string | null;
  }>;
  sessions: Array<{ id: string; requestIds: string[]; ledgerAnsweredAt: string | null }>;
  webhookDeliveries: Array<{ eventType: string; requestId: string | null }>;
  truncated: { requestsLeftOut: number; note: string } | null;
}

test("a support bundle holds the end user's exchange, masked, and nothing of anyone else", async (t) => {
  const sys = await startSystem(t, SYSTEM_CONFIG);
  checkEveryAnswer(sys);
  const receiver = await startWebhookReceiver(t);
  await endpointFor(sys, receiver.url, {
    eventTypes: ["request.*", "connection.*"],
    includeSyncRequests: true,
  });
  const eu = await sys.connectEndUser({ companyName: "Bundle Co" });
  const other = await sys.connectEndUser({ companyName: "Neighbour Co", application: {} });
  await bringOnline(sys, eu);
  await bringOnline(sys, other);
  const as = { endUserId: eu.endUserId };

  // A card number in a typed create: it reaches the company file in full.
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    ...as,
    body: { name: "Card Holder", creditCard: { number: CARD, expirationMonth: 12, expirationYear: 2031 } },
  });
  assert.equal(created.status, 201, await created.clone().text());
  // A write whose answer is lost: outcome_unknown, recovered by the next session.
  eu.connector.setFault({ kind: "lose_answer_after_write" });
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  const lost = await sys.call("POST", passthroughPath(eu.endUserId), {
    body: customerAdd("Lost Answer Ltd"),
    headers: { prefer: "respond-async" },
  });
  const lostId = (await json<{ id: string }>(lost)).id;
  await eventually("applied", async () => file.count("Customer") === before + 1);
  void eu.connector.checkInNow();
  await eventually("the lost write resolved", async () => {
    const r = await json<{ status: string }>(await sys.call("GET", `/v1/requests/${lostId}`));
    return r.status === "succeeded";
  });
  const read = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
  assert.equal(read.status, 200);
  // The neighbour's write, which must not appear.
  const neighbour = await sys.call("POST", passthroughPath(other.endUserId), {
    body: customerAdd("Neighbour Secret Ltd"),
  });
  assert.equal(neighbour.status, 200);
  const neighbourId = neighbour.headers.get("svc-request-id");
  assert.ok(sys.dispatcher);
  await receiver.waitFor("the events", (r) => ofType(r, "request.outcome_resolved").length === 1);
  await untilDispatchSettled(sys.deps, sys.dispatcher);

  const response = await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle?since=1h`);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  assert.ok(!text.includes(CARD) && !text.includes(CARD_PREFIX), "no card number, whole or its prefix");
  assert.ok(
    !text.includes(other.endUserId) && !text.includes(other.connectionId),
    "nothing of the neighbour",
  );
  assert.ok(!text.includes("Neighbour Secret Ltd"));
  if (neighbourId) assert.ok(!text.includes(neighbourId));
  const bundle = JSON.parse(text) as Bundle;
  assert.equal(bundle.objectType, "support_bundle");
  assert.equal(bundle.bundleVersion, 1);
  assert.equal(bundle.endUser.id, eu.endUserId);
  assert.equal(bundle.truncated, null);
  assert.ok(bundle.connection);
  assert.equal(bundle.connection.id, eu.connectionId);
  assert.equal(bundle.connection.status, "online");
  assert.equal(bundle.connection.companyFile.path, eu.companyFilePath);
  assert.equal(bundle.connection.companyFile.companyName, "Bundle Co");
  assert.equal(bundle.connection.companyFile.xmlVersion, "16.0");
  assert.ok(bundle.connection.checkIn.lastCheckInAt);
  assert.ok(bundle.connection.statusChanges.some((c) => c.status === "online"));

  assert.equal(bundle.requests.length, 3, "the create, the lost write and the read");
  assert.ok(bundle.requests.every((r) => r.request.endUserId === eu.endUserId));
  const [card, recovered, query] = bundle.requests;
  assert.ok(card && recovered && query);
  assert.match(card.messages.message.xml ?? "", /<CreditCardNumber>•{12}1111<\/CreditCardNumber>/);
  assert.equal(recovered.request.id, lostId);
  assert.equal(recovered.request.recovered, true);
  assert.deepEqual(
    recovered.request.timeline.map((e) => e.status),
    ["queued", "sent", "outcome_unknown", "succeeded"],
  );
  assert.match(recovered.messages.message.xml ?? "", /Lost Answer Ltd/);
  assert.match(query.messages.answer.xml ?? "", /<CustomerQueryRs /);

  // Each sent Request names the session it was handed over in; the lost write's session differs
  // from its recovery's.
  const sessionIds = new Set(bundle.sessions.map((s) => s.id));
  for (const r of bundle.requests) {
    assert.ok(r.sessionId && sessionIds.has(r.sessionId), `${r.request.id} has its session`);
    const session = bundle.sessions.find((s) => s.id === r.sessionId);
    assert.ok(session?.requestIds.includes(r.request.id));
  }
  assert.notEqual(recovered.sessionId, query.sessionId, "the session that lost the answer ended");

  // The deliveries of its events, tied to its Requests.
  const types = bundle.webhookDeliveries.map((d) => d.eventType);
  assert.ok(
    types.includes("request.outcome_unknown") && types.includes("request.outcome_resolved"),
    types.join(", "),
  );
  assert.ok(types.includes("connection.setup_completed"), types.join(", "));
  const ids = new Set(bundle.requests.map((r) => r.request.id));
  assert.ok(bundle.webhookDeliveries.every((d) => d.requestId === null || ids.has(d.requestId)));

  // A window before any of it: no Requests.
  const early = await json<Bundle>(
    await sys.call(
      "GET",
      `/v1/end-users/${eu.endUserId}/support-bundle?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z`,
    ),
  );
  assert.equal(early.requests.length, 0);
  assert.equal(early.webhookDeliveries.length, 0);

  // Bad bounds: 400 naming the parameter.
  for (const [query, param] of [
    ["since=yesterday", "since"],
    ["until=2026-13-45T00:00:00Z", "until"],
    ["since=1h&until=2h", "since"],
    ["from=1h", "from"],
  ] as const) {
    const refused = await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle?${query}`);
    const body = await json<{ error: { code: string; param: string } }>(refused);
    assert.equal(refused.status, 400, query);
    assert.equal(body.error.param, param, query);
  }

  // Another mode's key, another project's key, a publishable key: the end user is not theirs.
  const elsewhere = await createProject(sys.deps, { name: "Elsewhere" });
  for (const key of [sys.project.keys.secretTest, elsewhere.keys.secretLive]) {
    const refused = await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle`, { key });
    assert.equal(refused.status, 404);
    assert.equal((await json<{ error: { param: string } }>(refused)).error.param, "id");
  }
  const publishable = await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle`, {
    key: sys.project.keys.publishableLive,
  });
  assert.ok(publishable.status === 401 || publishable.status === 403, `${publishable.status}`);
});

test("a bundle larger than SUPPORT_BUNDLE_MAX_BYTES leaves the oldest Requests out and says so", async (t) => {
  const sys = await startSystem(t, {
    ...SYSTEM_CONFIG,
    config: { ...SYSTEM_CONFIG.config, SUPPORT_BUNDLE_MAX_BYTES: String(16 * 1024) },
  });
  checkEveryAnswer(sys);
  const eu = await sys.connectEndUser({ companyName: "Big Co" });
  await bringOnline(sys, eu);
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd(`Customer ${i}`) });
    assert.equal(r.status, 200);
    ids.push(r.headers.get("svc-request-id") ?? "");
  }
  const response = await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle`);
  const text = await response.text();
  assert.equal(response.status, 200);
  assert.ok(Buffer.byteLength(text) <= 16 * 1024, `${Buffer.byteLength(text)} bytes`);
  const bundle = JSON.parse(text) as Bundle;
  assert.ok(
    bundle.truncated,
    `truncated: ${Buffer.byteLength(text)} bytes, ${bundle.requests.length} requests`,
  );
  assert.ok(bundle.truncated.requestsLeftOut > 0, "some left out");
  assert.equal(bundle.truncated.requestsLeftOut + bundle.requests.length, 12);
  assert.match(bundle.truncated.note, /SUPPORT_BUNDLE_MAX_BYTES/);
  // The newest are kept, the oldest left out.
  assert.equal(bundle.requests.at(-1)?.request.id, ids.at(-1));
  assert.ok(!text.includes(ids[0] ?? "none"), `the oldest is left out: ${ids.join(",")}`);
});
