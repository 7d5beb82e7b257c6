import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { createHash } from "node:crypto";
import {
  Kysely,
  PostgresDialect,
  type LogEvent,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from "kysely";
import pg from "pg";
import { configSchema } from "../config.ts";
import { registerEventNotifier } from "./connection-events.ts";
import { migrateToLatest } from "./migrate.ts";
import { LocalNotifier, PostgresNotifier, type Notifier } from "./notifier.ts";
import { PGliteDialect } from "./pglite-dialect.ts";
import type { DatabaseSchema } from "./schema.ts";
import { StoreUnavailableError, classifyStoreError } from "./unavailable.ts";

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
  /**
   * PGlite: the size of its shared buffer pool in MB (`shared_buffers`). PGlite's own default, 128 MB,
   * is most of its resident memory (decision 0024). Default {@link EMBEDDED_SHARED_BUFFERS_MB}.
   */
  sharedBuffersMb?: number | undefined;
  /**
   * Told of every statement the service runs through Kysely, with how long it took (profiling and
   * the bench's SQL profile). Transaction control (begin, commit, rollback) is not reported.
   */
  onQuery?: QueryObserver | undefined;
  /**
   * PostgreSQL: how long a statement waits for a pooled connection (the pool exhausted, the server
   * unreachable) before the store counts as not answering (decision 0019). Default 10 s.
   */
  connectTimeoutMs?: number | undefined;
  /** PostgreSQL: the server's `statement_timeout` for the service's statements (0: none). Default 30 s. */
  statementTimeoutMs?: number | undefined;
  /**
   * Called before every statement with its SQL, transaction control included; what it throws is the
   * statement's failure. Tests use it to make the store fail under a running service.
   */
  gate?: StatementGate | undefined;
}

/** See {@link StoreOptions.gate}. */
export type StatementGate = (sql: string) => void;

/** One statement run through the store: its SQL text, time to its result, and whether it failed. */
export interface ObservedQuery {
  sql: string;
  durationMs: number;
  failed: boolean;
}

export type QueryObserver = (query: ObservedQuery) => void;

/** Kysely's `log` option reporting each statement to the observer, or nothing without one. */
function logOption(observer: QueryObserver | undefined): { log?: (event: LogEvent) => void } {
  if (!observer) return {};
  return {
    log: (event) =>
      observer({
        sql: event.query.sql,
        durationMs: event.queryDurationMillis,
        failed: event.level === "error",
      }),
  };
}

/**
 * The embedded store's shared buffer pool, in MB (decision 0024; the configuration's default): PGlite reserves and touches the
 * whole pool at start, so its 128 MB default was the largest part of the service's idle memory. The
 * service's tables of a small deployment fit in 16 MB; pages beyond it are read from the data
 * directory's files (the operating system's page cache).
 */
export const EMBEDDED_SHARED_BUFFERS_MB: number =
  configSchema.shape.STORE_EMBEDDED_SHARED_BUFFERS_MB.parse(undefined);

