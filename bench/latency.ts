/**
 * What a user feels with a real connector's slowness (issue 24, `BENCH_ONLY=latency`; printed,
 * never asserted). The compiled service (`dist/main.js`, bench/service-process.ts: on-disk store,
 * info logging) runs with `SIMULATOR=on` and `SIMULATOR_LATENCY=realistic`: its demo end user's
 * simulated Web Connector and application, inside the service, are as slow as decision 0034's
 * profile says. From this process, 8 callers at once each send sync reads one after another
 * (retrieves of the sample customers); the figures are the wall time for all of them, each
 * call's p50 / p99, and the message sets the application answered (the service's
 * `receiveResponseXML` count, from its metrics).
 *
 * Two runs on one store, the service restarted between them with another configuration:
 *  A. `CONNECTOR_MESSAGE_SET_MAX_REQUESTS=1`: one Request per message set;
 *  B. the default: several queued Requests of the connection in one message set (coalescing).
 * Each run is bounded (`RUN_DEADLINE_MS`); everything is on 127.0.0.1.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { configSchema } from "../src/config.ts";
import { formatLatencyProfile, REALISTIC_LATENCY } from "../src/platform/latency-profile.ts";
import { freshStore, startService, type BenchStore, type ServiceProcess } from "./service-process.ts";

/** Callers sending reads at once. */
export const LATENCY_CALLERS = 8;
/** Sync reads each caller sends, one after another, in the measured window. */
export const LATENCY_CALLS_PER_CALLER = 3;
/** The variable of coalescing (issue 24); the bench sets it whether or not the service knows it. */
const COALESCING_VARIABLE = "CONNECTOR_MESSAGE_SET_MAX_REQUESTS";
/** One run's bound, from the service's start to its last call. */
const RUN_DEADLINE_MS = 90_000;
/** One call's bound. */
const CALL_TIMEOUT_MS = 30_000;

export interface LatencyRow {
  figure: string;
  value: string;
  goal: string;
}

interface RunResult {
  wallMs: number;
  latenciesMs: number[];
  messageSets: number;
  failures: number;
}

interface DemoFile {
  endUserId: string;
  keys: { secretLive: string };
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The demo's key file, once the service has written it (with PostgreSQL, in a directory of its own). */
async function demoFile(target: BenchStore, deadline: number): Promise<DemoFile> {
  const path = join(target.dataDir, ...(target.databaseUrl ? ["postgres-demo"] : []), "demo.json");
  for (;;) {
    try {
      return JSON.parse(readFileSync(path, "utf8")) as DemoFile;
    } catch {
      if (performance.now() > deadline) throw new Error("the service wrote no demo key file");
      await delay(100);
    }
  }
}

/** A sync call's JSON body; a failure is thrown with its status. */
async function getJson(url: string, key: string, endUserId: string): Promise<unknown> {
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, "svc-end-user-id": endUserId },
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as unknown;
}

/** Message sets the application answered so far: the service's `receiveResponseXML` calls. */
async function answeredSets(service: ServiceProcess): Promise<number> {
  const text = await service.metrics();
  const line = /^ledger_bridge_connector_calls_total\{method="receiveResponseXML"\} (\S+)$/m.exec(text);
  return Number(line?.[1] ?? 0);
}

