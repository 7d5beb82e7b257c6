import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 25: two more pieces of connector evidence for the Request's diagnosis
 * (requests/probable-causes.ts):
 * - `connections.login_refused_at`: when the connector last checked in with this connection's user
 *   name and a password that is no longer the connection's (its registration is an older one: the
 *   setup was done again and the connector was not given the new `.qwc` and password);
 * - `connections.session_interrupted_at`: when a request handed to the connector lost its answer
 *   because the session ended first (replaced by a new check-in, hung up, expired, asked again
 *   without answering, or held by an instance that stopped); cleared when the application answers
 *   in a later session;
 * - `connector_sessions.personal_data_allowed`: whether the company file lets this application see
 *   personal data (the company file report's `IsPersonalDataAccessAllowed`); null when not reported.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table connections add column login_refused_at timestamptz;
    alter table connections add column session_interrupted_at timestamptz;
    alter table connector_sessions add column personal_data_allowed boolean;
`;
