import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * A Request keeps its message set as data until the hand-over (issue 14): `requests.request_xml`
 * holds the request messages rendered once at submission, and the new `requests.request_on_error`
 * their `onError`; the hand-over wraps them once in the document with the session's version and
 * the message set ID.
 *
 * Rows written before this migration hold the whole document and have `request_on_error` null; they
 * are left as they are. A queued one is still handed over correctly: the hand-over reads its
 * messages and `onError` back with the XML reader (`storedFromDocument`) instead of editing the text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column request_on_error text;
`;
