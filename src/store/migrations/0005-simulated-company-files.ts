import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Simulated company files (simulator mode): the company file behind a connection whose Web
 * Connector the service simulates, kept beside the Requests that changed it so that both survive a
 * restart together. `snapshot` is the simulator's own JSON form of the file; `attached` is false
 * once the connection was set up with another connector (the simulated one is no longer started).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table simulated_company_files (
      connection_id text primary key references connections(id) on delete cascade,
      project_id text not null references projects(id) on delete cascade,
      company_name text not null,
      snapshot jsonb not null,
      attached boolean not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index simulated_company_files_attached on simulated_company_files(connection_id) where attached;
`;
