import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import type { Deps } from "../deps.ts";
import type { FakeClock } from "../platform/clock.ts";
import { newId } from "../platform/ids.ts";
import { insertSession } from "../store/connector-sessions.ts";
import { findRequestById, insertRequest } from "../store/requests.ts";
import type { Principal } from "../tenancy/api-keys.ts";
import { ensureConnection } from "../tenancy/auth-sessions.ts";
import { createEndUser } from "../tenancy/end-users.ts";
import { buildTestApp } from "../testing/harness.ts";
import { newRequestRow } from "./new-request.ts";
import { startSweeper, sweepOnce } from "./sweeper.ts";

/**
 * Retention (sweeper.ts, README "Retention"): finished Requests are deleted REQUEST_RETENTION_MS
 * after they completed and closed connector sessions CONNECTOR_SESSION_RETENTION_MS after they
 * closed, by the sweep; nothing still waiting, sent, outcome_unknown or open is ever deleted.
 * Time is a FakeClock.
 */
async function setUp(
  t: TestContext,
): Promise<{ deps: Deps; clock: FakeClock; connectionId: string; endUserId: string; projectId: string }> {
  const h = await buildTestApp(t);
  assert.ok(h.fakeClock);
  const projectId = h.project.project.id;
  const principal: Principal = {
    projectId,
    organization: h.project.project.organization,
    keyId: "key_test",
    mode: "live",
    readOnly: false,
  };
  const eu = await createEndUser(
    h.deps,
    { projectId, mode: "live" },
    { companyName: "Kept Co", sourceId: "kept" },
  );
  const connection = await ensureConnection(h.deps, principal, eu.id, false, "pw", new Date(h.clock.now()));
  return { deps: h.deps, clock: h.fakeClock, connectionId: connection.id, endUserId: eu.id, projectId };
}

/** A request in `status`, completed now when the status is final. */
async function requestIn(
  deps: Deps,
  s: { projectId: string; endUserId: string; connectionId: string },
  status: string,
): Promise<string> {
  const now = deps.clock.now();
  const id = newId("request");
  const row = newRequestRow(
    {
      id,
      project_id: s.projectId,
      is_test: false,
      end_user_id: s.endUserId,
      connection_id: s.connectionId,
      operation_id: "endUsers.passthrough",
      method: "POST",
      path: `/v1/end-users/${s.endUserId}/passthrough/ledger_desktop`,
      mode: "async",
      status: "queued",
      is_write: true,
      request_xml: "<QBXML/>",
      queue_ttl_expires_at: null,
      idempotency_key_present: false,
      previous_request_id: null,
    },
    now,
  );
  const final = ["succeeded", "failed", "canceled"].includes(status);
  await insertRequest(deps.db, { ...row, status, completed_at: final ? new Date(now) : null });
  return id;
}

async function sessionIn(deps: Deps, connectionId: string, state: "open" | "closed"): Promise<string> {
  const now = new Date(deps.clock.now());
  const ticket = newId("request");
  await insertSession(deps.db, {
    ticket_hash: ticket,
    connection_id: connectionId,
    phase: state === "open" ? "ready" : "closed",
    last_error: null,
    recovery_message_set_id: null,
    connection_errors: 0,
    company_file_path: null,
    xml_version: "13.0",
    created_at: now,
    last_activity_at: now,
    last_work_at: now,
    closed_at: state === "closed" ? now : null,
    instance_id: null,
  });
  return ticket;
}

async function sessionExists(deps: Deps, ticket: string): Promise<boolean> {
  const row = await deps.db
    .selectFrom("connector_sessions")
    .select("ticket_hash")
    .where("ticket_hash", "=", ticket)
    .executeTakeFirst();
  return row !== undefined;
}

test("finished requests are deleted after their retention; unfinished ones never", async (t) => {
  const s = await setUp(t);
  const { deps, clock } = s;
  const retention = deps.config.REQUEST_RETENTION_MS;
  const finished = [
    await requestIn(deps, s, "succeeded"),
    await requestIn(deps, s, "failed"),
    await requestIn(deps, s, "canceled"),
  ];
  const unfinished = [
    await requestIn(deps, s, "queued"),
    await requestIn(deps, s, "waiting_for_connection"),
    await requestIn(deps, s, "sent"),
    await requestIn(deps, s, "outcome_unknown"),
  ];
  await clock.advance(retention - 1);
  assert.equal((await sweepOnce(deps)).requestsDeleted, 0, "one millisecond early");
  for (const id of finished) assert.ok(await findRequestById(deps.db, id), `${id} kept`);
  await clock.advance(1);
  assert.equal((await sweepOnce(deps)).requestsDeleted, finished.length);
  for (const id of finished) assert.equal(await findRequestById(deps.db, id), null, `${id} deleted`);
  await clock.advance(retention * 3);
  await sweepOnce(deps);
  for (const id of unfinished) assert.ok(await findRequestById(deps.db, id), `${id} is never deleted`);
});

test("closed connector sessions are deleted after their retention; open ones never", async (t) => {
  const { deps, clock, connectionId } = await setUp(t);
  const retention = deps.config.CONNECTOR_SESSION_RETENTION_MS;
  const closed = await sessionIn(deps, connectionId, "closed");
  const open = await sessionIn(deps, connectionId, "open");
  await clock.advance(retention - 1);
  assert.equal((await sweepOnce(deps)).sessionsDeleted, 0);
  assert.ok(await sessionExists(deps, closed));
  await clock.advance(1);
  assert.equal((await sweepOnce(deps)).sessionsDeleted, 1);
  assert.equal(await sessionExists(deps, closed), false);
  assert.ok(await sessionExists(deps, open));
});

test("the running sweeper applies retention on its interval, in bounded batches", async (t) => {
  const s = await setUp(t);
  const { deps, clock } = s;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await requestIn(deps, s, "succeeded"));
  assert.equal((await sweepOnce(deps, { batchSize: 2 })).requestsDeleted, 0);
  await clock.advance(deps.config.REQUEST_RETENTION_MS);
  assert.equal((await sweepOnce(deps, { batchSize: 2 })).requestsDeleted, 5, "full batches repeat");
  const later = await requestIn(deps, s, "failed");
  const sweeper = startSweeper(deps);
  t.after(() => sweeper.stop());
  await clock.untilSleepers(1);
  await clock.advance(deps.config.REQUEST_RETENTION_MS + deps.config.SWEEP_INTERVAL_MS);
  const deadline = Date.now() + 10_000;
  while ((await findRequestById(deps.db, later)) !== null) {
    assert.ok(Date.now() < deadline, "the sweeper deleted the request within 10 s of real time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});
