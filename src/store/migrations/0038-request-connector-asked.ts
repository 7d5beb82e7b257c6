import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 28, item 3 (decision 0047): `requests.connector_asked_at`, when the Web Connector opened
 * (authenticated) the session that was handed the Request — stamped by the hand-over's claim from
 * the session's `created_at`, cleared when a refused message set puts the Request back in the
 * queue. The Request's wait before the hand-over is cut there: before it, waiting for the Web
 * Connector to ask (`connector`); after it, waiting inside that session (`queue`). Kept on the row
 * because sessions are swept long before the Requests they served.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column connector_asked_at timestamptz;
`;
