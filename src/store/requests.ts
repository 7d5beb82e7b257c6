import { sql, type RawBuilder, type Selectable, type Transaction } from "kysely";
import { jsonTextOnce } from "../platform/json-text.ts";
import { json, type Db, type Store } from "./database.ts";
import type { ConnectorSessionRow } from "./connector-sessions.ts";
import { requestEventInsert, type RequestEventInput } from "./events.ts";
import type { DatabaseSchema, RequestAnswersTable, RequestsTable, TimelineEntryRow } from "./schema.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";
import { chargeStatement, type UnlimitedCharge } from "./usage.ts";

export type RequestRow = Selectable<RequestsTable>;
export type NewRequestRow = Omit<
  RequestRow,
  | "seq"
  | "timeline"
  | "warnings"
  | "result"
  | "error"
  | "caller_gone_at"
  | "caller_instance_id"
  | "background"
  | "diagnosis"
  | "write_targets"
  | "batch"
  | "program"
  | "step"
  | "input"
  | "request_on_error"
  | "request_secrets"
  | "alone"
  | "set_position"
  | "traceparent"
> & {
  /** The W3C `traceparent` of the Request's trace, while tracing is on (migration 0039). */
  traceparent?: string | null;
  /** Goes in a message set of its own (a passthrough, a batch: migration 0034). */
  alone?: boolean;
  /** A batch's members (ledger/batch.ts). */
  batch?: unknown;
  /** A Request of several message sets: its operation's plan (decision 0046). */
  program?: unknown;
  /** The call's JSON input, as JSON text (the messages view). */
  input?: string | null;
  /** The message set's `onError` (the messages are in `request_xml`). */
  request_on_error?: "stopOnError" | "continueOnError" | null;
  /** The secret values `request_xml` holds masked, sealed (decision 0032); absent when it holds none. */
  request_secrets?: string | null;
  /** The existing records a write changes (spaced a second apart by the claim). */
  write_targets?: string[];
  /** A request the service makes for itself; developers' requests go first. */
  background?: boolean;
  /** Set for sync calls: the instance whose HTTP call waits for the result. */
  caller_instance_id?: string | null;
  timeline: TimelineEntryRow[];
  warnings: unknown[];
  result: unknown;
  error: unknown;
};

type Executor = Db | Transaction<DatabaseSchema>;

/**
 * The wake-up that tells every instance's cache of settled Requests (requests/settled-cache.ts)
 * that stored Requests were deleted (the retention sweep, an end user deleted with its Requests):
 * through LISTEN/NOTIFY on PostgreSQL.
 */
export const REQUESTS_GONE_CHANNEL = "requests-gone";

/** Tells every instance that stored Requests were deleted (their caches forget what they kept). */
export async function requestsGone(store: Pick<Store, "notifier">): Promise<void> {
  await store.notifier.notify(REQUESTS_GONE_CHANNEL);
}

/**
 * Where a Request's sealed secret values are stored (decision 0032): the associated data that binds
 * them to their row, so that they open nowhere else.
 */
export function requestSecretsPlace(requestId: string): string {
  return `requests.request_secrets:${requestId}`;
}

export async function insertRequest(db: Executor, row: NewRequestRow): Promise<RequestRow> {
  return db.insertInto("requests").values(requestValues(row)).returningAll().executeTakeFirstOrThrow();
}

/**
 * Stores a new Request and counts it in its project's usage in one statement (the charge is a
 * data-modifying `with` of the insert: both happen or neither), for a charge that no quota limits
 * (a quota needs the transaction of `insertRequest`, since its refusal changes the row). Three
 * statements fewer on every admission than a transaction (decision 0029). `wakeUp`, a notifier's
 * carried wake-up, is sent by the same statement.
 */
