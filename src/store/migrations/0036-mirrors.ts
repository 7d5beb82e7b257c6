import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Issue 26: a mirror of each company file, per end user and typed group (mirror/, decision 0044).
 * - `mirrors`: one row per mirrored group of an end user: its state (`filling`, `ready`, `paused`,
 *   `error`), what it is as of (`as_of`: every change the application made before it is in the
 *   copy), the fill's progress, the poll window and the claim of the work running for it. Deleted
 *   with its end user.
 * - `mirror_records`: the copy, one row per record in its typed JSON form as the list operation
 *   answers it (inactive included, with line items and linked transactions); a deleted record stays
 *   as a tombstone (`data` null) so an older answer can never bring it back. `version` is the
 *   mirror's version when the row last changed: an instance's in-memory copy reads only what changed.
 * - `mirror_cursors`: the filters of a list read from the mirror whose next page is still to come
 *   (the cursor token carries its ID and position), for a day.
 * - an index on the succeeded writes of an end user by completion, for read-your-writes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table mirrors (
      end_user_id text not null references end_users(id) on delete cascade,
      resource text not null,
      project_id text not null,
      is_test boolean not null,
      state text not null,
      error jsonb,
      generation integer not null default 1,
      version bigint not null default 0,
      records integer not null default 0,
      as_of timestamptz,
      last_change_applied_at timestamptz,
      utc_offset text,
      fill_started_at timestamptz,
      fill_cursor text,
      fill_pages integer not null default 0,
      polled_until timestamptz,
      next_work_at timestamptz not null,
      work_started_at timestamptz,
      work_kind text,
      request_ids jsonb not null default '[]',
      writes_through timestamptz not null,
      writes_through_id text not null default '',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (end_user_id, resource)
    );
    create index mirrors_due on mirrors(next_work_at);
    create table mirror_records (
      end_user_id text not null,
      resource text not null,
      id text not null,
      data text,
      updated_ms bigint not null,
      generation integer not null,
      version bigint not null,
      primary key (end_user_id, resource, id),
      foreign key (end_user_id, resource) references mirrors(end_user_id, resource) on delete cascade
    );
    create index mirror_records_changed on mirror_records(end_user_id, resource, version);
    create table mirror_cursors (
      id text primary key,
      end_user_id text not null references end_users(id) on delete cascade,
      resource text not null,
      filters jsonb not null,
      linked boolean not null,
      created_at timestamptz not null
    );
    create index mirror_cursors_created on mirror_cursors(created_at);
    create index requests_settled_writes on requests(end_user_id, completed_at) where is_write and status = 'succeeded';
`;
