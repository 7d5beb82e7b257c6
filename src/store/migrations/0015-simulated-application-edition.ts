import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * The simulated application behind a simulated company file (simulator mode, decision 0016): the
 * message version it speaks and its regional edition, `{xmlVersion, country}`, kept so that a
 * restarted service starts the same application again. Null: the default (16.0, US).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table simulated_company_files add column application jsonb;
`;
