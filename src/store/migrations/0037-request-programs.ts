import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 27, decision 0046: a Request may run several message sets in order (an upsert reads, then
 * adds or modifies; a dependent batch sends the sets its references need).
 *
 * - `requests.program`: what the Request's operation keeps between its message sets (its plan and
 *   what the answers so far returned); null for a Request of one message set.
 * - `requests.step`: how many of its message sets the application has answered. A Request past its
 *   first step is never canceled, timed out unsent or expired: an earlier set may have written.
 * - `external_ids`: per end user and typed group, the record each `externalId` the service wrote or
 *   read belongs to (lower case): an upsert keyed by `externalId` finds its record through it, never
 *   through the caller. Deleted with the end user.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column program jsonb;
    alter table requests add column step integer not null default 0;
    create table external_ids (
      end_user_id text not null references end_users(id) on delete cascade,
      resource text not null,
      external_id text not null,
      record_id text not null,
      seen_at timestamptz not null,
      primary key (end_user_id, resource, external_id)
    );
`;
