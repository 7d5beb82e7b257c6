import { ServiceError } from "../errors/service-error.ts";
import { randomToken } from "../platform/random.ts";
import {
  bookPage,
  findCursor,
  findCursorWithSession,
  insertCursor,
  openCursors,
  updateCursor,
  type CursorRow,
} from "../store/cursors.ts";
import type { Db } from "../store/database.ts";
import { findRequest } from "../store/requests.ts";
import { isTestTenant, type Tenant } from "../store/tenant.ts";

/** The tenant a stored row belongs to. */
export function tenantOf(row: { project_id: string; is_test: boolean }): Tenant {
  return { projectId: row.project_id, mode: row.is_test ? "test" : "live" };
}

/**
 * Application cursors (spec: "List parameters (query)", "Cursor rules"; house style §2.7). A cursor
 * is a live iterator inside the end user's application, so it lives and dies with the connector
 * session that started it.
 *
 *   pending ──first page answered, more to come──▶ open ──page answered, nothing left──▶ finished
 *      │                                            │  ──idle 10 s / 2 min cap / session gone──▶ ended
 *      └──first page answered, nothing left──▶ finished      ──a fourth open cursor on the connection──▶ ended (evicted)
 *
 * - Each page's answer carries `nextCursor` = (cursor, pages served); sending it fetches the next page.
 * - Sending the previous page's cursor again repeats the last page, at most twice; anything older,
 *   foreign or malformed is CURSOR_INVALID.
 * - Continuing with changed, added or dropped filters is CURSOR_PARAMS_MISMATCH.
 * - An expired cursor is 410 CURSOR_EXPIRED with `reason`, `pagesServed` and `recordsServed`; the
 *   list is never restarted for the caller.
 */

/** Spec Limits: "Cursor idle window, about 10 seconds after each page". */
export const CURSOR_IDLE_WINDOW_MS = 10_000;
/** Spec Limits: "Query session cap, 2 minutes of continuous work". */
export const CURSOR_SESSION_CAP_MS = 120_000;
/** Spec Limits: "Open paged queries, 3 per connection. A fourth drops the least recently used". */
export const OPEN_CURSORS_PER_CONNECTION = 3;
/** Spec Limits: "Repeat of a finished page, at most twice". */
export const PAGE_REPEATS_MAX = 2;
/** Spec: application cursor lists, `limit` 1 to 150, default 150. */
export const CURSOR_PAGE_SIZE_MAX = 150;

export type CursorEndReason = "idle_timeout" | "session_ended" | "ledger_restarted" | "evicted";

/** `requestID` of a page's query message: which cursor and which page it serves (≤ 50 characters). */
export function pageRequestId(cursorId: string, page: number): string {
  return `cursor:${cursorId}:${page}`;
}

export function parsePageRequestId(value: string | null): { cursorId: string; page: number } | null {
  const match = /^cursor:([A-Za-z0-9_-]+):(\d+)$/.exec(value ?? "");
  return match?.[1] && match[2] ? { cursorId: match[1], page: Number(match[2]) } : null;
}

/** The opaque `nextCursor`: the cursor and the number of pages served when it was given out. */
export function cursorToken(cursorId: string, pagesServed: number): string {
  return Buffer.from(`${cursorId}.${pagesServed}`, "utf8").toString("base64url");
}

function readToken(token: string): { cursorId: string; pagesServed: number } {
  const decoded = Buffer.from(token, "base64url").toString("utf8");
  const match = /^([A-Za-z0-9_-]{16,40})\.(\d{1,6})$/.exec(decoded);
  if (!match?.[1] || !match[2]) throw invalidCursor("The cursor is malformed.");
  return { cursorId: match[1], pagesServed: Number(match[2]) };
}

const invalidCursor = (message: string): ServiceError =>
  new ServiceError("CURSOR_INVALID", { param: "cursor", message });

