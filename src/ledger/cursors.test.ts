import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ServiceError } from "../errors/service-error.ts";
import { newRequestRow } from "../requests/new-request.ts";
import { insertSession } from "../store/connector-sessions.ts";
import { findCursor, openCursors } from "../store/cursors.ts";
import type { Store } from "../store/database.ts";
import { insertRequest } from "../store/requests.ts";
import type { Tenant } from "../store/tenant.ts";
import { openTestStore } from "../testing/harness.ts";
import {
  CURSOR_IDLE_WINDOW_MS,
  CURSOR_SESSION_CAP_MS,
  cursorToken,
  newCursorId,
  recordPage,
  resumeCursor,
  startCursor,
} from "./cursors.ts";

/**
 * Application cursor rules (spec: "Cursor rules", Limits): idle window, session cap, session end,
 * three open cursors per connection with least-recently-used eviction, repeats at most twice, older
 * or foreign cursors, changed filters. Time is the test's own (cursor functions take `nowMs`).
 */
let store: Store;
let drop: () => Promise<void>;
const PROJECT = "proj_cursortest0000000000000000";
const OTHER_PROJECT = "proj_cursortest1111111111111111";
const END_USER = "eu_cursor";
const CONNECTION = "conn_cursor";
const TICKET = "ticket-hash-1";
const OP = "ledger.invoices.list";
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const TENANT: Tenant = { projectId: PROJECT, mode: "live" };

before(async () => {
  ({ store, drop } = await openTestStore());
  const at = new Date(T0);
  for (const id of [PROJECT, OTHER_PROJECT]) {
    await store.db
      .insertInto("projects")
      .values({ id, name: id, organization: "org", created_at: at })
      .execute();
  }
  await store.db
    .insertInto("end_users")
    .values({
      id: END_USER,
      project_id: PROJECT,
      is_test: false,
      company_name: "Cursor Co",
      source_id: "cursor",
      email: null,
      created_at: at,
    })
    .execute();
  await store.db
    .insertInto("connections")
    .values({
      id: CONNECTION,
      project_id: PROJECT,
      end_user_id: END_USER,
      organization: "org",
      status: "online",
      status_reason: null,
      is_test: false,
      username: "cursor-user",
      password_hash: "x",
      file_id: "{FILE}",
      file_identity: null,
      company_file_path: null,
      company_name: null,
      product: null,
      xml_version: "16.0",
      country: null,
      last_request_at: null,
      last_successful_request_at: null,
      last_check_in_at: null,
      last_seen_at: null,
      last_connection_error_code: null,
      retry_at: null,
      created_at: at,
      updated_at: at,
    })
    .execute();
  await insertSession(store.db, {
    ticket_hash: TICKET,
    connection_id: CONNECTION,
    phase: "ready",
    last_error: null,
    recovery_message_set_id: null,
    connection_errors: 0,
    instance_id: null,
    company_file_path: null,
    xml_version: "16.0",
    created_at: new Date(T0),
    last_activity_at: new Date(T0),
    last_work_at: new Date(T0),
    closed_at: null,
  });
});
after(async () => {
  await store.close();
  await drop();
});

let requests = 0;
async function page(
  cursorId: string,
  pageNumber: number,
  remaining: number,
  nowMs: number,
  records = 150,
): Promise<string> {
  const id = `req_cursor${String(++requests).padStart(22, "0")}`;
  await insertRequest(
    store.db,
    newRequestRow(
      {
        id,
        project_id: PROJECT,
        is_test: false,
        end_user_id: END_USER,
        connection_id: CONNECTION,
        operation_id: OP,
        method: "GET",
        path: "/v1/ledger-desktop/invoices",
        mode: "sync",
        status: "queued",
        is_write: false,
        request_xml: null,
        queue_ttl_expires_at: null,
        idempotency_key_present: false,
        previous_request_id: null,
      },
      nowMs,
    ),
  );
  await store.db
    .updateTable("requests")
    .set({ result: JSON.stringify({ page: pageNumber }) })
    .where("id", "=", id)
    .execute();
  await recordPage(store.db, TENANT, {
    cursorId,
    page: pageNumber,
    requestId: id,
    ticketHash: TICKET,
    iteratorId: "{ITERATOR}",
    records,
    remaining,
    nowMs,
  });
  return id;
}

async function openCursor(
  nowMs: number,
  filters: Record<string, unknown> = { customerIds: ["1"] },
): Promise<string> {
  const id = newCursorId();
  await startCursor(store.db, {
    id,
    tenant: TENANT,
    endUserId: END_USER,
    connectionId: CONNECTION,
    operationId: OP,
    filters,
    pageSize: 150,
    nowMs,
  });
  await page(id, 1, 300, nowMs);
  return id;
}

const resume = (
  token: string,
  nowMs: number,
  filters: Record<string, unknown> = {},
  tenant: Tenant = TENANT,
) => resumeCursor(store.db, { tenant, endUserId: END_USER, operationId: OP, token, filters, nowMs });

async function rejects(promise: Promise<unknown>, code: string, reason?: string): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, code, error.message);
    if (reason) assert.equal((error.details as { reason: string }).reason, reason);
    return error;
  }
  assert.fail(`expected ${code}`);
}

