import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { openTestStore } from "../testing/harness.ts";
import type { Store } from "./database.ts";
import { PostgresNotifier } from "./notifier.ts";

/**
 * The PostgreSQL notifier survives its connections being cut (a database restart, an operator's
 * `pg_terminate_backend`): no crash, the LISTEN client reconnects, and waiters are woken once it is
 * back. PostgreSQL only; the embedded store has no connections to lose.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);

describe(
  "PostgreSQL notifier when its connections are cut",
  { skip: onPostgres ? false : "needs DATABASE_URL" },
  () => {
    let first: { store: Store; drop: () => Promise<void> };
    before(async () => {
      first = await openTestStore();
    });
    after(async () => {
      await first.store.close();
      await first.drop();
    });

    it("reconnects, wakes its waiters, and the pool keeps answering", async () => {
      const notifier = first.store.notifier;
      assert.ok(notifier instanceof PostgresNotifier);
      assert.equal(notifier.listening, true);
      const woken = notifier.wait("connection:x", AbortSignal.timeout(20_000));
      // Cut every other connection to this database: the LISTEN client and the pool's idle ones.
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid()`.execute(first.store.db);
      // The waiter is woken after the reconnection (its notification may have been lost in the gap).
      assert.equal(await woken, undefined);
      assert.equal(notifier.listening, true);
      const rows = await sql<{ one: number }>`select 1 as one`.execute(first.store.db);
      assert.equal(rows.rows[0]?.one, 1);
    });
  },
);
