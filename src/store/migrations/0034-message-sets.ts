import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 24, decision 0036: a connector message set carries up to `CONNECTOR_MESSAGE_SET_MAX_REQUESTS`
 * Requests of one connection.
 *
 * - `requests.alone`: the Request goes in a message set of its own (a passthrough or a batch, which
 *   carry their own message set; one sent again alone after the application refused its set as a
 *   whole).
 * - `requests.set_position`: its place in the message set it was handed over in (its answer is the
 *   response message at that place, live or from the recovery query's stored answer); null before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column alone boolean not null default false;
    alter table requests add column set_position integer;
    update requests set alone = true where operation_id in ('endUsers.passthrough', 'ledger.batch');
`;