describe("application cursors", () => {
  test("the latest cursor continues with the next page, alone or with the same filters", async () => {
    const id = await openCursor(T0);
    const alone = await resume(cursorToken(id, 1), T0 + 1000);
    assert.deepEqual(alone.kind === "continue" && alone.page, 2);
    const same = await resume(cursorToken(id, 1), T0 + 1000, { customerIds: ["1"] });
    assert.equal(same.kind, "continue");
  });

  test("changed, added or dropped filters are CURSOR_PARAMS_MISMATCH", async () => {
    const id = await openCursor(T0);
    await rejects(resume(cursorToken(id, 1), T0 + 1000, { customerIds: ["2"] }), "CURSOR_PARAMS_MISMATCH");
    await rejects(
      resume(cursorToken(id, 1), T0 + 1000, { customerIds: ["1"], accountIds: ["3"] }),
      "CURSOR_PARAMS_MISMATCH",
    );
  });

  test("after about 10 idle seconds the cursor has expired (idle_timeout), with what was served", async () => {
    const id = await openCursor(T0);
    const error = await rejects(
      resume(cursorToken(id, 1), T0 + CURSOR_IDLE_WINDOW_MS + 1),
      "CURSOR_EXPIRED",
      "idle_timeout",
    );
    assert.deepEqual(error.details, { reason: "idle_timeout", pagesServed: 1, recordsServed: 150 });
    // Expired for good: never restarted.
    await rejects(resume(cursorToken(id, 1), T0 + 1), "CURSOR_EXPIRED", "idle_timeout");
  });

  test("a cursor kept busy still ends at the two-minute session cap", async () => {
    const id = await openCursor(T0);
    let now = T0;
    let pageNumber = 1;
    while (now + 9000 < T0 + CURSOR_SESSION_CAP_MS) {
      now += 9000;
      await page(id, ++pageNumber, 1000, now);
    }
    await rejects(
      resume(cursorToken(id, pageNumber), T0 + CURSOR_SESSION_CAP_MS + 1),
      "CURSOR_EXPIRED",
      "session_ended",
    );
  });

  test("a cursor whose connector session ended has expired (session_ended)", async () => {
    const id = await openCursor(T0);
    await store.db
      .updateTable("ledger_cursors")
      .set({ ticket_hash: "another-session" })
      .where("id", "=", id)
      .execute();
    await rejects(resume(cursorToken(id, 1), T0 + 1000), "CURSOR_EXPIRED", "session_ended");
  });

  test("the previous cursor repeats the last page at most twice; older ones are CURSOR_INVALID", async () => {
    const id = await openCursor(T0);
    await page(id, 2, 150, T0 + 1000);
    for (let i = 0; i < 2; i++) {
      const repeat = await resume(cursorToken(id, 1), T0 + 2000);
      assert.equal(repeat.kind, "repeat");
      assert.deepEqual(repeat.kind === "repeat" && repeat.result, { page: 2 });
    }
    await rejects(resume(cursorToken(id, 1), T0 + 2000), "CURSOR_INVALID");
    await rejects(resume(cursorToken(id, 0), T0 + 2000), "CURSOR_INVALID");
    const next = await resume(cursorToken(id, 2), T0 + 2000);
    assert.equal(next.kind, "continue");
  });

  test("a finished list has no next page, and its last page repeats", async () => {
    const id = await openCursor(T0);
    await page(id, 2, 0, T0 + 1000, 20);
    const row = await findCursor(store.db, TENANT, id);
    assert.equal(row?.state, "finished");
    assert.equal((await resume(cursorToken(id, 1), T0 + 2000)).kind, "repeat");
    await rejects(resume(cursorToken(id, 2), T0 + 2000), "CURSOR_INVALID");
  });

  test("foreign, malformed other-project and other-mode cursors are CURSOR_INVALID", async () => {
    const id = await openCursor(T0);
    await rejects(resume("not-a-cursor", T0), "CURSOR_INVALID");
    await rejects(
      resume(cursorToken(id, 1), T0, {}, { projectId: OTHER_PROJECT, mode: "live" }),
      "CURSOR_INVALID",
    );
    await rejects(resume(cursorToken(id, 1), T0, {}, { projectId: PROJECT, mode: "test" }), "CURSOR_INVALID");
    await rejects(
      resumeCursor(store.db, {
        tenant: TENANT,
        endUserId: "eu_other",
        operationId: OP,
        token: cursorToken(id, 1),
        filters: {},
        nowMs: T0,
      }),
      "CURSOR_INVALID",
    );
  });

  /** Ends every open cursor: the eviction tests count the cursors they open themselves. */
  const endOpenCursors = async (): Promise<void> => {
    await store.db
      .updateTable("ledger_cursors")
      .set({ state: "ended", ended_reason: "idle_timeout" })
      .where("state", "=", "open")
      .execute();
  };

  test("a fourth open cursor on a connection evicts the least recently used", async () => {
    await endOpenCursors();
    const first = await openCursor(T0 + 10);
    const second = await openCursor(T0 + 20);
    const third = await openCursor(T0 + 30);
    await page(first, 2, 150, T0 + 40);
    const fourth = await openCursor(T0 + 50);
    await rejects(resume(cursorToken(second, 1), T0 + 60), "CURSOR_EXPIRED", "evicted");
    for (const [id, served] of [
      [first, 2],
      [third, 1],
      [fourth, 1],
    ] as const) {
      assert.equal(
        (await resume(cursorToken(id, served), T0 + 60)).kind,
        "continue",
        `cursor ${id} stays open`,
      );
    }
  });

  test("the cursor just opened is never the one evicted, even when its page is stamped earlier (another instance's clock)", async () => {
    await endOpenCursors();
    const first = await openCursor(T0 + 10);
    const second = await openCursor(T0 + 20);
    const third = await openCursor(T0 + 30);
    // Booked by an instance whose clock is a few milliseconds behind: it sorts first.
    const fourth = await openCursor(T0 + 5);
    const open = (await openCursors(store.db, CONNECTION)).map((c) => c.id).sort();
    assert.deepEqual(
      open,
      [second, third, fourth].sort(),
      "three open; the least recently used other one went",
    );
    await rejects(resume(cursorToken(first, 1), T0 + 60), "CURSOR_EXPIRED", "evicted");
  });
});
