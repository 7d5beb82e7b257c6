import assert from "node:assert/strict";
import { test } from "node:test";
import { newRequestRow } from "../../src/requests/new-request.ts";
import { transition } from "../../src/requests/engine.ts";
import { insertRequest } from "../../src/store/requests.ts";
import { buildTestApp, bearer } from "../../src/testing/harness.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import {
  startWebhookReceiver,
  verifySignature,
  type ReceivedWebhook,
} from "../../src/testing/webhook-receiver.ts";
import {
  E2E_CONFIG,
  READ,
  advanceUntil,
  bringOnline,
  customerAdd,
  eventually,
  json,
  newestRequestIs,
  passthroughPath,
} from "./helpers.ts";

/**
 * Events (spec: Events; architecture §5): which state changes produce which events, with which
 * `data`, for whom (`includeSyncRequests`, key mode), written in the same statement as the change.
 */
const CONFIG = { config: { ...E2E_CONFIG.config, WEBHOOK_ALLOW_LOOPBACK: "on" } };

async function endpointFor(
  sys: System,
  url: string,
  body: Record<string, unknown> = {},
  key = sys.project.keys.secretLive,
): Promise<{ id: string; secret: string }> {
  const res = await sys.call("POST", "/v1/webhook-endpoints", {
    key,
    body: { url, eventTypes: ["request.*", "connection.*"], ...body },
  });
  assert.equal(res.status, 201, await res.clone().text());
  return json<{ id: string; secret: string }>(res);
}

const ofType = (received: ReceivedWebhook[], type: string): ReceivedWebhook[] =>
  received.filter((r) => r.event.type === type);

test("connecting an end user sends connection.setup_completed and connection.status_changed", async (t) => {
  const sys = await startSystem(t, CONFIG);
  const receiver = await startWebhookReceiver(t);
  const endpoint = await endpointFor(sys, receiver.url);
  const eu = await sys.connectEndUser({ companyName: "Hooked Co" });
  await bringOnline(sys, eu);
  await receiver.waitFor("both connection events", (r) =>
    ["connection.setup_completed", "connection.status_changed"].every((type) => ofType(r, type).length > 0),
  );
  for (const webhook of receiver.received) verifySignature(endpoint.secret, webhook);
  const [setup] = ofType(receiver.received, "connection.setup_completed");
  assert.ok(setup);
  const data = setup.event.data;
  assert.equal(data.id, eu.connectionId);
  assert.equal(data.objectType, "integration_connection");
  assert.equal(data.endUserId, eu.endUserId);
  assert.match(String(data.authSessionId), /^authsess_/);
  assert.equal(data.isTest, false);
  assert.equal(data.status, "online");
  assert.deepEqual(data.companyFile, {
    companyName: "Hooked Co",
    product: (data.companyFile as { product: string }).product,
    xmlVersion: "16.0",
    country: (data.companyFile as { country: string }).country,
  });
  const [changed] = ofType(receiver.received, "connection.status_changed");
  assert.ok(changed);
  assert.deepEqual(
    { ...changed.event.data, changedAt: null },
    {
      id: eu.connectionId,
      objectType: "integration_connection",
      endUserId: eu.endUserId,
      isTest: false,
      previousStatus: "pending_setup",
      status: "online",
      statusReason: null,
      changedAt: null,
    },
  );
  assert.equal(ofType(receiver.received, "connection.setup_completed").length, 1, "once per auth session");
});

