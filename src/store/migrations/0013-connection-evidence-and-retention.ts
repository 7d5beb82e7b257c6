import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Evidence for the connection status machine and the Request's diagnosis, and indexes for retention
 * (connections/status.ts, requests/diagnosis.ts, requests/sweeper.ts):
 * - `connections.check_in_gap_ms`: how long the connector had been silent when it last checked in
 *   (the observed schedule, compared with the `.qwc` interval to see a changed schedule);
 * - `connections.shared_connector_at`: when a session's ticket was last used after a newer check-in
 *   had replaced it (a second computer running the same connector registration);
 * - `connector_sessions.ledger_answered_at`: when the application first answered in the session
 *   (its company file report, or a connection error the connector passed on); a session without it
 *   opened and never heard from the application;
 * - `requests.diagnosis`: the diagnosis frozen when a request timed out or expired before sending;
 * - indexes to find a connection's recent sessions, and sessions and finished requests past retention.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table connections add column check_in_gap_ms integer;
    alter table connections add column shared_connector_at timestamptz;
    alter table connector_sessions add column ledger_answered_at timestamptz;
    alter table requests add column diagnosis jsonb;
    create index connector_sessions_recent on connector_sessions(connection_id, created_at desc);
    create index connector_sessions_closed on connector_sessions(closed_at) where state = 'closed';
    create index requests_finished on requests(completed_at)
      where status in ('succeeded', 'failed', 'canceled');
`;
