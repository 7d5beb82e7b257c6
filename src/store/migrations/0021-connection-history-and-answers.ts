import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 18, decision 0028:
 *
 * - `connection_status_changes`: every change of a connection's stored `status`, written in the
 *   transaction that makes it (store/connection-events.ts), whether or not a webhook endpoint
 *   subscribes to `connection.status_changed`. The console's status history and availability strip
 *   read it; the sweep deletes rows older than `CONNECTION_HISTORY_RETENTION_MS`.
 * - `request_answers`: the application's answer to a Request as it arrived (up to
 *   `REQUEST_ANSWER_KEEP_BYTES`; a larger one keeps only its size), written by the statement that
 *   settles the Request; deleted with it.
 * - `requests.input`: the typed call's JSON input as validated (query and body; a batch's members),
 *   shown (secrets masked) beside the message and answer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table connection_status_changes (
      id text primary key,
      connection_id text not null references connections(id) on delete cascade,
      previous_status text not null,
      status text not null,
      status_reason text,
      changed_at timestamptz not null
    );
    create index connection_status_changes_by_connection on connection_status_changes (connection_id, changed_at);
    create index connection_status_changes_by_time on connection_status_changes (changed_at);
    alter table requests add column input jsonb;
    create table request_answers (
      request_id text primary key references requests(id) on delete cascade,
      answer_xml text,
      answer_bytes integer not null,
      received_at timestamptz not null
    );
`;
