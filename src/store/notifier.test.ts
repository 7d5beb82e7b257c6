import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { openTestStore } from "../testing/harness.ts";
import type { Store } from "./database.ts";
import { PostgresNotifier } from "./notifier.ts";
import { StoreUnavailableError } from "./unavailable.ts";

/**
 * The PostgreSQL store (its pool and its notifier) survives its connections being cut (a database
 * restart, an operator's `pg_terminate_backend`): no crash, a statement whose connection broke fails
 * as the store not answering, the LISTEN client reconnects, and waiters are woken once it is back.
 * PostgreSQL only; the embedded store has no connections to lose.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);

describe(
  "PostgreSQL store and notifier when their connections are cut",
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

    it("idle pooled connections cut: the pool re-emits their errors on itself, heard; the process hears nothing", async () => {
      const uncaught: unknown[] = [];
      const record = (error: unknown): void => void uncaught.push(error);
      process.on("uncaughtException", record);
      try {
        // Three clients in the pool, then all idle.
        await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(first.store.db)));
        const cut = await sql<{
          pid: number;
        }>`select pid, pg_terminate_backend(pid) as cut from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and state = 'idle'`.execute(
          first.store.db,
        );
        assert.ok(cut.rows.length >= 2, `idle pooled clients were cut (${cut.rows.length})`);
        // Until their goodbyes have reached the clients (bounded).
        for (let i = 0; ; i++) {
          const left =
            await sql`select 1 from pg_stat_activity where pid = any(${cut.rows.map((r) => r.pid)})`.execute(
              first.store.db,
            );
          if (left.rows.length === 0) break;
          assert.ok(i < 1000, "the backends never ended");
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(uncaught, []);
        const rows = await sql<{ one: number }>`select 1 as one`.execute(first.store.db);
        assert.equal(rows.rows[0]?.one, 1);
      } finally {
        process.off("uncaughtException", record);
      }
    });

    it("a connection cut while a transaction holds it: the transaction fails as the store not answering, the process hears nothing", async () => {
      // The pool listens for a client's `error` event only while the client is idle; one cut while
      // checked out, with no statement running, emits it with nobody listening: an uncaught exception
      // (a crash in production; the CI failure of store-outage.test.ts).
      const uncaught: unknown[] = [];
      const record = (error: unknown): void => void uncaught.push(error);
      process.on("uncaughtException", record);
      try {
        const outcome = await first.store.db
          .transaction()
          .execute(async (trx) => {
            const own = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
            const pid = own.rows[0]?.pid;
            await sql`select pg_terminate_backend(${pid})`.execute(first.store.db);
            // Until the backend is gone and its goodbye has reached the client (bounded).
            for (let i = 0; ; i++) {
              const alive = await sql`select 1 from pg_stat_activity where pid = ${pid}`.execute(
                first.store.db,
              );
              if (alive.rows.length === 0) break;
              assert.ok(i < 1000, "the backend never ended");
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
            await sql`select 1`.execute(trx);
            return "answered";
          })
          .catch((error: unknown) => error);
        assert.ok(outcome instanceof StoreUnavailableError, `store unavailable, not ${String(outcome)}`);
        assert.deepEqual(uncaught, []);
        const rows = await sql<{ one: number }>`select 1 as one`.execute(first.store.db);
        assert.equal(rows.rows[0]?.one, 1, "the pool dropped the broken client and answers");
      } finally {
        process.off("uncaughtException", record);
      }
    });
  },
);
