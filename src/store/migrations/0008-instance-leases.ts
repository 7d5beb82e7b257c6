import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Several service instances on one PostgreSQL (issue 8 §2).
 *
 * - `service_instances`: one row per running process with a lease it renews; recovery after a
 *   crash touches only the sessions of instances whose lease ended or that released it
 *   (requests/instances.ts), never those of a live neighbour.
 * - `connector_sessions.instance_id`: the instance that holds the session's HTTP calls (stamped at
 *   `authenticate` and again by whichever instance the connector's next call reaches). Null for
 *   sessions opened before this migration: they belonged to an instance that is gone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table service_instances (
      id text primary key,
      host text not null,
      pid integer not null,
      started_at timestamptz not null,
      lease_expires_at timestamptz not null,
      released_at timestamptz,
      recovered_at timestamptz
    );
    create index service_instances_unrecovered on service_instances(lease_expires_at) where recovered_at is null;
    alter table connector_sessions add column instance_id text;
    create index connector_sessions_open_by_instance on connector_sessions(instance_id) where state = 'open';
`;
