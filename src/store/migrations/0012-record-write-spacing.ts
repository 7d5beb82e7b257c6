import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Spacing of the service's own writes to one record (spec: common record fields, `revisionNumber`
 * "changes at most once per second"; architecture guide §3):
 *
 * - `requests.write_targets`: the IDs of the existing records a write changes (the `ListID` /
 *   `TxnID` of its Mod, Del and Void messages), as a JSON array; null for reads and pure creates.
 * - `record_writes`: per connection and record, when the service last sent or saw the answer of a
 *   write to it. The claim holds back a write whose record was written less than a second before.
 *   Rows older than a minute prove nothing and are deleted by the sweep.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table requests add column write_targets jsonb;
    create table record_writes (
      connection_id text not null,
      record_id text not null,
      written_at timestamptz not null,
      primary key (connection_id, record_id)
    );
    create index record_writes_written_at on record_writes(written_at);
`;
