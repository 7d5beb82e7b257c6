import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Batch (spec "POST /v1/{ledger}/batch", decision 0014): a batch is one Request whose message set
 * carries every member. `requests.batch` keeps the members' operations in order (and the set's
 * `onError`), so the answer — or the recovery query's stored answer after a lost one — is read member
 * by member on whichever instance receives it. Null for every other Request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column batch jsonb;
`;
