/**
 * The service as users run it, for the bench figures that need it alone in its process (memory of
 * idle sessions, two instances): the compiled `dist/main.js` (what `npm start` runs) on an
 * on-disk PGlite data directory or a fresh PostgreSQL database, info logging written to a file, the
 * simulator off. The bench seeds the store first, as an operator's provisioning would: a project
 * with keys and end users with connector credentials (`seedStore`).
 */
import { ActivityStamps } from "../src/store/activity-stamps.ts";
import { sealingFor } from "../src/platform/sealing.ts";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import type { Deps } from "../src/deps.ts";
import { systemClock } from "../src/platform/clock.ts";
import { newInstanceId } from "../src/platform/ids.ts";
import { Metrics } from "../src/platform/metrics.ts";
import { randomAlphanumeric } from "../src/platform/random.ts";
import { openStore } from "../src/store/database.ts";
import { createProject } from "../src/tenancy/api-keys.ts";
import { ensureConnection } from "../src/tenancy/auth-sessions.ts";
import { createEndUser } from "../src/tenancy/end-users.ts";
import { freePort } from "../src/testing/system.ts";
import { tracked } from "./children.ts";

/** USER_HZ of /proc times: 100 on Linux for every common architecture. */
const CLOCK_TICKS_PER_SECOND = 100;

const ROOT = join(import.meta.dirname, "..");

/** Where a bench service keeps its data: a PGlite directory, and on PostgreSQL its own database. */
export interface BenchStore {
  dataDir: string;
  /** The database's URL on PostgreSQL; undefined for PGlite. */
  databaseUrl: string | undefined;
  drop(): Promise<void>;
}

/** A fresh data directory, and with `serverUrl` a fresh database on that PostgreSQL server. */
export async function freshStore(serverUrl: string | undefined): Promise<BenchStore> {
  const dataDir = mkdtempSync(join(tmpdir(), "lb-bench-"));
  if (!serverUrl) {
    return {
      dataDir,
      databaseUrl: undefined,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `lbbench_${randomAlphanumeric(10).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** What the bench's connectors and callers need: the API key and each end user's connector login. */
export interface Seeded {
  secretKey: string;
  endUsers: Array<{ endUserId: string; userName: string; password: string }>;
}

/**
 * A project and `count` end users with connections and connector passwords, written straight to
 * the store (with the service's own functions, in one transaction) before the service starts.
 */
export async function seedStore(target: BenchStore, count: number): Promise<Seeded> {
  const store = await openStore({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    const deps: Deps = {
      config: loadConfig({ LOG_LEVEL: "silent" }),
      store,
      db: store.db,
      clock: systemClock,
      logger: pino({ level: "silent" }),
      instanceId: newInstanceId(),
      activity: new ActivityStamps(),
      sealing: sealingFor({}),
      metrics: new Metrics(),
    };
    const { project, keys } = await createProject(deps, { name: "Bench" });
    const principal = {
      projectId: project.id,
      organization: project.organization,
      keyId: "bench",
      mode: "live" as const,
      readOnly: false,
    };
    const endUsers: Seeded["endUsers"] = [];
    await store.db.transaction().execute(async (trx) => {
      const inTrx: Deps = { ...deps, db: trx };
      const now = new Date();
      for (let i = 0; i < count; i += 1) {
        const endUser = await createEndUser(inTrx, principal, {
          companyName: `Bench Company ${i}`,
          sourceId: `bench-${i}`,
        });
        const password = randomAlphanumeric(24);
        const connection = await ensureConnection(inTrx, principal, endUser.id, false, password, now);
        endUsers.push({ endUserId: endUser.id, userName: connection.username, password });
      }
    });
    return { secretKey: keys.secretLive, endUsers };
  } finally {
    await store.close();
  }
}

export interface ServiceProcess {
  url: string;
  pid: number;
  /** Resident memory of the service process now (VmRSS), in bytes. */
  rss(): number;
  /** The service's own memory figures (its Prometheus metrics): V8 heap used and external (WASM, buffers). */
  memory(): Promise<{ heapUsedBytes: number; externalBytes: number }>;
  /** CPU time the service process has used so far (user + system), in seconds. */
  cpuSeconds(): number;
  /** Lines the service logged (info level), as written to its log file. */
  logLines(): number;
  stop(): Promise<void>;
}

let built = false;

/** Builds dist/ once per bench run if the sources changed since the last build. */
function buildOnce(): void {
  if (built) return;
  const result = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (result.status !== 0) throw new Error("the build of dist/ failed");
  built = true;
}

/** Starts `dist/main.js` on the store with `env` on top of the bench's, once its `/readyz` answers. */
export async function startService(
  target: BenchStore,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  buildOnce();
  const port = await freePort();
  const metricsPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(target.dataDir, `service-${port}.log`);
  const log = openSync(logFile, "a");
  const { DATABASE_URL: _server, ...inherited } = process.env;
  // BENCH_PROFILE_DIR: each service process writes a CPU profile there when it stops (profile first).
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const profiling = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const child: ChildProcess = tracked(
    spawn(process.execPath, [...profiling, "--enable-source-maps", "dist/main.js"], {
      cwd: ROOT,
      env: {
        ...inherited,
        DATA_DIR: target.dataDir,
        PORT: String(port),
        HOST: "127.0.0.1",
        PUBLIC_URL: url,
        LOG_LEVEL: "info",
        SIMULATOR: "off",
        METRICS_PORT: String(metricsPort),
        ...(target.databaseUrl ? { DATABASE_URL: target.databaseUrl } : {}),
        ...env,
      },
      stdio: ["ignore", log, log],
    }),
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the service exited: ${readFileSync(logFile, "utf8").slice(-2000)}`);
    if (Date.now() - started > 120_000) throw new Error("the service did not start within 120 s");
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pid = child.pid ?? 0;
  return {
    url,
    pid,
    rss: () => {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0") * 1024;
    },
    memory: async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const gauge = (name: string): number =>
        Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
      return {
        heapUsedBytes: gauge("ledger_bridge_nodejs_heap_size_used_bytes"),
        externalBytes: gauge("ledger_bridge_nodejs_external_memory_bytes"),
      };
    },
    cpuSeconds: () => {
      // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name): utime, stime in ticks.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
    },
    logLines: () => readFileSync(logFile, "utf8").split("\n").length - 1,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const killed = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(killed);
    },
  };
}