function expired(cursor: CursorRow, reason: CursorEndReason): ServiceError {
  return new ServiceError("CURSOR_EXPIRED", {
    param: "cursor",
    details: { reason, pagesServed: cursor.pages_served, recordsServed: cursor.records_served },
    message: `The list's cursor expired (${reason}). Start the list again without a cursor; it is never restarted for you.`,
  });
}

/** When an open cursor's next page may still be asked for. */
export function cursorExpiresAt(cursor: Pick<CursorRow, "created_at" | "last_used_at">): Date {
  const idle = cursor.last_used_at.getTime() + CURSOR_IDLE_WINDOW_MS;
  const cap = cursor.created_at.getTime() + CURSOR_SESSION_CAP_MS;
  return new Date(Math.min(idle, cap));
}

export interface StartInput {
  /** From {@link newCursorId}: the first page's query carries it before the cursor row exists. */
  id: string;
  tenant: Tenant;
  endUserId: string;
  connectionId: string;
  operationId: string;
  filters: Record<string, unknown>;
  pageSize: number;
  nowMs: number;
}

/** A new cursor's ID (22 URL-safe characters). */
export function newCursorId(): string {
  return randomToken(16);
}

/** Registers a list's first page before it is queued. */
export async function startCursor(db: Db, input: StartInput): Promise<void> {
  const id = input.id;
  const now = new Date(input.nowMs);
  await insertCursor(db, {
    id,
    project_id: input.tenant.projectId,
    is_test: isTestTenant(input.tenant),
    end_user_id: input.endUserId,
    connection_id: input.connectionId,
    operation_id: input.operationId,
    filters: input.filters,
    page_size: input.pageSize,
    state: "pending",
    ended_reason: null,
    iterator_id: null,
    ticket_hash: null,
    pages_served: 0,
    records_served: 0,
    remaining: null,
    last_request_id: null,
    repeats: 0,
    created_at: now,
    last_used_at: now,
  });
}

export type Resumption =
  | { kind: "continue"; cursor: CursorRow; page: number }
  | { kind: "repeat"; cursor: CursorRow; result: unknown };

export interface ResumeInput {
  tenant: Tenant;
  endUserId: string;
  operationId: string;
  token: string;
  /** The filters sent with the cursor (empty when the cursor is sent alone). */
  filters: Record<string, unknown>;
  nowMs: number;
}

/** Checks a continuation against the cursor rules; says whether to fetch the next page or repeat one. */
export async function resumeCursor(db: Db, input: ResumeInput): Promise<Resumption> {
  const { cursorId, pagesServed } = readToken(input.token);
  // The cursor and its session's state in one statement (decision 0035).
  const found = await findCursorWithSession(db, input.tenant, cursorId);
  const cursor = found?.cursor;
  if (!cursor || cursor.end_user_id !== input.endUserId || cursor.operation_id !== input.operationId) {
    throw invalidCursor("The cursor does not belong to this list.");
  }
  const stored = cursor.filters;
  if (
    Object.keys(input.filters).length > 0 &&
    JSON.stringify(sorted(input.filters)) !== JSON.stringify(sorted(stored))
  ) {
    throw new ServiceError("CURSOR_PARAMS_MISMATCH", {
      param: "cursor",
      message:
        "The filters differ from those of the list's first page. Continue with the cursor alone (optionally a new `limit`) or with the first page's filters unchanged.",
    });
  }
  if (pagesServed === cursor.pages_served - 1 && cursor.last_request_id !== null) {
    return repeatLastPage(db, cursor);
  }
  if (pagesServed !== cursor.pages_served || cursor.state === "pending") {
    throw invalidCursor(
      "The cursor is older than the list's latest page: always use the latest `nextCursor`.",
    );
  }
  if (cursor.state === "finished") throw invalidCursor("The list has no more pages.");
  if (cursor.state === "ended")
    throw expired(cursor, (cursor.ended_reason ?? "session_ended") as CursorEndReason);
  const now = input.nowMs;
  let reason: CursorEndReason | null = null;
  if (now > cursor.last_used_at.getTime() + CURSOR_IDLE_WINDOW_MS) reason = "idle_timeout";
  else if (now > cursor.created_at.getTime() + CURSOR_SESSION_CAP_MS) reason = "session_ended";
  else if (found?.sessionState !== "open") reason = "session_ended";
  if (reason !== null) {
    await endCursor(db, cursor, reason);
    throw expired(cursor, reason);
  }
  return { kind: "continue", cursor, page: cursor.pages_served + 1 };
}

