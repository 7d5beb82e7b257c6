import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 28: a Request's trace (platform/tracing.ts, decision 0048). `requests.traceparent` is the
 * W3C `traceparent` of the span the Request belongs to (the HTTP call that made it, else its
 * admission), written at admission only while tracing is on: whichever instance hands the Request
 * over, receives its answer or delivers its webhooks continues that trace. Null when tracing is off.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column traceparent text;
`;