/** PGlite's start parameters: its own, plus the settings that size its memory. */
export function embeddedStartParams(sharedBuffersMb: number): string[] {
  return [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffersMb}MB`];
}

// int8 (bigserial) as string, timestamps as Date: the pg defaults, stated explicitly.
pg.types.setTypeParser(20, (value) => value);

/** Opens the store on PGlite or PostgreSQL and applies migrations. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const connectionTimeoutMillis = options.connectTimeoutMs ?? 10_000;
    // Migrations run on a connection of their own, without the statement timeout (a migration on a
    // large table may take longer than any API statement should).
    const migrating = new Kysely<unknown>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: options.databaseUrl, max: 1, connectionTimeoutMillis }),
      }),
    });
    try {
      await migrateToLatest(migrating);
    } finally {
      await migrating.destroy();
    }
    const statementTimeout = options.statementTimeoutMs ?? 30_000;
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: 10,
      connectionTimeoutMillis,
      keepAlive: true,
      ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}),
    });
    // A pooled client's connection can break (a restart, an administrator's terminate, a reset
    // socket), and an `error` event nobody hears is an uncaught exception: the end of the process.
    // Idle, the pool hears it and re-emits it on itself; checked out, the pool does not listen, so
    // every client has a listener of its own. The statement running or next sent fails with that
    // error (the store not answering), and the pool drops the client, so hearing it is all there is.
    const heard = (): void => undefined;
    pool.on("error", heard);
    pool.on("connect", (client) => client.on("error", heard));
    const db = new Kysely<DatabaseSchema>({
      dialect: new PostgresDialect({ pool: preparingPool(pool, options.gate) }),
      ...logOption(options.onQuery),
    });
    const notifier = await PostgresNotifier.connect(pool, options.databaseUrl, pg.Client);
    registerEventNotifier(db, notifier);
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
  const pgliteOptions = {
    startParams: embeddedStartParams(options.sharedBuffersMb ?? EMBEDDED_SHARED_BUFFERS_MB),
  };
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    await createEmbeddedDataDir(options.dataDir, pgliteOptions.startParams);
  }
  const pglite = options.dataDir ? new PGlite(options.dataDir, pgliteOptions) : new PGlite(pgliteOptions);
  await pglite.waitReady;
  const db = new Kysely<DatabaseSchema>({
    dialect: new PGliteDialect(pglite, options.gate),
    ...logOption(options.onQuery),
  });
  await migrateToLatest(db as Kysely<unknown>);
  const notifier = new LocalNotifier();
  registerEventNotifier(db, notifier);
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

/**
 * Creates the embedded store's data directory (PostgreSQL's initdb) in a process of its own, when it
 * has none yet. PGlite runs initdb in a second WebAssembly instance of its own whose memory is never
 * given back once it closes: about 400 MB that the first start of a new data directory kept for as
 * long as it ran (decision 0024). A child process returns it when it exits.
 */
async function createEmbeddedDataDir(dataDir: string, startParams: string[]): Promise<void> {
  if (existsSync(join(dataDir, "PG_VERSION"))) return;
  const script = [
    "const { PGlite } = await import(process.argv[1]);",
    "const pglite = new PGlite(process.argv[2], { startParams: JSON.parse(process.argv[3]) });",
    "await pglite.waitReady;",
    "await pglite.close();",
  ].join("\n");
  const args = [import.meta.resolve("@electric-sql/pglite"), dataDir, JSON.stringify(startParams)];
  await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script, ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Runs queries with parameters as named prepared statements (node-postgres prepares a named
 * statement once per connection and reuses it), so PostgreSQL parses and plans each distinct
 * statement once per connection instead of on every call. The name is derived from the SQL text.
 *
 * A connection that cannot be had, for whatever reason (refused, the pool exhausted past its
 * timeout, the database shutting down or refusing connections), is the store not answering; so is
 * a statement whose connection broke or that ran out of time (store/unavailable.ts).
 */
function preparingPool(pool: pg.Pool, gate: StatementGate | undefined): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string => {
    let name = names.get(text);
    if (name === undefined) {
      name = `lb_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    connect: async () => {
      try {
        return new PreparingClient(await pool.connect(), nameOf, gate);
      } catch (error) {
        throw new StoreUnavailableError("The store does not answer: no connection could be had.", {
          cause: error,
        });
      }
    },
    end: () => pool.end(),
  };
}

class PreparingClient implements PostgresPoolClient {
  constructor(
    private readonly client: pg.PoolClient,
    private readonly nameOf: (text: string) => string,
    private readonly gate: StatementGate | undefined,
  ) {}

  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters: readonly unknown[] = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof sqlOrCursor !== "string") throw new Error("Cursors are not used by ledger-bridge.");
    const config =
      parameters.length === 0
        ? { text: sqlOrCursor }
        : { name: this.nameOf(sqlOrCursor), text: sqlOrCursor, values: [...parameters] };
    const run = async (): Promise<PostgresQueryResult<R>> => {
      this.gate?.(sqlOrCursor);
      return (await this.client.query(config)) as unknown as PostgresQueryResult<R>;
    };
    return run().catch((error: unknown) => {
      throw classifyStoreError(error);
    });
  }

  release(): void {
    this.client.release();
  }
}

/** Serialises a value for a jsonb column. */
export function json(value: unknown): string {
  return JSON.stringify(value);
}
