import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * What the operator decides about a project (decision 0019): a monthly quota of application
 * Requests (null: none), a failed payment (live application operations refused with PAYMENT_FAILED)
 * and a disabled project (every call refused with PERMISSION_DENIED). `project_usage` counts the
 * application Requests admitted per project, mode and calendar month (UTC), a batch as its members.
 * The index finds the connection whose company file a FileID marker names (another end user's
 * file: LEDGER_COMPANY_FILE_MISMATCH).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table projects add column monthly_request_quota bigint;
    alter table projects add column payment_failed_at timestamptz;
    alter table projects add column disabled_at timestamptz;
    alter table projects add column disabled_reason text;
    create table project_usage (
      project_id text not null references projects(id) on delete cascade,
      is_test boolean not null,
      period text not null,
      requests bigint not null,
      primary key (project_id, is_test, period)
    );
    create index connections_file_identity on connections(project_id, file_identity)
      where file_identity is not null;
`;
