import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * The change feed (spec: Change feed subscription; issue 9 item 5; decision 0010):
 *
 * - `change_feed_subscriptions`: per project and key mode, the watched typed resources (path
 *   names, alphabetical), the interval between polls of each connection, and whether it is enabled.
 * - `change_feed_polls`: one row per (subscription, connection). `polled_until` is the service time
 *   at which the last completed poll started (the next one asks for records updated after it, less
 *   an overlap, never before `covered_from`, when the subscription started covering the connection:
 *   the feed reports changes, not history); `started_at` and `request_ids` describe a poll in progress (its Requests, one per
 *   query). Claimed with compare-and-set, so two instances never run the same poll.
 * - `change_feed_seen`: what was reported, by record ID and revision (`deleted` for a deletion), so
 *   that overlapping polls report each change once. Kept one day.
 * - `requests.background`: a Request made by the service itself (the poller); a connection's queue
 *   hands out developers' Requests first.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table change_feed_subscriptions (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      is_test boolean not null,
      resources jsonb not null,
      interval_minutes integer not null,
      enabled boolean not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index change_feed_subscriptions_list on change_feed_subscriptions(project_id, is_test, id desc);
    create table change_feed_polls (
      subscription_id text not null references change_feed_subscriptions(id) on delete cascade,
      connection_id text not null references connections(id) on delete cascade,
      covered_from timestamptz not null,
      polled_until timestamptz not null,
      next_poll_at timestamptz not null,
      started_at timestamptz,
      request_ids jsonb not null default '[]',
      primary key (subscription_id, connection_id)
    );
    create index change_feed_polls_due on change_feed_polls(next_poll_at) where started_at is null;
    create index change_feed_polls_running on change_feed_polls(started_at) where started_at is not null;
    create table change_feed_seen (
      subscription_id text not null,
      connection_id text not null,
      object_id text not null,
      revision text not null,
      seen_at timestamptz not null,
      primary key (subscription_id, connection_id, object_id, revision),
      foreign key (subscription_id, connection_id)
        references change_feed_polls(subscription_id, connection_id) on delete cascade
    );
    create index change_feed_seen_age on change_feed_seen(seen_at);
    alter table requests add column background boolean not null default false;
`;
