import { sql, type RawBuilder, type Transaction } from "kysely";
import type { Db } from "./database.ts";
import type { DatabaseSchema } from "./schema.ts";

/**
 * The event outbox (architecture §5, house style "Webhooks"). An event row is written in the same
 * statement or transaction as the state change that causes it, so a crash can neither lose it nor
 * invent it; the webhook dispatcher later fans it out into deliveries. A row is written only when
 * an enabled endpoint of the project and key mode would take it (nobody else reads events), which keeps
 * state changes without subscribers free of outbox traffic. The `data` shapes are documented in
 * `webhooks/event-types.ts`; this file only persists them.
 */
type Executor = Db | Transaction<DatabaseSchema>;

/** Notifier channel fired after an event is committed: wakes the webhook dispatcher. */
export const EVENTS_CHANNEL = "events";

/** UTC ISO 8601 with milliseconds (the platform timestamp format) of a `timestamptz` expression. */
function iso(column: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<string | null>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * True when an enabled endpoint of `project` in the mode `isTest` subscribes to `type` (exactly, or through its
 * family wildcard such as `request.*`) and, for a sync request whose caller already got the result,
 * asks for such events (`includeSyncRequests`). Mirrors `webhooks/event-types.ts` `subscribes`.
 */
function subscribed(
  project: RawBuilder<unknown>,
  isTest: RawBuilder<unknown>,
  type: RawBuilder<unknown>,
  callerReceivedResult: RawBuilder<unknown>,
): RawBuilder<boolean> {
  return sql<boolean>`exists (
    select 1 from webhook_endpoints e
    where e.project_id = ${project} and e.is_test = ${isTest} and e.enabled
      and (e.event_types @> jsonb_build_array(${type}::text)
        or e.event_types @> jsonb_build_array(split_part(${type}::text, '.', 1) || '.*'))
      and (e.include_sync_requests or not ${callerReceivedResult}))`;
}

/** What the Request engine passes to a transition that may cause an event. */
export interface RequestEventInput {
  /** The `evt_` ID, used only if the event is written. */
  id: string;
  at: Date;
}

/**
 * The outbox half of a request transition: a CTE body (over the transition's `moved` CTE) that
 * inserts the request event, if the new status causes one and someone subscribes. The previous
 * status is the timeline's second-to-last entry (every transition appends one), which tells a
 * resolution of `outcome_unknown` (`request.outcome_resolved`) from a first completion.
 * The event's mode is the request's (the mode of the key that made it).
 */
export function requestEventInsert(event: RequestEventInput): RawBuilder<{ id: string }> {
  const previous = sql`(m.timeline -> -2 ->> 'status')`;
  const type = sql<string | null>`case
      when m.status = 'outcome_unknown' then 'request.outcome_unknown'
      when m.status in ('succeeded', 'failed') and ${previous} = 'outcome_unknown' then 'request.outcome_resolved'
      when m.status in ('succeeded', 'failed', 'canceled') then 'request.' || m.status
    end`;
  const callerReceived = sql<boolean>`(m.mode = 'sync' and m.caller_gone_at is null
      and m.status <> 'outcome_unknown' and ${previous} is distinct from 'outcome_unknown')`;
  // Parenthesised: Kysely puts a raw CTE body after `as` as it is.
  return sql<{ id: string }>`(
    insert into events (id, project_id, is_test, type, data, caller_received_result, created_at)
    select ${event.id}::text, m.project_id, m.is_test, t.type, json_build_object(
        'id', m.id, 'objectType', 'request', 'endUserId', m.end_user_id, 'connectionId', m.connection_id,
        'operationId', m.operation_id, 'method', m.method, 'path', m.path, 'mode', m.mode,
        'status', m.status, 'outcome', m.outcome, 'recovered', m.recovered,
        'createdAt', ${iso(sql`m.created_at`)}, 'sentAt', ${iso(sql`m.sent_at`)},
        'completedAt', ${iso(sql`m.completed_at`)}, 'error', m.error,
        'callerReceivedResult', t.caller_received)::text,
      t.caller_received, ${event.at}::timestamptz
    from moved m
    cross join lateral (select ${type} as type, ${callerReceived} as caller_received) t
    where t.type is not null and not m.background
      and ${subscribed(sql`m.project_id`, sql`m.is_test`, sql`t.type`, sql`t.caller_received`)}
    returning id)`;
}

export interface NewEvent {
  id: string;
  projectId: string;
  /** The key mode whose endpoints may receive it. */
  isTest: boolean;
  type: string;
  /** The JSON text of `data`. */
  data: string;
  at: Date;
}

/**
 * Writes an event if an enabled endpoint subscribes to it (call inside the transaction of the
 * state change). Returns whether it was written.
 */
export async function insertEventIfSubscribed(db: Executor, event: NewEvent): Promise<boolean> {
  const result = await sql<{ id: string }>`
    insert into events (id, project_id, is_test, type, data, created_at)
    select ${event.id}::text, ${event.projectId}::text, ${event.isTest}::boolean, ${event.type}::text,
      ${event.data}::text, ${event.at}::timestamptz
    where ${subscribed(sql`${event.projectId}`, sql`${event.isTest}::boolean`, sql`${event.type}`, sql`false`)}
    returning id`.execute(db);
  return result.rows.length > 0;
}

/** The event body sent to receivers, byte for byte the same at every attempt. */
export function eventBody(event: {
  id: string;
  type: string;
  created_at: Date;
  project_id: string;
  data: string;
}): string {
  const head = JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.created_at.toISOString(),
    projectId: event.project_id,
  });
  return `${head.slice(0, -1)},"data":${event.data}}`;
}
