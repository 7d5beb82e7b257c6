import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 24: a connector session's state is one column, `phase` (connector/session/phases.ts):
 * `opened` (authenticated, its company file not yet reported), `ready`, `recovering` (a write's
 * recovery query in flight), `closing` (the idle close's query in flight), `closed`. It replaces the
 * flags `hcp_received`, `closing_query_sent` and `recoveries_checked` (never read), and `state`
 * becomes a column the database derives from it (`open` unless `closed`), so that the statements and
 * partial indexes that ask for open sessions stay as they were and nothing can write it apart from
 * the phase. A session that received its company file report always has `ledger_answered_at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table connector_sessions add column phase text;
    update connector_sessions set phase = case
      when state = 'closed' then 'closed'
      when closing_query_sent then 'closing'
      when recovery_message_set_id is not null then 'recovering'
      when hcp_received then 'ready'
      else 'opened' end;
    update connector_sessions set ledger_answered_at = created_at
      where hcp_received and ledger_answered_at is null;
    alter table connector_sessions alter column phase set not null;
    alter table connector_sessions add constraint connector_sessions_phase
      check (phase in ('opened', 'ready', 'recovering', 'closing', 'closed'));
    drop index connector_sessions_connection;
    drop index connector_sessions_open_by_instance;
    drop index connector_sessions_closed;
    alter table connector_sessions drop column state;
    alter table connector_sessions drop column hcp_received;
    alter table connector_sessions drop column closing_query_sent;
    alter table connector_sessions drop column recoveries_checked;
    alter table connector_sessions add column state text
      generated always as (case when phase = 'closed' then 'closed' else 'open' end) stored;
    create index connector_sessions_connection on connector_sessions(connection_id) where state = 'open';
    create index connector_sessions_open_by_instance on connector_sessions(instance_id) where state = 'open';
    create index connector_sessions_closed on connector_sessions(closed_at) where state = 'closed';
`;