export async function insertChargedRequest(
  db: Db,
  row: NewRequestRow,
  charge: UnlimitedCharge,
  wakeUp: RawBuilder<unknown> | null = null,
): Promise<RequestRow> {
  const insert = db
    .with("charged", (qc) => chargeStatement(qc, charge, null))
    .insertInto("requests")
    .values(requestValues(row))
    .returningAll();
  if (!wakeUp) return insert.executeTakeFirstOrThrow();
  // The wake-up of other instances rides on the insert (a notifier's `carried` expression).
  const { woken: _woken, ...stored } = await insert.returning(wakeUp.as("woken")).executeTakeFirstOrThrow();
  return stored;
}

function requestValues(row: NewRequestRow) {
  return {
    ...row,
    timeline: json(row.timeline),
    warnings: json(row.warnings),
    result: row.result === null ? null : json(row.result),
    error: row.error === null ? null : json(row.error),
    write_targets: row.write_targets ? json(row.write_targets) : null,
    batch: row.batch ? json(row.batch) : null,
    program: row.program ? json(row.program) : null,
  };
}

/** A request of the tenant (project and mode, decision 0005); null for anyone else's. */
export async function findRequest(
  db: Executor,
  tenant: Tenant,
  requestId: string,
): Promise<RequestRow | null> {
  const r = await db
    .selectFrom("requests")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", requestId)
    .executeTakeFirst();
  return r ?? null;
}

/** Internal lookup by ID (connector side, where the project is implied by the connection). */
export async function findRequestById(db: Executor, requestId: string): Promise<RequestRow | null> {
  const r = await db.selectFrom("requests").selectAll().where("id", "=", requestId).executeTakeFirst();
  return r ?? null;
}

/** The statuses of the Requests of `ids` that exist, by ID (a light read: no result or messages). */
export async function requestStatuses(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom("requests")
    .select(["id", "status"])
    .where("id", "in", [...ids])
    .execute();
  return new Map(rows.map((r) => [r.id, r.status]));
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
  tenant: Tenant,
  filters: RequestListFilters,
  limit: number,
  beforeId: string | null,
): Promise<RequestRow[]> {
  let q = db
    .selectFrom("requests")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant));
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
  Omit<
    RequestRow,
    | "id"
    | "seq"
    | "timeline"
    | "warnings"
    | "result"
    | "error"
    | "diagnosis"
    | "write_targets"
    | "batch"
    | "program"
    | "input"
  >
> & {
  warnings?: unknown[];
  result?: unknown;
  error?: unknown;
  diagnosis?: unknown;
  /** A Request of several message sets: its plan after an answered set (decision 0046). */
  program?: unknown;
  /** The existing records the next message set changes. */
  write_targets?: string[] | null;
};

/** Activity stamps written in the same statement as a transition, only if the transition happens. */
export interface TransitionStamps {
  /** The connector session that carried the request did work now. */
  session?: { ticketHash: string; at: Date };
  /** The connection completed a request successfully now. */
  connectionSucceeded?: { connectionId: string; at: Date };
  /** The application's answer that settles the request (its XML null when too large to keep). */
  answer?: { xml: string | null; bytes: number; at: Date };
}

/**
 * Wake-ups of other instances that a transition's statement sends when it moves the request
 * (notifiers' `carried` expressions): `onMove` with the move, `onEvent` only when the request event
 * was written too.
 */
export interface CarriedWakeUps {
  onMove: ReadonlyArray<RawBuilder<unknown>>;
  onEvent: RawBuilder<unknown> | null;
}

const NO_WAKE_UPS: CarriedWakeUps = { onMove: [], onEvent: null };

/** Where a transition may start, and the requests it applies to (the engine's lifecycle table). */
export interface TransitionGuard {
  from: readonly string[];
  mode?: RequestRow["mode"];
  isWrite?: boolean;
  /** Only a Request none of whose message sets was answered yet (`step` 0; decision 0046). */
  unstarted?: boolean;
}

