import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Application cursors (spec: "List parameters", cursor rules; `ledger/cursors.ts`): one row per
 * paged list, holding the application's iterator, the session it lives in, the first page's filters
 * and what has been served. Open cursors are counted per connection for the three-iterator limit.
 *
 * A Request's `result` becomes `json` (kept as written) instead of `jsonb` (keys reordered), so a
 * record read back from the store lists its fields in the documented order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table ledger_cursors (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      is_test boolean not null,
      end_user_id text not null,
      connection_id text not null,
      operation_id text not null,
      filters jsonb not null,
      page_size integer not null,
      state text not null,
      ended_reason text,
      iterator_id text,
      ticket_hash text,
      pages_served integer not null default 0,
      records_served integer not null default 0,
      remaining integer,
      last_request_id text,
      repeats integer not null default 0,
      created_at timestamptz not null,
      last_used_at timestamptz not null
    );
    create index ledger_cursors_open on ledger_cursors(connection_id, last_used_at) where state = 'open';
    create index ledger_cursors_age on ledger_cursors(last_used_at);
    alter table requests alter column result type json using result::json;
`;
