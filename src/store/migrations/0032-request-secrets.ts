import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Decision 0032, secrets at rest: `requests.request_xml` is stored with its secret values (card
 * numbers, social security numbers, passwords) masked, and the values themselves are kept apart in
 * `requests.request_secrets`, sealed with the key-encryption key (`SECRETS_KEY`), only while the
 * Request waits to be sent: the statement that hands it over clears them, and so does every
 * transition that ends it unsent.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column request_secrets text;
`;
