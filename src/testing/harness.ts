import { ActivityStamps } from "../store/activity-stamps.ts";
import { sealingFor } from "../platform/sealing.ts";
import { randomBytes } from "node:crypto";
import type { TestContext } from "node:test";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { pino, type Logger } from "pino";
import { buildApp } from "../app.ts";
import { loadConfig, type Config } from "../config.ts";
import type { Deps } from "../deps.ts";
import { FakeClock, type Clock } from "../platform/clock.ts";
import { newInstanceId } from "../platform/ids.ts";
import { Metrics } from "../platform/metrics.ts";
import type { Tracing } from "../platform/tracing.ts";
import { sampleStoredState } from "../store/state-sample.ts";
import { openStore, type QueryObserver, type StatementGate, type Store } from "../store/database.ts";
import { createProject, type CreatedProject } from "../tenancy/api-keys.ts";

/**
 * Test harness: every test file gets its own database (a fresh in-memory PGlite, or a fresh
 * database on the PostgreSQL server named by DATABASE_URL), a fake clock by default, and teardown
 * registered on the test context.
 */
export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  clock: Clock;
  fakeClock: FakeClock | null;
  project: CreatedProject;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: Clock;
  /** The clock of transport deadlines (a body's receive timeout); real time when absent. */
  transportClock?: Clock;
  config?: Record<string, string>;
  /** Called before every statement (see `StoreOptions.gate`): tests make the store fail with it. */
  gate?: StatementGate;
  /** The service's logger; silent by default (tests of what is logged give their own). */
  logger?: Logger;
  /** OpenTelemetry traces (tests: `exportingTo` an in-memory exporter, platform/tracing-sdk.ts); off when absent. */
  tracing?: Tracing;
}

/**
 * The key-encryption key tests run with unless they say otherwise (`SECRETS_KEY: ""` for none): the
 * suite exercises sealed secrets at rest as a configured deployment does (decision 0032).
 */
export const TEST_SECRETS_KEY = "dGVzdC1rZXktZW5jcnlwdGlvbi1rZXktMzItYnl0ZXM=";

/** Opens an isolated store for tests (`onQuery`, `gate`: see `StoreOptions`). */
export async function openTestStore(
  options: { onQuery?: QueryObserver; gate?: StatementGate; statementTimeoutMs?: number } = {},
): Promise<{
  store: Store;
  url: string | undefined;
  drop: () => Promise<void>;
}> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const store = await openStore({ onQuery: options.onQuery, gate: options.gate });
    return { store, url: undefined, drop: async () => {} };
  }
  const name = `lbtest_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const store = await openStore({
    databaseUrl: url.toString(),
    onQuery: options.onQuery,
    gate: options.gate,
    statementTimeoutMs: options.statementTimeoutMs,
  });
  return {
    store,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export async function buildTestApp(t: TestContext | null, options: TestAppOptions = {}): Promise<TestApp> {
  const fakeClock = options.clock ? null : new FakeClock();
  const clock = options.clock ?? (fakeClock as FakeClock);
  const { store, drop } = await openTestStore(options.gate ? { gate: options.gate } : {});
  const config: Config = loadConfig({
    LOG_LEVEL: "silent",
    PUBLIC_URL: "http://127.0.0.1:8080",
    SECRETS_KEY: TEST_SECRETS_KEY,
    ...options.config,
  });
  const deps: Deps = {
    config,
    store,
    db: store.db,
    clock,
    logger: options.logger ?? pino({ level: "silent" }),
    instanceId: newInstanceId(),
    activity: new ActivityStamps(),
    sealing: sealingFor(config),
    metrics: new Metrics(),
    transportClock: options.transportClock,
    tracing: options.tracing,
  };
  deps.metrics.sampleStateWith(() => sampleStoredState(store.db, deps.instanceId));
  const app = await buildApp(deps);
  await app.ready();
  const project = await createProject(deps, { name: "Test project" });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await app.close();
    await store.close();
    await drop();
  };
  t?.after(close);
  return { app, deps, clock, fakeClock, project, close };
}

/** Authorization header for a key. */
export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}
