import { sql, type Selectable, type Transaction } from "kysely";
import { json, type Db } from "./database.ts";
import type { ChangeFeedPollsTable, ChangeFeedSubscriptionsTable, DatabaseSchema } from "./schema.ts";
import { isTestTenant, type Tenant } from "./tenant.ts";

/**
 * Change feed subscriptions and the state of their polls (migration 0011). Subscription queries
 * are scoped by tenant; poll claims are compare-and-set on `started_at`, so several instances may
 * run the poller on one store and each poll runs once.
 */
export type SubscriptionRow = Selectable<ChangeFeedSubscriptionsTable>;
export type PollRow = Selectable<ChangeFeedPollsTable>;

type Executor = Db | Transaction<DatabaseSchema>;

export async function insertSubscription(db: Db, row: SubscriptionRow): Promise<void> {
  await db
    .insertInto("change_feed_subscriptions")
    .values({ ...row, resources: json(row.resources) })
    .execute();
}

export async function findSubscription(
  db: Executor,
  tenant: Tenant,
  id: string,
): Promise<SubscriptionRow | null> {
  const row = await db
    .selectFrom("change_feed_subscriptions")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", id)
    .executeTakeFirst();
  return row ?? null;
}

/** Newest first, `limit + 1` rows (the extra one tells whether there is more). */
export async function listSubscriptions(
  db: Db,
  tenant: Tenant,
  limit: number,
  beforeId: string | null,
): Promise<SubscriptionRow[]> {
  let q = db
    .selectFrom("change_feed_subscriptions")
    .selectAll()
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant));
  if (beforeId) q = q.where("id", "<", beforeId);
  return q
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
}

export type SubscriptionChanges = Partial<
  Pick<SubscriptionRow, "resources" | "interval_minutes" | "enabled" | "updated_at">
>;

