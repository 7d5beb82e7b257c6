import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Webhooks (spec: Webhook endpoint, Webhook delivery, Events; architecture §5):
 *
 * - `webhook_endpoints`: one row per endpoint, scoped by project and key mode (`is_test`). The signing secret
 *   must be readable by the dispatcher (it signs every attempt), so it is stored as issued; the
 *   previous secret is kept until `previous_secret_expires_at` (rotation overlap).
 * - `events`: the outbox. A row is written in the same statement or transaction as the state change
 *   that causes it, and only when an enabled endpoint of the project would take it. `fanned_out_at`
 *   is set when its deliveries have been created. `endpoint_id` targets one endpoint
 *   (`webhook.test`). `data` is the JSON text of the event's `data` member, byte for byte.
 * - `webhook_deliveries`: one per (event, endpoint); attempts are kept as a JSON array. A dispatcher
 *   leases a due delivery (`lease_token`, `lease_expires_at`) with a row-locking claim, so two
 *   instances never attempt the same delivery at once; a crashed instance's lease expires.
 * - `requests.caller_gone_at`: a sync caller stopped waiting (timeout after sending, disconnect,
 *   its instance stopped) before the request settled, so its request events go to every endpoint.
 *   `requests.caller_instance_id`: the service instance holding a sync caller's HTTP call, so that
 *   recovering a dead instance lets go of its callers only, never a live neighbour's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table webhook_endpoints (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      is_test boolean not null,
      url text not null,
      description text,
      event_types jsonb not null,
      enabled boolean not null,
      disabled_reason text,
      include_sync_requests boolean not null,
      secret text not null,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      secret_rotated_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index webhook_endpoints_list on webhook_endpoints(project_id, is_test, id desc);
    create table events (
      id text primary key,
      seq bigserial not null,
      project_id text not null references projects(id) on delete cascade,
      is_test boolean not null,
      type text not null,
      data text not null,
      caller_received_result boolean not null default false,
      endpoint_id text references webhook_endpoints(id) on delete cascade,
      created_at timestamptz not null,
      fanned_out_at timestamptz
    );
    create index events_outbox on events(seq) where fanned_out_at is null;
    create index events_retention on events(created_at);
    create table webhook_deliveries (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      endpoint_id text not null references webhook_endpoints(id) on delete cascade,
      event_id text not null references events(id) on delete cascade,
      event_type text not null,
      status text not null,
      attempt_count integer not null default 0,
      next_attempt_at timestamptz,
      completed_at timestamptz,
      attempts jsonb not null default '[]'::jsonb,
      lease_token text,
      lease_expires_at timestamptz,
      created_at timestamptz not null
    );
    create index webhook_deliveries_due on webhook_deliveries(next_attempt_at) where status = 'pending';
    create index webhook_deliveries_list on webhook_deliveries(endpoint_id, id desc);
    create index webhook_deliveries_event on webhook_deliveries(event_id);
    create index webhook_deliveries_retention on webhook_deliveries(created_at);
    alter table requests add column caller_gone_at timestamptz;
    alter table requests add column caller_instance_id text;
`;
