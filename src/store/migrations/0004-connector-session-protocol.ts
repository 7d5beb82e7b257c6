import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Connector session facts the protocol needs that cannot be derived from other rows
 * (connector/session.ts):
 * - `closing_query_sent`: the idle session was handed its closing query; its answer ends the session
 *   with 100 (a clean close) instead of being an answer nobody waits for;
 * - `connection_errors`: how many times this session's connector could not open the company file,
 *   so `connectionError` retries another path at most a couple of times (programmer's guide p.51).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table connector_sessions add column closing_query_sent boolean not null default false;
    alter table connector_sessions add column connection_errors integer not null default 0;
`;