async function repeatLastPage(db: Db, cursor: CursorRow): Promise<Resumption> {
  if (cursor.repeats >= PAGE_REPEATS_MAX) {
    throw invalidCursor(`A page may be repeated at most ${PAGE_REPEATS_MAX} times.`);
  }
  const request = cursor.last_request_id
    ? await findRequest(db, tenantOf(cursor), cursor.last_request_id)
    : null;
  if (!request || request.result === null) throw invalidCursor("The page to repeat is no longer available.");
  await updateCursor(db, cursor.id, cursor.state, { repeats: cursor.repeats + 1 });
  return { kind: "repeat", cursor, result: request.result };
}

function sorted(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)));
}

export async function endCursor(db: Db, cursor: CursorRow, reason: CursorEndReason): Promise<void> {
  await updateCursor(db, cursor.id, cursor.state, { state: "ended", ended_reason: reason });
}

/**
 * A list page whose answer will never be served (too large, decision 0019): the application's
 * iterator has moved past it, so the list cannot go on without losing those records. Its cursor
 * ends (`session_ended`: the query session is over); continuing it is CURSOR_EXPIRED.
 */
export async function endCursorOfPage(
  db: Db,
  request: { project_id: string; is_test: boolean; request_xml: string | null },
): Promise<void> {
  const paged = parsePageRequestId(/requestID="(cursor:[^"]+)"/.exec(request.request_xml ?? "")?.[1] ?? null);
  if (!paged) return;
  const cursor = await findCursor(db, tenantOf(request), paged.cursorId);
  if (cursor && cursor.state !== "ended") await endCursor(db, cursor, "session_ended");
}

export interface PageServed {
  cursorId: string;
  page: number;
  requestId: string;
  ticketHash: string;
  iteratorId: string | null;
  records: number;
  remaining: number | null;
  nowMs: number;
}

/**
 * Books a page the application answered: the cursor's counters and iterator, and, when a first
 * page leaves more than the connection's open-cursor limit, the eviction of the least recently used.
 * Returns the cursor as it is now, or null when it is unknown.
 */
export async function recordPage(db: Db, tenant: Tenant, served: PageServed): Promise<CursorRow | null> {
  const more = (served.remaining ?? 0) > 0 && served.iteratorId !== null;
  // One statement reads and books the page (decision 0035); a page that leaves no iterator keeps
  // the one the cursor has, and the first session that served a page stays the cursor's.
  const booked = await bookPage(db, tenant, served.cursorId, {
    state: more ? "open" : "finished",
    iteratorId: served.iteratorId,
    ticketHash: served.ticketHash,
    pagesServed: served.page,
    records: served.records,
    remaining: served.remaining,
    lastRequestId: served.requestId,
    at: new Date(served.nowMs),
  });
  if (!booked) return null;
  const { cursor, previousState } = booked;
  if (more && previousState === "pending") {
    // The new cursor is kept whatever its stamp says (a page booked by an instance whose clock is
    // behind, or in the same millisecond, can sort first): the least recently used *others* go.
    const others = (await openCursors(db, cursor.connection_id)).filter((c) => c.id !== cursor.id);
    for (const stale of others.slice(0, Math.max(0, others.length - (OPEN_CURSORS_PER_CONNECTION - 1)))) {
      await endCursor(db, stale, "evicted");
    }
  }
  return cursor;
}
