import assert from "node:assert/strict";
import { test } from "node:test";
import { moveConnection } from "../../src/connections/status.ts";
import { startSystem, type ConnectedEndUser } from "../../src/testing/system.ts";
import { E2E_CONFIG, json, passthroughPath, requestById, type RequestResource } from "./helpers.ts";

/**
 * Admission (decision 0011): a call refused before queueing answers its error's own status in both
 * modes — never 202 with a failed Request — and nothing is queued or ever sent; the Request is
 * recorded `failed`. The simulated application counts what it processed.
 */
const probe = (name: string): string => `<CustomerQueryRq><FullName>${name}</FullName></CustomerQueryRq>`;

function processed(eu: ConnectedEndUser, marker: string): number {
  return eu.connector.events.filter((e) => e.type === "request_processed" && e.requestXml.includes(marker))
    .length;
}

const ASYNC = { prefer: "respond-async" };

test("admission refusals answer the error's status, sync and async, with nothing queued", async (t) => {
  const sys = await startSystem(t, {
    config: { ...E2E_CONFIG.config, CONNECTION_QUEUE_CAPACITY: "2" },
  });

  await t.test("a full queue: 429 CONNECTION_QUEUE_FULL, never sent when the connector returns", async () => {
    const eu = await sys.connectEndUser({ companyName: "Full Queue Co" });
    // Set up and seen just now, but not checking in yet: everything admitted waits.
    const now = new Date(sys.clock.now());
    await moveConnection(sys.deps, eu.connectionId, "online", { last_seen_at: now });
    for (const name of ["Queued-A", "Queued-B"]) {
      const res = await sys.call("POST", passthroughPath(eu.endUserId), {
        body: probe(name),
        headers: ASYNC,
      });
      assert.equal(res.status, 202, await res.clone().text());
    }
    const asyncRefused = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: probe("Refused-Async"),
      headers: ASYNC,
    });
    assert.equal(asyncRefused.status, 429, await asyncRefused.clone().text());
    assert.ok(asyncRefused.headers.get("retry-after"), "429 carries Retry-After");
    assert.equal(asyncRefused.headers.get("location"), null, "no Request to poll");
    const body = await json<{ error: { code: string; requestId: string; httpStatusCode: number } }>(
      asyncRefused,
    );
    assert.equal(body.error.code, "CONNECTION_QUEUE_FULL");
    assert.equal(body.error.httpStatusCode, 429);
    const recorded = await requestById(sys, body.error.requestId);
    assert.equal(recorded.status, "failed");
    assert.equal(recorded.sentAt, null);
    assert.deepEqual(
      recorded.timeline.map((e) => e.status),
      ["failed"],
      "created failed: never queued",
    );

    const syncRefused = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: probe("Refused-Sync"),
    });
    assert.equal(syncRefused.status, 429);

    const queued = await json<{ data: RequestResource[] }>(
      await sys.call("GET", "/v1/requests?status=queued"),
    );
    assert.equal(queued.data.length, 2, "only the two admitted requests wait");

    eu.connector.start();
    for (const r of queued.data) {
      const done = await json<RequestResource>(await sys.call("GET", `/v1/requests/${r.id}?waitSeconds=30`));
      assert.equal(done.status, "succeeded");
    }
    assert.equal(processed(eu, "Queued-A") + processed(eu, "Queued-B"), 2);
    assert.equal(processed(eu, "Refused-"), 0, "a refused request is never sent");
  });

  await t.test("no connection yet: 422 INTEGRATION_CONNECTION_NOT_SET_UP for an async call", async () => {
    const created = await json<{ id: string }>(
      await sys.call("POST", "/v1/end-users", { body: { companyName: "No Conn", sourceId: "no-conn" } }),
    );
    const res = await sys.call("POST", passthroughPath(created.id), {
      body: probe("Nowhere"),
      headers: ASYNC,
    });
    assert.equal(res.status, 422, await res.clone().text());
    const body = await json<{ error: { code: string; requestId: string; outcome: string } }>(res);
    assert.equal(body.error.code, "INTEGRATION_CONNECTION_NOT_SET_UP");
    assert.equal(body.error.outcome, "not_applicable", "a read");
    const recorded = await requestById(sys, body.error.requestId);
    assert.equal(recorded.status, "failed");
    assert.equal(recorded.connectionId, null);
    assert.equal(recorded.outcome, "not_applicable");
  });

  await t.test("a disabled connection: INTEGRATION_CONNECTION_DISABLED for an async call", async () => {
    const eu = await sys.connectEndUser({ companyName: "Disabled Co" });
    await moveConnection(sys.deps, eu.connectionId, "disabled");
    const res = await sys.call("POST", passthroughPath(eu.endUserId), {
      body: probe("Disabled"),
      headers: ASYNC,
    });
    assert.equal(res.status, 403, await res.clone().text());
    const body = await json<{ error: { code: string } }>(res);
    assert.equal(body.error.code, "INTEGRATION_CONNECTION_DISABLED");
  });
});
