import assert from "node:assert/strict";
import { test } from "node:test";
import { newId } from "../platform/ids.ts";
import { insertInstance } from "../store/instances.ts";
import { findRequestById, insertRequest } from "../store/requests.ts";
import { createEndUser } from "../tenancy/end-users.ts";
import { buildTestApp, type TestApp } from "../testing/harness.ts";
import { recoverDeadInstances } from "./instances.ts";
import { newRequestRow } from "./new-request.ts";

/**
 * A sync caller waits on one service instance. When that instance dies its callers are gone, so
 * their unsettled requests are marked `caller_gone_at` (webhooks: such requests are reported to
 * every endpoint, not only `includeSyncRequests` ones); a live neighbour's callers still wait and
 * must not be marked (they get the result; an event would be a second report).
 */
const LEASE_MS = 30_000;

async function instanceRow(h: TestApp, id: string, leaseEndsMs: number): Promise<void> {
  await insertInstance(h.deps.db, {
    id,
    host: "test",
    pid: 1,
    started_at: new Date(h.clock.now()),
    lease_expires_at: new Date(leaseEndsMs),
    released_at: null,
    recovered_at: null,
  });
}

async function syncRequest(h: TestApp, endUserId: string, callerInstance: string | null): Promise<string> {
  const id = newId("request");
  await insertRequest(
    h.deps.db,
    newRequestRow(
      {
        id,
        project_id: h.project.project.id,
        is_test: false,
        end_user_id: endUserId,
        connection_id: null,
        operation_id: "ledger.healthCheck",
        method: "GET",
        path: "/v1/ledger-desktop/health-check",
        mode: "sync",
        status: "queued",
        is_write: false,
        request_xml: "<QBXML/>",
        queue_ttl_expires_at: null,
        idempotency_key_present: false,
        previous_request_id: null,
        caller_instance_id: callerInstance,
      },
      h.clock.now(),
    ),
  );
  return id;
}

const gone = async (h: TestApp, id: string): Promise<boolean> =>
  (await findRequestById(h.deps.db, id))?.caller_gone_at != null;

test("recovering a dead instance lets go of its sync callers only; legacy requests only at start-up", async (t) => {
  const h = await buildTestApp(t, { config: { INSTANCE_LEASE_MS: String(LEASE_MS) } });
  const now = h.clock.now();
  const endUser = await createEndUser(
    h.deps,
    { projectId: h.project.project.id, mode: "live" },
    {
      companyName: "Callers Co",
      sourceId: "callers",
    },
  );
  await instanceRow(h, "inst_dead", now - 1);
  await instanceRow(h, "inst_live", now + LEASE_MS);
  const dead = await syncRequest(h, endUser.id, "inst_dead");
  const live = await syncRequest(h, endUser.id, "inst_live");
  const legacy = await syncRequest(h, endUser.id, null);

  const periodic = await recoverDeadInstances(h.deps);
  assert.deepEqual(periodic.instances, ["inst_dead"]);
  assert.equal(await gone(h, dead), true, "the dead instance's caller is gone");
  assert.equal(await gone(h, live), false, "a live neighbour's caller still waits");
  assert.equal(await gone(h, legacy), false, "legacy callers are judged at start-up only");

  await recoverDeadInstances(h.deps, { legacy: true });
  assert.equal(await gone(h, legacy), true);
  assert.equal(await gone(h, live), false);
});

test("a sync call records the instance holding its caller; an async call records none", async (t) => {
  const h = await buildTestApp(t);
  const headers = { authorization: `Bearer ${h.project.keys.secretLive}` };
  const created = await h.app.inject({
    method: "POST",
    url: "/v1/end-users",
    headers,
    payload: { companyName: "Sync Co", sourceId: "sync" },
  });
  const endUser = created.json<{ id: string }>().id;
  const asyncCall = await h.app.inject({
    method: "GET",
    url: "/v1/ledger-desktop/health-check",
    headers: { ...headers, "svc-end-user-id": endUser, prefer: "respond-async" },
  });
  // No connection is set up: both calls are refused at admission (decision 0011); their rows stay.
  assert.equal(asyncCall.statusCode, 422, asyncCall.body);
  const asyncRow = await findRequestById(h.deps.db, String(asyncCall.headers["svc-request-id"]));
  assert.equal(asyncRow?.mode, "async");
  assert.equal(asyncRow?.caller_instance_id, null);

  const syncCall = await h.app.inject({
    method: "GET",
    url: "/v1/ledger-desktop/health-check",
    headers: { ...headers, "svc-end-user-id": endUser },
  });
  const syncId = String(syncCall.headers["svc-request-id"]);
  assert.match(syncId, /^req_/, syncCall.body);
  const syncRow = await findRequestById(h.deps.db, syncId);
  assert.equal(syncRow?.mode, "sync");
  assert.equal(syncRow?.caller_instance_id, h.deps.instanceId);
});
