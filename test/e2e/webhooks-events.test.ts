import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import { startWebhookReceiver, verifySignature } from "../../src/testing/webhook-receiver.ts";
import { READ, advanceUntil, bringOnline, json, newestRequestIs, passthroughPath } from "./helpers.ts";
import { SYSTEM_CONFIG, endpointFor, ofType, untilDispatchSettled } from "./webhook-helpers.ts";

/**
 * Events (spec: Events; architecture §5): which state changes produce which events, with which
 * `data`, for whom (`includeSyncRequests`, key mode), written in the same statement as the change.
 */
test("connecting an end user sends connection.setup_completed and connection.status_changed", async (t) => {
  const sys = await startSystem(t, SYSTEM_CONFIG);
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
  const sys = await startSystem(t, SYSTEM_CONFIG);
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

  // Every event up to the late one is fanned out and every due delivery made.
  assert.ok(sys.dispatcher);
  await untilDispatchSettled(sys.deps, sys.dispatcher);
  assert.equal(
    plain.received.some((w) => w.event.data.id === syncId),
    false,
    "the answered sync call never reached the plain endpoint",
  );
  assert.equal(new Set(plain.received.map((w) => w.id)).size, plain.received.length, "no duplicates");
});
