/**
 * P4 (issue 8 §4): idle connector sessions held open on one instance. The service runs as users run
 * it (`dist/main.js`, its own process, on-disk PGlite or PostgreSQL, info logging to a file); the
 * connectors run in another process (bench/connector-fleet.ts), each authenticated and holding
 * `sendRequestXML`, re-asking after the real connector's NoOp pause. At each step (1,000 then
 * 5,000 sessions): the service's resident memory, its CPU use while every session idles, and the
 * hand-over p50/p99 of sync calls to one of them.
 */
import { performance } from "node:perf_hooks";
import { loadConfig } from "../src/config.ts";
import { Fleet } from "./fleet.ts";
import { freshStore, seedStore, startService } from "./service-process.ts";

/** Session counts measured, in order (the fleet grows from one to the next). */
export const IDLE_STEPS = [1000, 5000];
const HANDOVER_SAMPLES = 100;
/**
 * How long the service's CPU use is watched while every session idles: one whole idle cycle (the
 * hold and the connector's pause), so that each session's re-ask falls in it once whatever the
 * hold; a shorter window measured either a quiet stretch or a burst of re-asks.
 */
const idleWindowMs = (holdMs: number): number => holdMs + NOOP_PAUSE_MS;
/** The real connector waits 5 s after NoOp before asking again. */
const NOOP_PAUSE_MS = 5000;
const RAMP_CONCURRENCY = 50;

export interface IdleStep {
  sessions: number;
  held: number;
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  /** Service CPU time per wall-clock second while every session idled (1 = one core busy). */
  idleCpu: number;
  handOverP50: number;
  handOverP99: number;
  failures: number;
  rampSeconds: number;
}

export interface IdleResult {
  engine: string;
  steps: IdleStep[];
  baselineRssBytes: number;
  baselineHeapUsedBytes: number;
  baselineExternalBytes: number;
  holdMs: number;
}

function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

export async function measureIdleSessions(serverUrl: string | undefined): Promise<IdleResult> {
  const max = Math.max(...IDLE_STEPS);
  const target = await freshStore(serverUrl);
  const seeded = await seedStore(target, max);
  // The service's own hold (CONNECTOR_HOLD_MS's default) unless BENCH_HOLD_MS asks for another.
  const holdMs = Number(process.env.BENCH_HOLD_MS ?? loadConfig({}).CONNECTOR_HOLD_MS);
  const service = await startService(target, {
    CONNECTOR_HOLD_MS: String(holdMs),
    RATE_LIMIT_MAX: "1000000",
  });
  const fleet = new Fleet();
  const steps: IdleStep[] = [];
  try {
    const baselineRssBytes = service.rss();
    const baseline = await service.memory();
    let connected = 0;
    for (const count of IDLE_STEPS) {
      const rampStart = performance.now();
      const connectors = seeded.endUsers.slice(connected, count).map((e) => ({
        url: service.url,
        userName: e.userName,
        password: e.password,
      }));
      const ramp = await fleet.send<"connected">({
        cmd: "connect",
        connectors,
        noOpPauseMs: NOOP_PAUSE_MS,
        rampConcurrency: RAMP_CONCURRENCY,
      });
      connected = count;
      // Settled: every session through its first hold (company file accepted, connection online).
      const held = await fleet.untilHeld(Math.floor(count * 0.95), 120_000);
      const rampSeconds = (performance.now() - rampStart) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const cpuBefore = service.cpuSeconds();
      const windowStart = performance.now();
      await new Promise((resolve) => setTimeout(resolve, idleWindowMs(holdMs)));
      const idleCpu = (service.cpuSeconds() - cpuBefore) / ((performance.now() - windowStart) / 1000);
      const rssBytes = service.rss();
      const memory = await service.memory();
      const first = seeded.endUsers[0];
      const handOver = await fleet.send<"handover">({
        cmd: "handover",
        index: 0,
        url: service.url,
        secretKey: seeded.secretKey,
        endUserId: first?.endUserId ?? "",
        samples: HANDOVER_SAMPLES,
      });
      steps.push({
        sessions: held.sessions,
        held: held.held,
        rssBytes,
        ...memory,
        idleCpu,
        handOverP50: percentile(handOver.samples, 0.5),
        handOverP99: percentile(handOver.samples, 0.99),
        failures: handOver.failures + ramp.refused + held.errors,
        rampSeconds,
      });
    }
    return {
      engine: serverUrl ? "postgres" : "pglite",
      steps,
      baselineRssBytes,
      baselineHeapUsedBytes: baseline.heapUsedBytes,
      baselineExternalBytes: baseline.externalBytes,
      holdMs,
    };
  } finally {
    await fleet.close();
    await service.stop();
    await target.drop();
  }
}
