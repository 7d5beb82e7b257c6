import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/** Projects, keys, end users, connections, auth sessions, requests, idempotency keys, connector sessions. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create table projects (
      id text primary key,
      name text not null,
      organization text not null,
      created_at timestamptz not null
    );
    create table api_keys (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      kind text not null,
      mode text not null,
      read_only boolean not null default false,
      hash text not null unique,
      hint text not null,
      created_at timestamptz not null,
      revoked_at timestamptz
    );
    create index api_keys_project on api_keys(project_id);
    create table end_users (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      company_name text not null,
      source_id text not null,
      email text,
      created_at timestamptz not null,
      unique (project_id, source_id)
    );
    create index end_users_list on end_users(project_id, id desc);
    create table connections (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      end_user_id text not null unique references end_users(id) on delete cascade,
      organization text not null,
      status text not null,
      status_reason text,
      is_test boolean not null,
      username text not null unique,
      password_hash text not null,
      file_id text not null,
      file_identity text,
      company_file_path text,
      company_name text,
      product text,
      xml_version text,
      country text,
      last_request_at timestamptz,
      last_successful_request_at timestamptz,
      last_check_in_at timestamptz,
      last_seen_at timestamptz,
      last_connection_error_code text,
      retry_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index connections_org_test on connections(organization) where is_test;
    create table auth_sessions (
      id text primary key,
      project_id text not null references projects(id) on delete cascade,
      end_user_id text not null references end_users(id) on delete cascade,
      connection_id text not null references connections(id) on delete cascade,
      client_secret_hash text not null,
      password_box text not null,
      status text not null,
      is_test boolean not null,
      redirect_url text,
      expires_at timestamptz not null,
      created_at timestamptz not null,
      completed_at timestamptz
    );
    create index auth_sessions_connection on auth_sessions(connection_id);
    create table requests (
      id text primary key,
      seq bigserial not null,
      project_id text not null references projects(id) on delete cascade,
      end_user_id text not null references end_users(id) on delete cascade,
      connection_id text references connections(id) on delete cascade,
      operation_id text not null,
      method text not null,
      path text not null,
      mode text not null,
      status text not null,
      outcome text not null,
      is_write boolean not null,
      request_xml text,
      message_set_id text,
      ticket_hash text,
      sent_at timestamptz,
      completed_at timestamptz,
      queue_ttl_expires_at timestamptz,
      idempotency_key_present boolean not null,
      previous_request_id text,
      waiting_reason text,
      recovered boolean not null default false,
      xml_version text,
      status_code integer,
      status_severity text,
      timeline jsonb not null,
      warnings jsonb not null,
      result jsonb,
      error jsonb,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index requests_queue on requests(connection_id, seq) where status in ('queued', 'waiting_for_connection');
    create index requests_in_flight on requests(connection_id) where status in ('sent', 'outcome_unknown');
    create index requests_list on requests(project_id, id desc);
    create table idempotency_keys (
      project_id text not null references projects(id) on delete cascade,
      key text not null,
      fingerprint text not null,
      request_id text,
      response_box text,
      response_status integer,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      primary key (project_id, key)
    );
    create table connector_sessions (
      ticket_hash text primary key,
      connection_id text not null references connections(id) on delete cascade,
      state text not null,
      hcp_received boolean not null default false,
      last_error text,
      recovery_message_set_id text,
      recoveries_checked boolean not null default false,
      company_file_path text,
      xml_version text,
      created_at timestamptz not null,
      last_activity_at timestamptz not null,
      last_work_at timestamptz not null,
      closed_at timestamptz
    );
    create index connector_sessions_connection on connector_sessions(connection_id) where state = 'open';
`;