/**
 * Moves a request from one of `guard.from` to a new state, appending a timeline entry, only if it
 * is still in one of them and matches the guard's mode and kind (the compare-and-set that makes
 * every transition race-free). Optional
 * stamps on the session and connection ride in the same statement, and so does the request event
 * (the outbox, store/events.ts) when `event` is given: `eventWritten` says whether one was written.
 */
export async function transitionRequest(
  db: Executor,
  requestId: string,
  guard: TransitionGuard,
  changes: RequestChanges,
  entry: TimelineEntryRow,
  stamps: TransitionStamps = {},
  event: RequestEventInput | null = null,
  wakeUps: CarriedWakeUps = NO_WAKE_UPS,
): Promise<(RequestRow & { eventWritten: boolean }) | null> {
  const { warnings, result, error, diagnosis, program, write_targets, ...rest } = changes;
  const moved = db.with("moved", (q) => {
    let update = q
      .updateTable("requests")
      .set({
        ...rest,
        ...(warnings === undefined ? {} : { warnings: json(warnings) }),
        // A result's text is taken once: a sync caller's reply sends the same text (decision 0035).
        ...(result === undefined ? {} : { result: resultText(result) }),
        ...(error === undefined ? {} : { error: error === null ? null : json(error) }),
        ...(diagnosis === undefined ? {} : { diagnosis: diagnosis === null ? null : json(diagnosis) }),
        ...(program === undefined ? {} : { program: program === null ? null : json(program) }),
        ...(write_targets === undefined
          ? {}
          : { write_targets: write_targets === null ? null : json(write_targets) }),
        timeline: sql<string>`timeline || ${json([entry])}::jsonb`,
      })
      .where("id", "=", requestId)
      .where("status", "in", [...guard.from]);
    if (guard.mode !== undefined) update = update.where("mode", "=", guard.mode);
    if (guard.isWrite !== undefined) update = update.where("is_write", "=", guard.isWrite);
    if (guard.unstarted === true) update = update.where("step", "=", 0);
    return update.returningAll();
  });
  const { session, connectionSucceeded } = stamps;
  const withSession = session
    ? moved.with("stamp_session", (q) =>
        q
          .updateTable("connector_sessions")
          .set({ last_work_at: session.at })
          .where("ticket_hash", "=", session.ticketHash)
          .where((eb) => eb.exists(eb.selectFrom("moved").select("moved.id"))),
      )
    : moved;
  const withConnection = connectionSucceeded
    ? withSession.with("stamp_connection", (q) =>
        q
          .updateTable("connections")
          .set({ last_successful_request_at: connectionSucceeded.at })
          .where("id", "=", connectionSucceeded.connectionId)
          .where((eb) => eb.exists(eb.selectFrom("moved").select("moved.id"))),
      )
    : withSession;
  const { answer } = stamps;
  const withAnswer = answer
    ? withConnection.with("keep_answer", (q) =>
        q
          .insertInto("request_answers")
          .columns(["request_id", "answer_xml", "answer_bytes", "received_at"])
          .expression((eb) =>
            eb
              .selectFrom("moved")
              .select([
                "moved.id",
                sql<string | null>`${answer.xml}::text`.as("answer_xml"),
                sql<number>`${answer.bytes}::integer`.as("answer_bytes"),
                sql<Date>`${answer.at}::timestamptz`.as("received_at"),
              ]),
          )
          .onConflict((oc) => oc.column("request_id").doNothing()),
      )
    : withConnection;
  const wakeUpColumns = wakeUps.onMove.map((wakeUp, i) => wakeUp.as(`woken_${i}`));
  // A result the transition sets is not read back: the caller holds it (decision 0035).
  const columns = result === undefined ? [...COLUMNS_BUT_RESULT, "result" as const] : [...COLUMNS_BUT_RESULT];
  const withResult = (row: RequestRow): RequestRow => (result === undefined ? row : { ...row, result });
  if (!event) {
    const r = await withAnswer.selectFrom("moved").select(columns).select(wakeUpColumns).executeTakeFirst();
    return r ? { ...withResult(withoutWakeUps(r)), eventWritten: false } : null;
  }
  const onEvent = wakeUps.onEvent;
  const r = await withAnswer
    .with("event", () => requestEventInsert(event))
    .selectFrom("moved")
    .select(columns)
    .select(sql<boolean>`exists (select 1 from event)`.as("event_written"))
    .select(wakeUpColumns)
    .select(
      onEvent ? [sql`case when exists (select 1 from event) then ${onEvent} end`.as("woken_event")] : [],
    )
    .executeTakeFirst();
  if (!r) return null;
  const { event_written: eventWritten, ...row } = r;
  return { ...withResult(withoutWakeUps(row)), eventWritten };
}

