import assert from "node:assert/strict";
import { test } from "node:test";
import { newRequestRow } from "../../src/requests/new-request.ts";
import { transition } from "../../src/requests/engine.ts";
import { insertRequest } from "../../src/store/requests.ts";
import { buildTestApp, bearer } from "../../src/testing/harness.ts";
import { startSystem } from "../../src/testing/system.ts";
import { startWebhookReceiver } from "../../src/testing/webhook-receiver.ts";
import { bringOnline, customerAdd, eventually, passthroughPath } from "./helpers.ts";
import { SYSTEM_CONFIG, endpointFor, ofType, untilDispatchSettled } from "./webhook-helpers.ts";

/**
 * Events (spec: Events; architecture §5): outcome-unknown resolution, key mode isolation, and the
 * outbox rule (the event is written by the transition's own statement, only for subscribers).
 */
test("a write whose answer was lost sends request.outcome_unknown, then request.outcome_resolved", async (t) => {
  const sys = await startSystem(t, SYSTEM_CONFIG);
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
  const sys = await startSystem(t, SYSTEM_CONFIG);
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
  assert.ok(sys.dispatcher);
  await untilDispatchSettled(sys.deps, sys.dispatcher);
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
  assert.ok(await transition(h.deps, unsubscribed, "cancel", {}, "test"));
  assert.deepEqual(await events(), [], "no endpoint: no outbox row");

  const created = await h.app.inject({
    method: "POST",
    url: "/v1/webhook-endpoints",
    headers: bearer(h.project.keys.secretLive),
    payload: { url: "http://127.0.0.1:9/hooks", eventTypes: ["request.canceled"] },
  });
  assert.equal(created.statusCode, 201);
  const row = await newRequest("req_01h455vb4pex5vsknk084sn001", "async");
  assert.ok(await transition(h.deps, row, "cancel", {}, "test"));
  assert.equal(await transition(h.deps, row, "cancel", {}, "again"), null, "the second transition loses");
  const written = await events();
  assert.equal(written.length, 1, "exactly one event, from the transition that happened");
  assert.equal(written[0]?.type, "request.canceled");
  assert.equal((JSON.parse(written[0]?.data ?? "{}") as { id: string }).id, row.id);

  const sync = await newRequest("req_01h455vb4pex5vsknk084sn002", "sync");
  assert.ok(await transition(h.deps, sync, "cancel", {}, "test"));
  assert.equal(
    (await events()).length,
    1,
    "a sync caller got its result: only includeSyncRequests endpoints want it",
  );
});
