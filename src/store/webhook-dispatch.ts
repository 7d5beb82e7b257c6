import { sql, type Selectable } from "kysely";
import type { Db } from "./database.ts";
import type { EventsTable } from "./schema.ts";
import { insertDeliveries } from "./webhooks.ts";
import type { WebhookEndpointRow } from "./webhooks.ts";

/**
 * The dispatcher's statements: fan-out of the event outbox into deliveries, the row-locking claim
 * of due deliveries (a lease, so several instances never attempt one delivery at once), recording
 * an attempt (with the endpoint's failure tracking and auto-disable in the same statement), and
 * retention.
 */
export type EventRow = Selectable<EventsTable>;

/** One delivery attempt to make: the delivery, its endpoint's URL and secrets, and its event. */
export interface DeliveryWork {
  deliveryId: string;
  leaseToken: string;
  attemptCount: number;
  endpointId: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  event: Pick<EventRow, "id" | "type" | "created_at" | "project_id" | "data">;
}

export interface Lease {
  token: string;
  until: Date;
}

export interface FanOutOptions {
  now: Date;
  batchSize: number;
  /**
   * Up to `leaseLimit` of the new deliveries are leased to the caller, which attempts them at once
   * (no claim round trip); the others are due now and wait for a claim.
   */
  lease: Lease;
  leaseLimit: number;
  /** Whether `endpoint` takes `event` (subscription, mode, includeSyncRequests, enabled). */
  takes: (event: EventRow, endpoint: WebhookEndpointRow) => boolean;
  newDeliveryId: () => string;
}

/**
 * Fans out up to `batchSize` outbox events in one transaction: locks them (SKIP LOCKED, so instances
 * share the work), creates one delivery per endpoint that takes each, and marks them fanned out.
 */
export async function fanOutEvents(
  db: Db,
  o: FanOutOptions,
): Promise<{ events: number; work: DeliveryWork[] }> {
  return db.transaction().execute(async (trx) => {
    const events = await trx
      .selectFrom("events")
      .selectAll()
      .where("fanned_out_at", "is", null)
      .orderBy("seq")
      .limit(o.batchSize)
      .forUpdate()
      .skipLocked()
      .execute();
    if (events.length === 0) return { events: 0, work: [] };
    const projects = [...new Set(events.map((e) => e.project_id))];
    const endpoints = await trx
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("project_id", "in", projects)
      .execute();
    const planned: Array<{ event: EventRow; endpoint: WebhookEndpointRow; id: string }> = [];
    for (const event of events) {
      for (const endpoint of endpoints) {
        const targeted = event.endpoint_id !== null;
        if (targeted ? endpoint.id === event.endpoint_id : o.takes(event, endpoint))
          planned.push({ event, endpoint, id: o.newDeliveryId() });
      }
    }
    await insertDeliveries(
      trx,
      planned.map(({ event, endpoint, id }, index) => ({
        id,
        projectId: event.project_id,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        at: o.now,
        ...(index < o.leaseLimit && startsNow(event, endpoint) ? { lease: o.lease } : {}),
      })),
    );
    await trx
      .updateTable("events")
      .set({ fanned_out_at: o.now })
      .where(
        "id",
        "in",
        events.map((e) => e.id),
      )
      .execute();
    const leased = planned.filter(
      ({ event, endpoint }, index) => index < o.leaseLimit && startsNow(event, endpoint),
    );
    return {
      events: events.length,
      work: leased.map(({ event, endpoint, id }) => workOf(id, o.lease.token, 0, endpoint, event)),
    };
  });
}

/** A new delivery is attempted at once unless its endpoint is disabled (a test goes out anyway). */
function startsNow(event: EventRow, endpoint: WebhookEndpointRow): boolean {
  return endpoint.enabled || event.type === "webhook.test";
}