/**
 * Every column of `requests` but `result`: what a settling transition reads back when it sets the
 * result itself (a list page's result is hundreds of kilobytes of JSON that the statement would
 * send back and the driver parse again, for a caller that already holds it; decision 0035). A
 * column added to the table and not listed here fails the type check below.
 */
const COLUMNS_BUT_RESULT = [
  "id",
  "seq",
  "project_id",
  "is_test",
  "end_user_id",
  "connection_id",
  "operation_id",
  "method",
  "path",
  "mode",
  "status",
  "outcome",
  "is_write",
  "request_xml",
  "request_on_error",
  "request_secrets",
  "message_set_id",
  "set_position",
  "alone",
  "ticket_hash",
  "sent_at",
  "connector_asked_at",
  "completed_at",
  "queue_ttl_expires_at",
  "idempotency_key_present",
  "previous_request_id",
  "waiting_reason",
  "recovered",
  "xml_version",
  "status_code",
  "status_severity",
  "timeline",
  "warnings",
  "error",
  "created_at",
  "updated_at",
  "caller_gone_at",
  "caller_instance_id",
  "background",
  "diagnosis",
  "write_targets",
  "input",
  "batch",
  "program",
  "step",
  "traceparent",
] as const satisfies ReadonlyArray<Exclude<keyof RequestsTable, "result">>;

/** True only when {@link COLUMNS_BUT_RESULT} names every column but `result`. */
type EveryColumnListed = [
  Exclude<keyof RequestsTable, "result" | (typeof COLUMNS_BUT_RESULT)[number]>,
] extends [never]
  ? true
  : false;
const everyColumnListed: EveryColumnListed = true;
void everyColumnListed;

/** A result as stored: its JSON text, the one the HTTP reply sends too (platform/json-text.ts). */
function resultText(result: unknown): string | null {
  if (result === null) return null;
  return typeof result === "object" ? jsonTextOnce(result) : json(result);
}

