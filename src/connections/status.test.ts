import assert from "node:assert/strict";
import { test } from "node:test";
import type { Deps } from "../deps.ts";
import { newId } from "../platform/ids.ts";
import { findConnectionById, touchConnection } from "../store/connections.ts";
import { insertEndpointWithinLimit } from "../store/webhooks.ts";
import { buildTestApp } from "../testing/harness.ts";
import type { Principal } from "../tenancy/api-keys.ts";
import { ensureConnection } from "../tenancy/auth-sessions.ts";
import {
  CONNECTION_STATUSES,
  CONNECTION_TRANSITIONS,
  markOfflineIfSilent,
  moveConnection,
  setConnectionEnabled,
  type ConnectionStatus,
} from "./status.ts";
import { serializeConnection } from "./resource.ts";
import { createEndUser } from "../tenancy/end-users.ts";

/**
 * The connection status machine (connection-status.ts): every (from, to) pair of the six statuses,
 * allowed or refused, through the one writer of `status`; each real transition writes exactly one
 * `connection.status_changed` event with the previous and new status, a refusal or a stay none.
 */

/** The table the code must implement, written out again so that a one-pair change fails here. */
const EXPECTED: Record<ConnectionStatus, ConnectionStatus[]> = {
  pending_setup: ["online", "ledger_unavailable", "company_file_mismatch", "disabled"],
  online: ["ledger_unavailable", "company_file_mismatch", "offline", "disabled"],
  ledger_unavailable: ["online", "company_file_mismatch", "offline", "disabled"],
  company_file_mismatch: ["online", "ledger_unavailable", "offline", "disabled"],
  offline: ["online", "ledger_unavailable", "company_file_mismatch", "disabled"],
  disabled: ["pending_setup", "offline"],
};

async function setUp(t: Parameters<typeof buildTestApp>[0]) {
  const h = await buildTestApp(t);
  const projectId = h.project.project.id;
  const principal: Principal = {
    projectId,
    organization: h.project.project.organization,
    keyId: "key_test",
    mode: "live",
    readOnly: false,
  };
  const now = new Date(h.clock.now());
  // Every status change is an event someone subscribes to.
  await insertEndpointWithinLimit(
    h.deps.db,
    {
      id: newId("webhookEndpoint"),
      project_id: projectId,
      is_test: false,
      url: "https://hooks.example.com/ledger",
      description: null,
      event_types: ["connection.status_changed"],
      enabled: true,
      disabled_reason: null,
      include_sync_requests: false,
      secret: "whsec_test",
      previous_secret: null,
      previous_secret_expires_at: null,
      secret_rotated_at: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    },
    100,
  );
  let n = 0;
  const connection = async (status: ConnectionStatus): Promise<string> => {
    n += 1;
    const eu = await createEndUser(
      h.deps,
      { projectId, mode: "live" },
      {
        companyName: `Status ${n}`,
        sourceId: `status-${n}`,
      },
    );
    const row = await ensureConnection(h.deps, principal, eu.id, false, "pw", now);
    await forceStatus(h.deps, row.id, status);
    return row.id;
  };
  return { h, deps: h.deps, connection };
}

/** Puts a fresh connection in `status` by walking allowed transitions (no back door into the column). */
async function forceStatus(deps: Deps, id: string, status: ConnectionStatus): Promise<void> {
  const path: Record<ConnectionStatus, ConnectionStatus[]> = {
    pending_setup: [],
    online: ["online"],
    ledger_unavailable: ["ledger_unavailable"],
    company_file_mismatch: ["company_file_mismatch"],
    offline: ["online", "offline"],
    disabled: ["disabled"],
  };
  for (const step of path[status]) {
    const change = await moveConnection(deps, id, step, { status_reason: reasonFor(step) });
    assert.equal(change.refused, false, `setting up ${status}: ${step}`);
  }
  assert.equal((await findConnectionById(deps.db, id))?.status, status);
}

function reasonFor(status: ConnectionStatus): string | null {
  if (status === "ledger_unavailable") return "LEDGER_CANNOT_START";
  if (status === "company_file_mismatch") return "LEDGER_WRONG_COMPANY_FILE_OPEN";
  if (status === "offline") return "INTEGRATION_CONNECTION_NOT_ACTIVE";
  if (status === "disabled") return "INTEGRATION_CONNECTION_DISABLED";
  return null;
}

async function statusEvents(deps: Deps, connectionId: string): Promise<Record<string, unknown>[]> {
  const rows = await deps.db
    .selectFrom("events")
    .select("data")
    .where("type", "=", "connection.status_changed")
    .orderBy("seq")
    .execute();
  return rows
    .map((r) => JSON.parse(r.data) as Record<string, unknown>)
    .filter((data) => data.id === connectionId);
}

test("the table is the documented one", () => {
  assert.deepEqual(CONNECTION_TRANSITIONS, EXPECTED);
});