/** One run: the service with `env`, its demo end user online, a warm-up round, then the window. */
async function run(target: BenchStore, env: Record<string, string>): Promise<RunResult> {
  const deadline = performance.now() + RUN_DEADLINE_MS;
  const service = await startService(target, {
    SIMULATOR: "on",
    SIMULATOR_LATENCY: "realistic",
    RATE_LIMIT_MAX: "1000000",
    ...env,
  });
  try {
    const demo = await demoFile(target, deadline);
    const key = demo.keys.secretLive;
    for (;;) {
      const endUser = (await getJson(`${service.url}/v1/end-users/${demo.endUserId}`, key, "")) as {
        integrationConnections: Array<{ status: string }>;
      };
      if (endUser.integrationConnections[0]?.status === "online") break;
      if (performance.now() > deadline) throw new Error("the demo end user never came online");
      await delay(100);
    }
    const list = (await getJson(
      `${service.url}/v1/ledger-desktop/customers?limit=20`,
      key,
      demo.endUserId,
    )) as {
      data: Array<{ id: string }>;
    };
    const ids = list.data.map((customer) => customer.id);
    if (ids.length === 0) throw new Error("the demo company file has no customers");
    const retrieve = (i: number): Promise<unknown> =>
      getJson(
        `${service.url}/v1/ledger-desktop/customers/${encodeURIComponent(ids[i % ids.length] ?? "")}`,
        key,
        demo.endUserId,
      );
    // Warm-up: one round of every caller at once (the paths compiled, the session warm).
    await Promise.all(Array.from({ length: LATENCY_CALLERS }, (_, caller) => retrieve(caller)));

    const setsBefore = await answeredSets(service);
    const latenciesMs: number[] = [];
    let failures = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: LATENCY_CALLERS }, async (_, caller) => {
        for (let i = 0; i < LATENCY_CALLS_PER_CALLER; i += 1) {
          const callStarted = performance.now();
          try {
            await retrieve(caller * LATENCY_CALLS_PER_CALLER + i);
            latenciesMs.push(performance.now() - callStarted);
          } catch {
            failures += 1;
          }
          if (performance.now() > deadline) return;
        }
      }),
    );
    const wallMs = performance.now() - started;
    return { wallMs, latenciesMs, messageSets: (await answeredSets(service)) - setsBefore, failures };
  } finally {
    await service.stop();
  }
}

function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

const seconds = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : "n/a");

function runValue(result: RunResult): string {
  const calls = LATENCY_CALLERS * LATENCY_CALLS_PER_CALLER;
  return (
    `${seconds(result.wallMs)} for ${calls} reads; per call p50 ${seconds(percentile(result.latenciesMs, 0.5))} / ` +
    `p99 ${seconds(percentile(result.latenciesMs, 0.99))}; ${result.messageSets} message sets; ${result.failures} failed`
  );
}

/**
 * Both runs on a fresh store (`serverUrl`: PostgreSQL), as table rows; a run that fails or passes
 * its bound is a row saying why.
 */
export async function latencyRows(serverUrl: string | undefined): Promise<LatencyRow[]> {
  const engine = serverUrl ? "postgres" : "pglite";
  const p = REALISTIC_LATENCY;
  const who = `${LATENCY_CALLERS} callers × ${LATENCY_CALLS_PER_CALLER} sync retrieves`;
  const coalescing = COALESCING_VARIABLE in configSchema.shape;
  const runs = [
    { label: "A, one Request per message set", env: { [COALESCING_VARIABLE]: "1" } },
    {
      label: coalescing
        ? `B, coalesced (${COALESCING_VARIABLE} default)`
        : `B, coalesced (when ${COALESCING_VARIABLE} exists; today as A)`,
      env: {},
    },
  ];
  const rows: LatencyRow[] = [
    {
      figure: `[${engine}] latency profile of the simulated end user (SIMULATOR_LATENCY=${formatLatencyProfile(p)})`,
      value: `${p.soapCallMs} ms per connector call, ${p.messageSetMs} per message set, ${p.requestMs} per request, ${p.recordMs} per record`,
      goal: "decision 0034",
    },
  ];
  const target = await freshStore(serverUrl);
  const results: Array<RunResult | null> = [];
  try {
    for (const { label, env } of runs) {
      try {
        const result = await run(target, env);
        results.push(result);
        rows.push({ figure: `[${engine}] latency ${label}: ${who}`, value: runValue(result), goal: "-" });
      } catch (error) {
        results.push(null);
        const reason = error instanceof Error ? error.message : String(error);
        rows.push({
          figure: `[${engine}] latency ${label}`,
          value: `failed: ${reason.slice(0, 120)}`,
          goal: "-",
        });
      }
    }
  } finally {
    await target.drop();
  }
  const [a, b] = results;
  rows.push({
    figure: `[${engine}] latency: ${LATENCY_CALLERS} callers' reads, A's wall time ÷ B's`,
    value: a && b ? `${(a.wallMs / b.wallMs).toFixed(2)}×` : "n/a",
    goal: coalescing ? "≥ 3.5×" : `≥ 3.5× once ${COALESCING_VARIABLE} exists`,
  });
  return rows;
}
