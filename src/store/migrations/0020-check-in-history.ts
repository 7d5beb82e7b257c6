import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * `connections.recent_check_ins`: the connector's last check-ins (epoch milliseconds, newest first,
 * at most connections/check-in-estimate.ts `CHECK_INS_KEPT`), written with the check-in's own stamp;
 * the expected next check-in of a connection and of a waiting Request's diagnosis is read from it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table connections add column recent_check_ins double precision[] not null default '{}';
`;
