import { sql, type Kysely } from "kysely";
import { statements } from "./statements.ts";

/**
 * Indexes of the background sweep (requests/sweeper.ts, store/sweeps.ts), so that a sweep that finds
 * nothing to do reads an index range instead of scanning the tables:
 * - waiting requests by queue TTL deadline (a partial index: only unsent requests are in it);
 * - idempotency keys by the end of their retention.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements(DDL)) await sql.raw(statement).execute(db);
}

const DDL = `
    create index requests_queue_ttl on requests(queue_ttl_expires_at)
      where status in ('queued', 'waiting_for_connection') and queue_ttl_expires_at is not null;
    create index idempotency_keys_expiry on idempotency_keys(expires_at);
`;