/** The row without the columns its statement's carried wake-ups returned. */
function withoutWakeUps<T extends object>(row: T): RequestRow {
  const stored = { ...row } as Record<string, unknown>;
  for (const key of Object.keys(stored)) if (key.startsWith("woken_")) delete stored[key];
  return stored as RequestRow;
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

export interface ClaimInput {
  connectionId: string;
  ticketHash: string;
  xmlVersion: string;
  now: Date;
  /** The message-set ID of what is handed over (sent as `newMessageSetID` when it holds a write). */
  messageSetId: string;
  /** Most Requests in one message set, and most bytes of their messages (decision 0036). */
  setMaxRequests: number;
  setMaxBytes: number;
  /** The hand-over transition (lifecycle table): claimed from `from`, committed as `to`. */
  handOver: { from: readonly string[]; to: string };
  /** Statuses a request past its queue TTL may be ended from (lifecycle table). */
  expirable: readonly string[];
  /** The hand-over's timeline entry (its `elapsedMs` is computed from the row). */
  entry: TimelineEntryRow;
  /** Consecutive writes to one record are sent more than this apart (spec: common record fields); 0: not spaced. */
  spacingMs: number;
  /** The statuses of a request that is not settled (lifecycle table): `unsettled` tells whether any is left. */
  unsettled: readonly string[];
  /**
   * Set when the session was not read first: nothing is claimed (and no recovery started) unless the
   * session is open and held by this instance ID when the statement runs.
   */
  heldBy?: string | undefined;
}

/** A request the claim handed over, in its message set's order. */
export type ClaimedRequest = Pick<
  RequestRow,
  | "id"
  | "is_write"
  | "created_at"
  | "request_xml"
  | "request_on_error"
  | "message_set_id"
  | "request_secrets"
  | "set_position"
  | "traceparent"
>;

export interface ClaimResult {
  /**
   * The requests handed over as one message set, in order (empty: none), each with its sealed
   * secret values as they were before the claim cleared them (decision 0032): the hand-over puts
   * them back into `request_xml` for the connector only.
   */
  claimed: ClaimedRequest[];
  /** A write whose outcome is unknown: its recovery query goes first, and nothing is claimed. */
  recoveryMessageSetId: string | null;
  /** Unsent requests of the connection whose queue TTL has passed (to be ended). */
  hasExpired: boolean;
  /** Whether the connection has a request in one of the `unsettled` statuses (before this claim). */
  unsettled: boolean;
  /**
   * The requests this session was handed and has not answered (one message set): asking for more
   * work means their answer was lost. Nothing is claimed while they are `sent`.
   */
  lostRequestIds: string[];
  /**
   * The next request writes to a record the service wrote less than `spacingMs` ago: nothing is
   * claimed before this time.
   */
  spacedUntil: Date | null;
  /** False when the session was not ready (or, with `heldBy`, not held by it): nothing was done. */
  sessionHeld: boolean;
}

/**
 * Statuses (the lifecycle table's constants, never input) written into a statement as literals:
 * the planner can then match the partial indexes on `status` (`requests_queue`,
 * `requests_in_flight`) in the prepared statement's generic plan, and keep that plan instead of
 * planning the statement again on every execution (decision 0029).
 */
function statuses(list: readonly string[]) {
  return sql.join(list.map((status) => sql.lit(status)));
}

/**
 * The connector's next piece of work, in one statement: a pending recovery (stamped on the
 * session), else the oldest requests in the hand-over's `from` statuses whose TTL has not passed,
 * only when nothing else is in flight (in the hand-over's `to` status), as one message set
 * (decision 0036): the head, and after it, in queue order, up to `setMaxRequests` in all and
 * `setMaxBytes` of messages, every next request that may share a message set — stopping at the
 * first that may not: one that goes alone, one with sealed secret values, one writing a record an
 * earlier member writes or that was written less than the spacing ago. The claim locks the rows
 * (SKIP LOCKED, so two instances never claim the same row), commits the hand-over's `to` status
 * with their message-set ID and places, and stamps the session and connection. Requests still in
 * flight in this very session are reported as lost (the connector asks again without having answered).
 */
export async function claimNextRequest(db: Db, c: ClaimInput): Promise<ClaimResult> {
  // Work is handed only to a session in the `ready` phase (connector/session/phases.ts): nothing else
  // of it in flight; with `heldBy`, only while this instance holds it (decision 0027).
  const held =
    c.heldBy === undefined
      ? sql<boolean>`exists (select 1 from connector_sessions
          where ticket_hash = ${c.ticketHash} and phase = 'ready')`
      : sql<boolean>`exists (select 1 from connector_sessions
          where ticket_hash = ${c.ticketHash} and phase = 'ready' and instance_id = ${c.heldBy})`;
  const spacedSince = new Date(c.now.getTime() - c.spacingMs);
  const result = await sql<{
    id: string | null;
    is_write: boolean | null;
    created_at: Date | null;
    request_xml: string | null;
    request_on_error: string | null;
    message_set_id: string | null;
    request_secrets: string | null;
    set_position: number | null;
    traceparent: string | null;
    recovery_id: string | null;
    lost_ids: string[] | null;
    has_expired: boolean;
    unsettled: boolean;
    spaced_since: Date | string | null;
    session_held: boolean;
  }>`
    with recovery as (
      select message_set_id from requests
      where connection_id = ${c.connectionId} and status = 'outcome_unknown' and message_set_id is not null
        and ${held}
      order by seq limit 1
    ), mark_recovery as (
      -- The session machine's recover transition (ready → recovering), in the claim's statement.
      update connector_sessions set phase = 'recovering',
        recovery_message_set_id = (select message_set_id from recovery), last_work_at = ${c.now}
      where ticket_hash = ${c.ticketHash} and phase = 'ready' and exists (select 1 from recovery)
    ), candidates as (
      select id, write_targets, request_secrets, background, seq,
        -- Alone: its own message set, sealed secret values (cleared by this claim), or a whole
        -- document stored before messages were kept apart (request_on_error null).
        alone or request_secrets is not null or request_on_error is null as solo,
        octet_length(coalesce(request_xml, '')) as bytes
      from requests
      where connection_id = ${c.connectionId} and status in (${statuses(c.handOver.from)})
        and (queue_ttl_expires_at is null or queue_ttl_expires_at > ${c.now})
        and not exists (select 1 from requests where connection_id = ${c.connectionId} and status = ${sql.lit(c.handOver.to)})
        and not exists (select 1 from recovery)
        and ${held}
      -- Developers' requests first; the service's own (background) after them, each in order.
      order by background, seq limit ${c.setMaxRequests}
      for update skip locked
    ), ranked as (
      select candidates.*, row_number() over (order by background, seq) as n,
        sum(bytes) over (order by background, seq) as running_bytes,
        -- A write to a record written less than the spacing ago waits, and so does what follows it.
        (select max(w.written_at) from record_writes w
          where candidates.write_targets is not null and w.connection_id = ${c.connectionId}
            and w.record_id in (select jsonb_array_elements_text(candidates.write_targets))
            and ${c.spacingMs}::int > 0 and w.written_at >= ${spacedSince}) as last_write
      from candidates
    ), checked as (
      select ranked.*,
        -- Two writes to one record never share a set: their revision numbers would collide.
        exists (select 1 from ranked earlier
          where earlier.n < ranked.n and ranked.write_targets is not null and earlier.write_targets is not null
            and earlier.write_targets ?| array(select jsonb_array_elements_text(ranked.write_targets))) as shares_record
      from ranked
    ), joinable as (
      select checked.*, bool_and(
          case when n = 1 then last_write is null
          else not solo and last_write is null and not shares_record and running_bytes <= ${c.setMaxBytes} end
        ) over (order by n) as joins,
        first_value(solo) over (order by n) as head_solo
      from checked
    ), spaced as (
      select last_write from ranked where n = 1
    ), next as (
      select id, write_targets, request_secrets, n from joinable where joins and (n = 1 or not head_solo)
    ), noted as (
      insert into record_writes (connection_id, record_id, written_at)
      select ${c.connectionId}, jsonb_array_elements_text(next.write_targets), ${c.now} from next
      where next.write_targets is not null
      on conflict (connection_id, record_id) do update set written_at = excluded.written_at
    ), claimed as (
      update requests r set
        status = ${sql.lit(c.handOver.to)}, sent_at = coalesce(r.sent_at, ${c.now}), ticket_hash = ${c.ticketHash}, waiting_reason = null,
        -- When the Web Connector opened this session (decision 0047: the wait's connector part ends there).
        -- (A Request of several message sets keeps its first set's stamps: decision 0046.)
        connector_asked_at = coalesce(r.connector_asked_at, (select created_at from connector_sessions where ticket_hash = ${c.ticketHash})),
        xml_version = ${c.xmlVersion}, updated_at = ${c.now}, set_position = next.n - 1,
        -- A write is sent with the set's ID (its recovery asks for it); so is every member of a set of several.
        message_set_id = case when r.is_write or (select count(*) from next) > 1 then ${c.messageSetId} else null end,
        -- Secrets are kept only while the request waits: gone with the hand-over (decision 0032).
        request_secrets = null,
        outcome = case when r.is_write then 'pending' else 'not_applicable' end,
        timeline = r.timeline || jsonb_set(${json([c.entry])}::jsonb, '{0,elapsedMs}',
          to_jsonb(greatest(0, floor(extract(epoch from (${c.now}::timestamptz - r.created_at)) * 1000)::bigint)))
      from next where r.id = next.id
      returning r.id, r.is_write, r.created_at, r.request_xml, r.request_on_error, r.message_set_id,
        next.request_secrets, r.set_position, r.traceparent
    ), touch_session as (
      update connector_sessions set last_work_at = ${c.now}
      where ticket_hash = ${c.ticketHash} and exists (select 1 from claimed)
    ), touch_connection as (
      update connections set last_request_at = ${c.now}
      where id = ${c.connectionId} and exists (select 1 from claimed)
    )
    select claimed.*, (select message_set_id from recovery) as recovery_id,
      (select last_write from spaced) as spaced_since,
      (select array_agg(id order by set_position) from requests
        where connection_id = ${c.connectionId} and status = ${sql.lit(c.handOver.to)} and ticket_hash = ${c.ticketHash}
          and ${held}) as lost_ids,
      exists (
        select 1 from requests
        where connection_id = ${c.connectionId} and status in (${statuses(c.expirable)})
          and queue_ttl_expires_at <= ${c.now}
      ) as has_expired,
      exists (
        select 1 from requests where connection_id = ${c.connectionId} and status in (${statuses(c.unsettled)})
      ) as unsettled,
      ${held} as session_held
    from (select 1) as one left join claimed on true
    order by claimed.set_position
  `.execute(db);
  const rows = result.rows;
  const row = rows[0];
  const claimed: ClaimedRequest[] = [];
  for (const r of rows) {
    if (r.id == null || r.is_write === null || r.created_at === null) continue;
    claimed.push({
      id: r.id,
      is_write: r.is_write,
      created_at: r.created_at,
      request_xml: r.request_xml,
      request_on_error: r.request_on_error,
      message_set_id: r.message_set_id,
      request_secrets: r.request_secrets,
      set_position: r.set_position,
      traceparent: r.traceparent,
    });
  }
  return {
    claimed,
    recoveryMessageSetId: row?.recovery_id ?? null,
    hasExpired: row?.has_expired ?? false,
    unsettled: row?.unsettled ?? true,
    lostRequestIds: row?.lost_ids ?? [],
    spacedUntil:
      row?.spaced_since == null ? null : new Date(new Date(row.spaced_since).getTime() + c.spacingMs + 1),
    sessionHeld: row?.session_held ?? false,
  };
}

/** The service wrote to these records of a connection at `at` (its next writes to them wait). */
export async function noteRecordWrites(
  db: Executor,
  connectionId: string,
  recordIds: readonly string[],
  at: Date,
): Promise<void> {
  await db
    .insertInto("record_writes")
    .values(recordIds.map((record_id) => ({ connection_id: connectionId, record_id, written_at: at })))
    .onConflict((oc) =>
      oc
        .columns(["connection_id", "record_id"])
        .doUpdateSet((eb) => ({ written_at: eb.ref("excluded.written_at") })),
    )
    .execute();
}

/** Unsent requests of a connection whose queue TTL has passed. */
export async function expiredUnsent(db: Db, connectionId: string, now: Date): Promise<RequestRow[]> {
  return db
    .selectFrom("requests")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("status", "in", ["queued", "waiting_for_connection"])
    .where("queue_ttl_expires_at", "<=", now)
    .execute();
}

/**
 * A connector session with the requests it has in flight (one message set, in its order; none when
 * nothing is), in one statement (the connector's answer path). Null for an unknown ticket.
 */
export async function findSessionWithInFlight(
  db: Db,
  ticketHash: string,
): Promise<{ session: ConnectorSessionRow; inFlight: RequestRow[] } | null> {
  const rows = await db
    .selectFrom("connector_sessions as s")
    .leftJoin("requests as r", (join) =>
      join.onRef("r.ticket_hash", "=", "s.ticket_hash").on("r.status", "=", "sent"),
    )
    .selectAll("r")
    .select(sql<ConnectorSessionRow>`to_jsonb(s)`.as("session_json"))
    .where("s.ticket_hash", "=", ticketHash)
    .orderBy("r.set_position")
    .orderBy("r.seq")
    .execute();
  const first = rows[0];
  if (!first) return null;
  // Left-join columns are all null when nothing is in flight; otherwise each row is a whole request,
  // in the order of the message set they were handed over in.
  const inFlight: RequestRow[] = [];
  for (const { session_json: _session, ...request } of rows) {
    if (request.id !== null) inFlight.push(request as RequestRow);
  }
  return { session: sessionFromJson(first.session_json), inFlight };
}

/** A session row read back from `to_jsonb` (timestamps arrive as ISO strings). */
function sessionFromJson(value: ConnectorSessionRow): ConnectorSessionRow {
  const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
  return {
    ...value,
    created_at: date(value.created_at),
    last_activity_at: date(value.last_activity_at),
    last_work_at: date(value.last_work_at),
    closed_at: value.closed_at === null ? null : date(value.closed_at),
  };
}

/**
 * A sync caller stops waiting for a request that has not settled (timeout after sending, a
 * disconnect): its request events then go to every subscribed endpoint (spec: Events,
 * `includeSyncRequests`). A compare-and-set: false when the request settled first (the caller gets
 * the result).
 */
export async function markCallerGone(db: Db, requestId: string, at: Date): Promise<boolean> {
  const r = await db
    .updateTable("requests")
    .set({ caller_gone_at: at })
    .where("id", "=", requestId)
    .where("mode", "=", "sync")
    .where("status", "in", ["queued", "waiting_for_connection", "sent"])
    .where("caller_gone_at", "is", null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * The sync callers held by stopped instances are gone with them: their unsettled requests are
 * marked (so their events go to every endpoint). `legacy` also takes requests accepted before
 * instances were recorded (no `caller_instance_id`). A live instance's callers are never touched.
 */
export async function markSyncCallersGone(
  db: Db,
  owners: { instanceIds: readonly string[]; legacy: boolean },
  at: Date,
): Promise<number> {
  if (owners.instanceIds.length === 0 && !owners.legacy) return 0;
  const r = await db
    .updateTable("requests")
    .set({ caller_gone_at: at })
    .where("mode", "=", "sync")
    .where("status", "in", ["queued", "waiting_for_connection", "sent"])
    .where("caller_gone_at", "is", null)
    .where((eb) =>
      eb.or([
        ...(owners.instanceIds.length > 0 ? [eb("caller_instance_id", "in", [...owners.instanceIds])] : []),
        ...(owners.legacy ? [eb("caller_instance_id", "is", null)] : []),
      ]),
    )
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** The answer kept with a Request when it settled (migration 0021); undefined when none was kept. */
export async function findRequestAnswer(
  db: Executor,
  requestId: string,
): Promise<Selectable<RequestAnswersTable> | undefined> {
  return db.selectFrom("request_answers").selectAll().where("request_id", "=", requestId).executeTakeFirst();
}

/** The W3C `traceparent` of a Request's trace (decision 0048), or null (tracing was off, no such Request). */
export async function findRequestTraceparent(db: Executor, requestId: string): Promise<string | null> {
  const row = await db
    .selectFrom("requests")
    .select("traceparent")
    .where("id", "=", requestId)
    .executeTakeFirst();
  return row?.traceparent ?? null;
}