test("request events: async calls always; sync calls only for includeSyncRequests endpoints, or when the caller timed out", async (t) => {
  const sys = await startSystem(t, CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Sync Rules Co" });
  await bringOnline(sys, eu);
  const plain = await startWebhookReceiver(t);
  const all = await startWebhookReceiver(t);
  const plainEndpoint = await endpointFor(sys, plain.url, { eventTypes: ["request.succeeded"] });
  const allEndpoint = await endpointFor(sys, all.url, {
    eventTypes: ["request.*"],
    includeSyncRequests: true,
  });

  // Async: both endpoints.
  const accepted = await json<{ id: string }>(
    await sys.call("POST", passthroughPath(eu.endUserId), {
      body: READ,
      headers: { prefer: "respond-async" },
    }),
  );
  await plain.waitFor("async event", (r) => r.some((w) => w.event.data.id === accepted.id));
  await all.waitFor("async event", (r) => r.some((w) => w.event.data.id === accepted.id));
  const request = await json<Record<string, unknown>>(await sys.call("GET", `/v1/requests/${accepted.id}`));
  const event = plain.received.find((w) => w.event.data.id === accepted.id);
  assert.ok(event);
  verifySignature(plainEndpoint.secret, event);
  assert.equal(event.event.type, "request.succeeded");
  assert.equal(event.event.projectId, sys.project.project.id);
  const fields = [
    "id",
    "objectType",
    "endUserId",
    "connectionId",
    "operationId",
    "method",
    "path",
    "mode",
    "status",
    "outcome",
    "recovered",
    "createdAt",
    "sentAt",
    "completedAt",
    "error",
  ];
  assert.deepEqual(Object.keys(event.event.data), [...fields, "callerReceivedResult"]);
  for (const field of fields) assert.deepEqual(event.event.data[field], request[field], `data.${field}`);
  assert.equal(event.event.data.callerReceivedResult, false);

  // Sync, answered: only the includeSyncRequests endpoint, marked as received by the caller.
  const sync = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
  assert.equal(sync.status, 200);
  const syncId = sync.headers.get("svc-request-id");
  await all.waitFor("sync event", (r) => r.some((w) => w.event.data.id === syncId));
  const syncEvent = all.received.find((w) => w.event.data.id === syncId);
  assert.equal(syncEvent?.event.data.callerReceivedResult, true);
  verifySignature(allEndpoint.secret, syncEvent ?? event);

  // Sync, caller timed out after sending: every endpoint.
  sys.ledger.setFault({ kind: "slow_processing", ms: 1500 });
  const pending = sys.call("POST", passthroughPath(eu.endUserId), {
    body: READ,
    headers: { "svc-timeout-seconds": "1" },
  });
  await newestRequestIs(sys, "sent");
  const timedOut = await advanceUntil(sys, pending, 1000, 20);
  sys.ledger.setFault(null);
  assert.equal(timedOut.status, 504);
  const lateId = (await json<{ error: { details: { requestId: string } } }>(timedOut)).error.details
    .requestId;
  await plain.waitFor("late event", (r) => r.some((w) => w.event.data.id === lateId));
  await all.waitFor("late event", (r) => r.some((w) => w.event.data.id === lateId));
  assert.equal(
    plain.received.find((w) => w.event.data.id === lateId)?.event.data.callerReceivedResult,
    false,
  );

  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(
    plain.received.some((w) => w.event.data.id === syncId),
    false,
    "the answered sync call never reached the plain endpoint",
  );
  assert.equal(new Set(plain.received.map((w) => w.id)).size, plain.received.length, "no duplicates");
});

test("a write whose answer was lost sends request.outcome_unknown, then request.outcome_resolved", async (t) => {
  const sys = await startSystem(t, CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Lost Hook Co" });
  await bringOnline(sys, eu);
  const receiver = await startWebhookReceiver(t);
  await endpointFor(sys, receiver.url, { eventTypes: ["request.*"] });
  eu.connector.setFault({ kind: "lose_answer_after_write" });
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const before = file.count("Customer");
  const pending = sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Hook Ltd") });
  await eventually("applied", async () => file.count("Customer") === before + 1);
  void eu.connector.checkInNow();
  await pending;
  await receiver.waitFor("resolution", (r) => ofType(r, "request.outcome_resolved").length === 1);
  const [unknown] = ofType(receiver.received, "request.outcome_unknown");
  const [resolved] = ofType(receiver.received, "request.outcome_resolved");
  assert.ok(unknown && resolved);
  assert.equal(unknown.event.data.id, resolved.event.data.id);
  assert.equal(unknown.event.data.status, "outcome_unknown");
  assert.equal(unknown.event.data.outcome, "unknown");
  assert.equal(
    unknown.event.data.callerReceivedResult,
    false,
    "a sync caller told 'unknown' did not get the result",
  );
  assert.equal(resolved.event.data.status, "succeeded");
  assert.equal(resolved.event.data.outcome, "applied");
  assert.equal(resolved.event.data.recovered, true);
  assert.equal(
    ofType(receiver.received, "request.succeeded").length,
    0,
    "a resolution is not also a request.succeeded",
  );
});

test("an endpoint gets only the events of its key's mode", async (t) => {
  const sys = await startSystem(t, CONFIG);
  const live = await startWebhookReceiver(t);
  const testMode = await startWebhookReceiver(t);
  await endpointFor(sys, live.url);
  await endpointFor(sys, testMode.url, {}, sys.project.keys.secretTest);
  const liveUser = await sys.connectEndUser({ companyName: "Live Co" });
  await bringOnline(sys, liveUser);
  const testUser = await sys.connectEndUser({ companyName: "Test Co", test: true });
  await bringOnline(sys, testUser);
  await live.waitFor("live setup", (r) => ofType(r, "connection.setup_completed").length === 1);
  await testMode.waitFor("test setup", (r) => ofType(r, "connection.setup_completed").length === 1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(
    live.received.every((w) => w.event.data.isTest === false && w.event.data.id === liveUser.connectionId),
  );
  assert.ok(
    testMode.received.every((w) => w.event.data.isTest === true && w.event.data.id === testUser.connectionId),
  );
});

test("the event is written by the transition's own statement: not when the transition loses, not without a subscriber", async (t) => {
  const h = await buildTestApp(t, { config: { WEBHOOK_ALLOW_LOOPBACK: "on" } });
  const projectId = h.project.project.id;
  const endUser = await h.app.inject({
    method: "POST",
    url: "/v1/end-users",
    headers: bearer(h.project.keys.secretLive),
    payload: { companyName: "Outbox Co", sourceId: "outbox" },
  });
  const endUserId = endUser.json<{ id: string }>().id;
  const newRequest = async (id: string, mode: "sync" | "async") =>
    insertRequest(
      h.deps.db,
      newRequestRow(
        {
          id,
          project_id: projectId,
          end_user_id: endUserId,
          is_test: false,
          connection_id: null,
          operation_id: "endUsers.passthrough",
          method: "POST",
          path: "/x",
          mode,
          status: "queued",
          is_write: false,
          request_xml: "<x/>",
          queue_ttl_expires_at: null,
          idempotency_key_present: false,
          previous_request_id: null,
        },
        h.clock.now(),
      ),
    );
  const events = () => h.deps.db.selectFrom("events").selectAll().orderBy("seq").execute();

  const unsubscribed = await newRequest("req_01h455vb4pex5vsknk084sn000", "async");
  assert.ok(await transition(h.deps, unsubscribed, "canceled", {}, "test"));
  assert.deepEqual(await events(), [], "no endpoint: no outbox row");

  const created = await h.app.inject({
    method: "POST",
    url: "/v1/webhook-endpoints",
    headers: bearer(h.project.keys.secretLive),
    payload: { url: "http://127.0.0.1:9/hooks", eventTypes: ["request.canceled"] },
  });
  assert.equal(created.statusCode, 201);
  const row = await newRequest("req_01h455vb4pex5vsknk084sn001", "async");
  assert.ok(await transition(h.deps, row, "canceled", {}, "test"));
  assert.equal(await transition(h.deps, row, "canceled", {}, "again"), null, "the second transition loses");
  const written = await events();
  assert.equal(written.length, 1, "exactly one event, from the transition that happened");
  assert.equal(written[0]?.type, "request.canceled");
  assert.equal((JSON.parse(written[0]?.data ?? "{}") as { id: string }).id, row.id);

  const sync = await newRequest("req_01h455vb4pex5vsknk084sn002", "sync");
  assert.ok(await transition(h.deps, sync, "canceled", {}, "test"));
  assert.equal(
    (await events()).length,
    1,
    "a sync caller got its result: only includeSyncRequests endpoints want it",
  );
});