export async function updateSubscription(
  db: Db,
  tenant: Tenant,
  id: string,
  changes: SubscriptionChanges,
): Promise<SubscriptionRow | null> {
  const { resources, ...rest } = changes;
  const row = await db
    .updateTable("change_feed_subscriptions")
    .set({ ...rest, ...(resources === undefined ? {} : { resources: json(resources) }) })
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** Deletes a subscription; its poll state and what it reported go with it. */
export async function deleteSubscription(db: Db, tenant: Tenant, id: string): Promise<boolean> {
  const r = await db
    .deleteFrom("change_feed_subscriptions")
    .where("project_id", "=", tenant.projectId)
    .where("is_test", "=", isTestTenant(tenant))
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * Gives every enabled subscription a poll row for each set-up connection of its project and mode
 * (new connections and subscriptions): the first window starts now, the first poll is one interval
 * later.
 */
export async function ensurePolls(db: Db, now: Date): Promise<number> {
  const r = await sql`
    insert into change_feed_polls (subscription_id, connection_id, covered_from, polled_until, next_poll_at)
    select s.id, c.id, ${now}::timestamptz, ${now}::timestamptz,
      ${now}::timestamptz + make_interval(mins => s.interval_minutes)
    from change_feed_subscriptions s
    join connections c on c.project_id = s.project_id and c.is_test = s.is_test
    where s.enabled and c.status <> 'pending_setup'
    on conflict do nothing`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** A poll with what the poller needs of its subscription and connection. */
export interface PollWork extends PollRow {
  project_id: string;
  is_test: boolean;
  resources: string[];
  interval_minutes: number;
  end_user_id: string;
}

const pollWork = (alias: string) => sql<PollWork>`
  ${sql.ref(`${alias}.subscription_id`)}, ${sql.ref(`${alias}.connection_id`)}, ${sql.ref(`${alias}.covered_from`)},
  ${sql.ref(`${alias}.polled_until`)}, ${sql.ref(`${alias}.next_poll_at`)},
  ${sql.ref(`${alias}.started_at`)}, ${sql.ref(`${alias}.request_ids`)},
  s.project_id, s.is_test, s.resources, s.interval_minutes, c.end_user_id`;

/**
 * Claims up to `limit` due polls of enabled subscriptions: `started_at` is set (one statement with
 * row locks skipped, so two instances never claim the same poll).
 */
export async function claimDuePolls(db: Db, now: Date, limit: number): Promise<PollWork[]> {
  const r = await sql<PollWork>`
    with due as (
      select p.subscription_id, p.connection_id from change_feed_polls p
      join change_feed_subscriptions s on s.id = p.subscription_id
      where p.started_at is null and p.next_poll_at <= ${now} and s.enabled
      order by p.next_poll_at limit ${limit}
      for update of p skip locked
    ), claimed as (
      update change_feed_polls p set started_at = ${now}, request_ids = '[]'::jsonb
      from due where p.subscription_id = due.subscription_id and p.connection_id = due.connection_id
      returning p.*
    )
    select ${pollWork("claimed")} from claimed
    join change_feed_subscriptions s on s.id = claimed.subscription_id
    join connections c on c.id = claimed.connection_id`.execute(db);
  return r.rows;
}

/** Polls in progress (their Requests submitted, or about to be). */
export async function runningPolls(db: Db, limit: number): Promise<PollWork[]> {
  const r = await sql<PollWork>`
    select ${pollWork("p")} from change_feed_polls p
    join change_feed_subscriptions s on s.id = p.subscription_id
    join connections c on c.id = p.connection_id
    where p.started_at is not null
    order by p.started_at limit ${limit}`.execute(db);
  return r.rows;
}

export interface PollKey {
  subscription_id: string;
  connection_id: string;
  /** The claim the caller holds. */
  started_at: Date;
}

/** Records the poll's Requests (only while the caller's claim holds). */
export async function setPollRequests(db: Db, key: PollKey, requestIds: string[]): Promise<boolean> {
  const r = await db
    .updateTable("change_feed_polls")
    .set({ request_ids: json(requestIds) })
    .where("subscription_id", "=", key.subscription_id)
    .where("connection_id", "=", key.connection_id)
    .where("started_at", "=", key.started_at)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * Ends a poll without moving its window (a query failed or could not run): the next poll asks
 * again from the same point at `nextPollAt`.
 */
export async function abandonPoll(db: Db, key: PollKey, nextPollAt: Date): Promise<boolean> {
  const r = await db
    .updateTable("change_feed_polls")
    .set({ started_at: null, request_ids: json([]), next_poll_at: nextPollAt })
    .where("subscription_id", "=", key.subscription_id)
    .where("connection_id", "=", key.connection_id)
    .where("started_at", "=", key.started_at)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * Completes a poll inside `trx`: the window moves to the poll's start and the next poll is due at
 * `nextPollAt`. False when the claim no longer holds (another instance completed it).
 */
export async function completePoll(
  trx: Transaction<DatabaseSchema>,
  key: PollKey,
  nextPollAt: Date,
): Promise<boolean> {
  const r = await trx
    .updateTable("change_feed_polls")
    .set({ polled_until: key.started_at, started_at: null, request_ids: json([]), next_poll_at: nextPollAt })
    .where("subscription_id", "=", key.subscription_id)
    .where("connection_id", "=", key.connection_id)
    .where("started_at", "=", key.started_at)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The revisions already reported of these record IDs (`deleted` for a reported deletion). */
export async function seenRevisions(
  trx: Executor,
  key: Pick<PollKey, "subscription_id" | "connection_id">,
  objectIds: readonly string[],
): Promise<Map<string, Set<string>>> {
  const seen = new Map<string, Set<string>>();
  if (objectIds.length === 0) return seen;
  const rows = await trx
    .selectFrom("change_feed_seen")
    .select(["object_id", "revision"])
    .where("subscription_id", "=", key.subscription_id)
    .where("connection_id", "=", key.connection_id)
    .where("object_id", "in", [...new Set(objectIds)])
    .execute();
  for (const row of rows) {
    const revisions = seen.get(row.object_id) ?? new Set<string>();
    revisions.add(row.revision);
    seen.set(row.object_id, revisions);
  }
  return seen;
}

export async function insertSeen(
  trx: Transaction<DatabaseSchema>,
  key: Pick<PollKey, "subscription_id" | "connection_id">,
  entries: ReadonlyArray<{ objectId: string; revision: string }>,
  at: Date,
): Promise<void> {
  if (entries.length === 0) return;
  await trx
    .insertInto("change_feed_seen")
    .values(
      entries.map((e) => ({
        subscription_id: key.subscription_id,
        connection_id: key.connection_id,
        object_id: e.objectId,
        revision: e.revision,
        seen_at: at,
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Forgets what was reported before `before` (older than any window that may still overlap it). */
export async function deleteSeenBefore(db: Executor, before: Date): Promise<number> {
  const r = await db.deleteFrom("change_feed_seen").where("seen_at", "<", before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
