import { sql, type Selectable, type Transaction } from "kysely";
import { json, type Db } from "./database.ts";
import type { DatabaseSchema, RequestsTable, TimelineEntryRow } from "./schema.ts";

export type RequestRow = Selectable<RequestsTable>;
export type NewRequestRow = Omit<RequestRow, "seq" | "timeline" | "warnings" | "result" | "error"> & {
  timeline: TimelineEntryRow[];
  warnings: unknown[];
  result: unknown;
  error: unknown;
};

type Executor = Db | Transaction<DatabaseSchema>;

export async function insertRequest(db: Executor, row: NewRequestRow): Promise<void> {
  await db
    .insertInto("requests")
    .values({
      ...row,
      timeline: json(row.timeline),
      warnings: json(row.warnings),
      result: row.result === null ? null : json(row.result),
      error: row.error === null ? null : json(row.error),
    })
    .execute();
}

export async function findRequest(
  db: Executor,
  projectId: string,
  requestId: string,
): Promise<RequestRow | null> {
  const r = await db
    .selectFrom("requests")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", requestId)
    .executeTakeFirst();
  return r ?? null;
}

/** Internal lookup by ID (connector side, where the project is implied by the connection). */
export async function findRequestById(db: Executor, requestId: string): Promise<RequestRow | null> {
  const r = await db.selectFrom("requests").selectAll().where("id", "=", requestId).executeTakeFirst();
  return r ?? null;
}

export interface RequestListFilters {
  endUserId?: string | undefined;
  status?: string | undefined;
  operationId?: string | undefined;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
}

export async function listRequests(
  db: Db,
  projectId: string,
  filters: RequestListFilters,
  limit: number,
  beforeId: string | null,
): Promise<RequestRow[]> {
  let q = db.selectFrom("requests").selectAll().where("project_id", "=", projectId);
  if (filters.endUserId) q = q.where("end_user_id", "=", filters.endUserId);
  if (filters.status) q = q.where("status", "=", filters.status);
  if (filters.operationId) q = q.where("operation_id", "=", filters.operationId);
  if (filters.createdAfter) q = q.where("created_at", ">=", filters.createdAfter);
  if (filters.createdBefore) q = q.where("created_at", "<=", filters.createdBefore);
  if (beforeId) q = q.where("id", "<", beforeId);
  return q
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
}

export type RequestChanges = Partial<
  Omit<RequestRow, "id" | "seq" | "timeline" | "warnings" | "result" | "error">
> & {
  warnings?: unknown[];
  result?: unknown;
  error?: unknown;
};

/**
 * Moves a request from one of `from` to a new state, appending a timeline entry, only if it is
 * still in one of `from` (the compare-and-set that makes every transition race-free).
 */
export async function transitionRequest(
  db: Executor,
  requestId: string,
  from: readonly string[],
  changes: RequestChanges,
  entry: TimelineEntryRow,
): Promise<RequestRow | null> {
  const { warnings, result, error, ...rest } = changes;
  const r = await db
    .updateTable("requests")
    .set({
      ...rest,
      ...(warnings === undefined ? {} : { warnings: json(warnings) }),
      ...(result === undefined ? {} : { result: result === null ? null : json(result) }),
      ...(error === undefined ? {} : { error: error === null ? null : json(error) }),
      timeline: sql<string>`timeline || ${json([entry])}::jsonb`,
    })
    .where("id", "=", requestId)
    .where("status", "in", [...from])
    .returningAll()
    .executeTakeFirst();
  return r ?? null;
}

/** Requests waiting on a connection, oldest first. */
export async function waitingRequests(
  db: Executor,
  connectionId: string,
  statuses: readonly string[],
): Promise<RequestRow[]> {
  return db
    .selectFrom("requests")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("status", "in", [...statuses])
    .orderBy("seq")
    .execute();
}

/** Position in the connection's queue: 1 is next. */
export async function queuePositionOf(db: Db, row: RequestRow): Promise<number | null> {
  if (!row.connection_id || (row.status !== "queued" && row.status !== "waiting_for_connection")) return null;
  const r = await db
    .selectFrom("requests")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("connection_id", "=", row.connection_id)
    .where("status", "in", ["queued", "waiting_for_connection"])
    .where("seq", "<", row.seq)
    .executeTakeFirstOrThrow();
  return Number(r.n) + 1;
}

export async function countWaiting(db: Executor, connectionId: string): Promise<number> {
  const r = await db
    .selectFrom("requests")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("connection_id", "=", connectionId)
    .where("status", "in", ["queued", "waiting_for_connection"])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Requests in flight in a session, or any `sent` request of a connection. */
export async function sentRequests(db: Executor, connectionId: string): Promise<RequestRow[]> {
  return db
    .selectFrom("requests")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("status", "=", "sent")
    .orderBy("seq")
    .execute();
}

/** Writes whose outcome is unknown and that still have a message set to ask about. */
export async function pendingRecoveries(db: Executor, connectionId: string): Promise<RequestRow[]> {
  return db
    .selectFrom("requests")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("status", "=", "outcome_unknown")
    .where("message_set_id", "is not", null)
    .orderBy("seq")
    .execute();
}

/** Every `sent` request of every connection (restart recovery after a crash). */
export async function allSentRequests(db: Db): Promise<RequestRow[]> {
  return db.selectFrom("requests").selectAll().where("status", "=", "sent").execute();
}