test("every (from, to) pair: allowed ones move and write one event, refused ones change nothing", async (t) => {
  const { deps, connection } = await setUp(t);
  for (const from of CONNECTION_STATUSES) {
    for (const to of CONNECTION_STATUSES) {
      const id = await connection(from);
      const before = await findConnectionById(deps.db, id);
      const eventsBefore = (await statusEvents(deps, id)).length;
      const change = await moveConnection(deps, id, to, { status_reason: reasonFor(to) });
      const after = await findConnectionById(deps.db, id);
      const events = await statusEvents(deps, id);
      const label = `${from} → ${to}`;
      if (from === to) {
        assert.equal(change.refused, false, `${label} is a stay`);
        assert.equal(after?.status, from, label);
        assert.equal(events.length, eventsBefore, `${label}: a stay writes no event`);
      } else if (EXPECTED[from].includes(to)) {
        assert.equal(change.refused, false, label);
        assert.equal(change.previousStatus, from, label);
        assert.equal(after?.status, to, label);
        assert.equal(after?.status_reason, reasonFor(to), label);
        assert.equal(events.length, eventsBefore + 1, `${label}: one event`);
        const event = events.at(-1);
        assert.equal(event?.previousStatus, from, label);
        assert.equal(event?.status, to, label);
        assert.equal(event?.statusReason, reasonFor(to), label);
      } else {
        assert.equal(change.refused, true, `${label} is refused`);
        assert.deepEqual(after, before, `${label}: nothing changed`);
        assert.equal(events.length, eventsBefore, `${label}: no event`);
      }
    }
  }
});

test("a status's own reason is set when none is given (offline, disabled, online clears it)", async (t) => {
  const { deps, connection } = await setUp(t);
  const id = await connection("ledger_unavailable");
  await moveConnection(deps, id, "offline");
  assert.equal((await findConnectionById(deps.db, id))?.status_reason, "INTEGRATION_CONNECTION_NOT_ACTIVE");
  await moveConnection(deps, id, "online");
  assert.equal((await findConnectionById(deps.db, id))?.status_reason, null);
  await moveConnection(deps, id, "disabled");
  assert.equal((await findConnectionById(deps.db, id))?.status_reason, "INTEGRATION_CONNECTION_DISABLED");
});

test("silence: offline only after the window, checked again under the lock; a disabled one stays", async (t) => {
  const { h, deps, connection } = await setUp(t);
  const clock = h.fakeClock;
  assert.ok(clock);
  const window = deps.config.CONNECTION_OFFLINE_AFTER_MS;
  const id = await connection("online");
  await touchConnection(deps.db, id, { last_seen_at: new Date(clock.now()) });
  await clock.advance(window);
  assert.equal(await markOfflineIfSilent(deps, id), false, "not yet: exactly the window");
  await clock.advance(1);
  // The connector called just now: the evidence is gone by the time the row is locked.
  await touchConnection(deps.db, id, { last_seen_at: new Date(clock.now()) });
  assert.equal(await markOfflineIfSilent(deps, id), false, "seen again");
  await clock.advance(window + 1);
  assert.equal(await markOfflineIfSilent(deps, id), true);
  const row = await findConnectionById(deps.db, id);
  assert.equal(row?.status, "offline");
  assert.equal(
    serializeConnection(deps.activity.connection(row), {
      nowMs: clock.now(),
      offlineAfterMs: window,
      sessionOpen: false,
      checkInIntervalMs: 60_000,
    }).statusReason,
    "INTEGRATION_CONNECTION_NOT_ACTIVE",
  );
  assert.equal(await markOfflineIfSilent(deps, id), false, "already offline: no second event");
  assert.equal((await statusEvents(deps, id)).filter((e) => e.status === "offline").length, 1);

  const disabled = await connection("disabled");
  await touchConnection(deps.db, disabled, { last_seen_at: new Date(clock.now() - window - 1) });
  assert.equal(await markOfflineIfSilent(deps, disabled), false);
  assert.equal((await findConnectionById(deps.db, disabled))?.status, "disabled");

  const neverSeen = await connection("pending_setup");
  assert.equal(await markOfflineIfSilent(deps, neverSeen), false);
});

test("enabling a disabled connection: pending_setup if it never checked in, else offline", async (t) => {
  const { h, deps, connection } = await setUp(t);
  const fresh = await connection("disabled");
  const freshRow = await findConnectionById(deps.db, fresh);
  await setConnectionEnabled(deps, freshRow!, true);
  assert.equal((await findConnectionById(deps.db, fresh))?.status, "pending_setup");

  const used = await connection("online");
  await touchConnection(deps.db, used, { last_check_in_at: new Date(h.clock.now()) });
  await setConnectionEnabled(deps, (await findConnectionById(deps.db, used))!, false);
  assert.equal((await findConnectionById(deps.db, used))?.status, "disabled");
  await setConnectionEnabled(deps, (await findConnectionById(deps.db, used))!, true);
  const row = await findConnectionById(deps.db, used);
  assert.equal(row?.status, "offline");
  // Enabling one that is not disabled changes nothing.
  const change = await setConnectionEnabled(deps, row, true);
  assert.equal(change.refused, true);
});
