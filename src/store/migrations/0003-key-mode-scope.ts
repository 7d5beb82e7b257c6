import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * A key's mode scopes its objects (decision 0005): end users, requests and idempotency keys carry
 * `is_test`, and every lookup filters on it as it filters on the project.
 *
 * Existing data: an end user is a test end user when its connection is a test connection (the only
 * mode it could have been used in); its requests follow it. `sourceId` is unique per project and
 * mode, so a live end user's `sourceId` says nothing about test end users. Idempotency keys are
 * scoped per mode: a test key can neither replay nor block a live key's response.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    alter table end_users add column is_test boolean not null default false;
    update end_users set is_test = true
      where exists (select 1 from connections c where c.end_user_id = end_users.id and c.is_test);
    alter table end_users drop constraint end_users_project_id_source_id_key;
    alter table end_users add constraint end_users_project_mode_source unique (project_id, is_test, source_id);
    drop index end_users_list;
    create index end_users_list on end_users(project_id, is_test, id desc);
    alter table requests add column is_test boolean not null default false;
    update requests set is_test = true
      where exists (select 1 from end_users e where e.id = requests.end_user_id and e.is_test);
    drop index requests_list;
    create index requests_list on requests(project_id, is_test, id desc);
    alter table idempotency_keys add column is_test boolean not null default false;
    alter table idempotency_keys drop constraint idempotency_keys_pkey;
    alter table idempotency_keys add primary key (project_id, is_test, key);
`;