function workOf(
  deliveryId: string,
  leaseToken: string,
  attemptCount: number,
  endpoint: Pick<
    WebhookEndpointRow,
    "id" | "url" | "secret" | "previous_secret" | "previous_secret_expires_at"
  >,
  event: DeliveryWork["event"],
): DeliveryWork {
  return {
    deliveryId,
    leaseToken,
    attemptCount,
    endpointId: endpoint.id,
    url: endpoint.url,
    secret: endpoint.secret,
    previousSecret: endpoint.previous_secret,
    previousSecretExpiresAt: endpoint.previous_secret_expires_at,
    event: {
      id: event.id,
      type: event.type,
      created_at: event.created_at,
      project_id: event.project_id,
      data: event.data,
    },
  };
}

/**
 * Leases up to `limit` due deliveries in one statement: pending, due, not leased (or the lease
 * expired: its instance died), and of an enabled endpoint (`webhook.test` goes out regardless).
 * Rows are locked with SKIP LOCKED, so two instances never lease the same delivery.
 */
export async function claimDueDeliveries(
  db: Db,
  now: Date,
  limit: number,
  lease: Lease,
): Promise<DeliveryWork[]> {
  const result = await sql<{
    id: string;
    attempt_count: number;
    endpoint_id: string;
    url: string;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: Date | null;
    event_id: string;
    type: string;
    event_created_at: Date;
    project_id: string;
    data: string;
  }>`
    with due as (
      select d.id from webhook_deliveries d
      join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and d.next_attempt_at <= ${now}::timestamptz
        and (d.lease_expires_at is null or d.lease_expires_at <= ${now}::timestamptz)
        and (e.enabled or d.event_type = 'webhook.test')
      order by d.next_attempt_at
      limit ${limit}::integer
      for update of d skip locked
    ), claimed as (
      update webhook_deliveries d set lease_token = ${lease.token}::text,
        lease_expires_at = ${lease.until}::timestamptz
      from due where d.id = due.id
      returning d.id, d.attempt_count, d.endpoint_id, d.event_id
    )
    select c.id, c.attempt_count, c.endpoint_id, e.url, e.secret, e.previous_secret,
      e.previous_secret_expires_at, c.event_id, ev.type, ev.created_at as event_created_at,
      ev.project_id, ev.data
    from claimed c
    join webhook_endpoints e on e.id = c.endpoint_id
    join events ev on ev.id = c.event_id
  `.execute(db);
  return result.rows.map((r) =>
    workOf(
      r.id,
      lease.token,
      r.attempt_count,
      {
        id: r.endpoint_id,
        url: r.url,
        secret: r.secret,
        previous_secret: r.previous_secret,
        previous_secret_expires_at: r.previous_secret_expires_at,
      },
      {
        id: r.event_id,
        type: r.type,
        created_at: r.event_created_at,
        project_id: r.project_id,
        data: r.data,
      },
    ),
  );
}

/**
 * When the dispatcher has work next: now if an event waits for fan-out, else the earliest time a
 * pending delivery of an enabled endpoint falls due (or its lease expires). Null when idle.
 */
export async function nextWorkAt(db: Db): Promise<Date | null> {
  const result = await sql<{ at: Date | null; outbox: boolean }>`
    select (
      select min(greatest(d.next_attempt_at, coalesce(d.lease_expires_at, d.next_attempt_at)))
      from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and (e.enabled or d.event_type = 'webhook.test')
    ) as at, exists (select 1 from events where fanned_out_at is null) as outbox
  `.execute(db);
  const row = result.rows[0];
  if (row?.outbox) return new Date(0);
  return row?.at ?? null;
}

/** One attempt's record (spec: Webhook delivery), as stored in `attempts`. */
export interface AttemptRecord {
  attempt: number;
  at: string;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
}

export interface AttemptResult {
  deliveryId: string;
  leaseToken: string;
  record: AttemptRecord;
  status: "pending" | "succeeded" | "failed";
  nextAttemptAt: Date | null;
  /** When the attempt ended (`completedAt` of a finished delivery). */
  at: Date;
}

export interface StreakRule {
  now: Date;
  /** An endpoint whose failures started at or before this is disabled by a failed attempt. */
  disableIfFailingSince: Date;
  disabledReason: string;
}

