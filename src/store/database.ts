import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { migrateToLatest } from "./migrate.ts";
import { LocalNotifier, PostgresNotifier, type Notifier } from "./notifier.ts";
import { PGliteDialect } from "./pglite-dialect.ts";
import type { DatabaseSchema } from "./schema.ts";

export type Db = Kysely<DatabaseSchema>;

export interface Store {
  db: Db;
  notifier: Notifier;
  engine: "pglite" | "postgres";
  close(): Promise<void>;
}

export interface StoreOptions {
  /** PostgreSQL connection string; absent means PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; absent means in memory. */
  dataDir?: string | undefined;
}

// int8 (bigserial) as string, timestamps as Date: the pg defaults, stated explicitly.
pg.types.setTypeParser(20, (value) => value);

/** Opens the store on PGlite or PostgreSQL and applies migrations. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
    await migrateToLatest(db as Kysely<unknown>);
    const notifier = await PostgresNotifier.connect(pool, options.databaseUrl, pg.Client);
    return {
      db,
      notifier,
      engine: "postgres",
      close: async () => {
        await notifier.close();
        await db.destroy();
      },
    };
  }
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const pglite = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
  await pglite.waitReady;
  const db = new Kysely<DatabaseSchema>({ dialect: new PGliteDialect(pglite) });
  await migrateToLatest(db as Kysely<unknown>);
  const notifier = new LocalNotifier();
  return {
    db,
    notifier,
    engine: "pglite",
    close: async () => {
      await notifier.close();
      await db.destroy();
      await pglite.close();
    },
  };
}

/** Serialises a value for a jsonb column. */
export function json(value: unknown): string {
  return JSON.stringify(value);
}