/**
 * Records a batch of attempts and releases their leases, each only if its lease is still held (an
 * instance whose lease expired meanwhile records nothing), in one statement. In the same statement
 * each endpoint's failure streak is cleared when the batch holds a success for it, or started or
 * continued when it holds only failures, which disables the endpoint once the streak reaches
 * `disableIfFailingSince`. Returns the deliveries recorded and the endpoints this batch disabled.
 * The deliveries are found by primary key (`= any(ids)`): the planner cannot see how few rows the
 * JSON input holds and would otherwise scan the whole table, which holds 30 days of deliveries.
 */
export async function recordAttempts(
  db: Db,
  results: readonly AttemptResult[],
  rule: StreakRule,
): Promise<{ recorded: Set<string>; disabledEndpoints: string[] }> {
  if (results.length === 0) return { recorded: new Set(), disabledEndpoints: [] };
  const input = results.map((r) => ({
    id: r.deliveryId,
    token: r.leaseToken,
    record: r.record,
    status: r.status,
    next_at: r.nextAttemptAt?.toISOString() ?? null,
    at: r.at.toISOString(),
    ok: r.record.error === null,
  }));
  const result = await sql<{ recorded: string[] | null; disabled: string[] | null }>`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
        as x(id text, token text, record jsonb, status text, next_at timestamptz, at timestamptz, ok boolean)
    ), recorded as (
      update webhook_deliveries d set
        attempts = d.attempts || jsonb_build_array(i.record),
        attempt_count = d.attempt_count + 1,
        status = i.status,
        next_attempt_at = i.next_at,
        completed_at = case when i.status = 'pending' then null else i.at end,
        lease_token = null, lease_expires_at = null
      from input i
      where d.id = any(${input.map((r) => r.id)}::text[]) and d.id = i.id and d.lease_token = i.token
      returning d.id, d.endpoint_id, i.ok
    ), outcome as (
      select endpoint_id, bool_or(ok) as any_ok from recorded group by endpoint_id
    ), streak as (
      update webhook_endpoints e set
        failing_since = case when o.any_ok then null else coalesce(e.failing_since, ${rule.now}::timestamptz) end,
        enabled = e.enabled and (o.any_ok
          or coalesce(e.failing_since, ${rule.now}::timestamptz) > ${rule.disableIfFailingSince}::timestamptz),
        disabled_reason = case
          when e.enabled and not o.any_ok
            and coalesce(e.failing_since, ${rule.now}::timestamptz) <= ${rule.disableIfFailingSince}::timestamptz
          then ${rule.disabledReason}::text else e.disabled_reason end
      from outcome o
      where e.id = o.endpoint_id and (not o.any_ok or e.failing_since is not null)
      returning e.id, e.enabled, e.disabled_reason
    )
    select (select json_agg(id) from recorded) as recorded,
      (select json_agg(id) from streak where not enabled and disabled_reason = ${rule.disabledReason}::text) as disabled
  `.execute(db);
  const row = result.rows[0];
  return { recorded: new Set(row?.recorded ?? []), disabledEndpoints: row?.disabled ?? [] };
}

/** Gives a leased delivery back without recording an attempt (the attempt was cut by a shutdown). */
export async function releaseLease(db: Db, deliveryId: string, leaseToken: string): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ lease_token: null, lease_expires_at: null })
    .where("id", "=", deliveryId)
    .where("lease_token", "=", leaseToken)
    .execute();
}

/**
 * Retention (spec: deliveries are stored 30 days): deletes up to `batchSize` deliveries, then events,
 * created before `before`. Returns the number of rows deleted.
 */
export async function deleteExpiredWebhookData(db: Db, before: Date, batchSize: number): Promise<number> {
  const deliveries = await db
    .deleteFrom("webhook_deliveries")
    .where(
      "id",
      "in",
      db.selectFrom("webhook_deliveries").select("id").where("created_at", "<", before).limit(batchSize),
    )
    .executeTakeFirst();
  const events = await db
    .deleteFrom("events")
    .where("id", "in", db.selectFrom("events").select("id").where("created_at", "<", before).limit(batchSize))
    .executeTakeFirst();
  return Number(deliveries.numDeletedRows) + Number(events.numDeletedRows);
}
