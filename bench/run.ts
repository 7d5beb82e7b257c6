/**
 * `npm run bench`: the benchmark suite (architecture §7). Prints one run's figures as a table and
 * exits 0; timings are reported, never asserted (the machines are shared and noisy).
 *
 * Figures:
 *  1. Hand-over latency with a connector in session (architecture §2): a sync passthrough read is
 *     issued while the connector's `sendRequestXML` is held; measured from the HTTP call start (and,
 *     separately, from the Request's commit, seen as the connection wake-up the API sends right after
 *     inserting the row) to the simulated application receiving the request document.
 *  2. Sync round trips per second through one connection (FIFO per connection, one message set in
 *     flight at a time) with a zero-latency simulated application: passthrough reads (each its own
 *     message set) and typed retrieves (queued ones share a message set, decision 0036).
 *  3. Webhook deliveries per second to a local receiver (a burst of events written through the
 *     outbox in one transaction, measured from its commit to the last arrival), and the latency
 *     from a Request's state change (its `completedAt`) to the arrival of its `request.succeeded`
 *     event, while sync round trips run (the endpoint sets `includeSyncRequests`).
 *  4. P3: `GET /v1/requests/{id}` requests per second ÷ a bare Fastify hello-world's, same load
 *     generator settings (bench/api-rate.ts).
 *  5. The same on PostgreSQL, when DATABASE_URL is set.
 *  6. P4: idle connector sessions on one instance: memory, idle CPU, hand-over (bench/idle-sessions.ts).
 *  7. P5: two instances ÷ one on PostgreSQL under mixed load (bench/two-instances.ts).
 *
 * What users run: the store is on disk (a fresh PGlite data directory, or a fresh PostgreSQL
 * database) and the service logs at info level to a file, as `npm start` does; only the rate limit
 * is lifted (the load would exceed a production limit per key by design).
 * For 1–5 the service runs on the main thread; the callers and the simulated end user (Web
 * Connector and company file) run on a worker thread (bench/end-user-worker.ts), the webhook
 * receiver and the load generator on others, as they would on other machines. For 6–7 the service
 * is `dist/main.js` (the compiled service) in its own process and the connectors run in another (bench/connector-fleet.ts).
 * All traffic is on 127.0.0.1; the run is bounded by a watchdog, which prints what was measured.
 *  8. Start-up time and idle memory of `npm start` (the compiled service), `node dist/main.js` and
 *     `npm run dev` (tsx), with the quick start's defaults (bench/startup.ts).
 *  9. The service's RSS with no connector session on each store, after a first start and after a
 *     restart, 10 s idle (bench/idle-memory.ts).
 * 10. Hostile load on the connector endpoint (issue 23): the service's memory and `/readyz` latency
 *     while 10 callers send 16 MB junk bodies, and failed logins per second admitted (bench/hostile.ts).
 * 11. What a user feels with a real connector's slowness (issue 24): 8 callers' sync reads through a
 *     simulated end user on the `realistic` latency profile, one Request per message set against
 *     coalesced (bench/latency.ts).
 * 12. The mirror (issue 26): fill rate, a mirrored page of 150 invoices, freshness lag of a change
 *     made in the company file, store bytes per mirrored invoice (bench/mirror.ts).
 * 13. What traces cost (issue 28, decision 0048): P1's hand-over and sequential sync round trips and
 *     P3, on each store, with tracing off (no SDK) and on (the SDK started, every span made and
 *     handed to a batch processor whose exporter drops them), in one run.
 * `BENCH_ONLY=p1,p3,p4,p5,typed,batch,startup,memory,hostile,latency,mirror,traces` (any subset) runs only some figures (p1 covers P1, P2 and webhooks).
 */
import { loadConfig } from "../src/config.ts";
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { serviceLogger } from "../src/platform/logging.ts";
import { systemClock } from "../src/platform/clock.ts";
import { newId } from "../src/platform/ids.ts";
import { EVENTS_CHANNEL, insertEventIfSubscribed } from "../src/store/events.ts";
import { openStore } from "../src/store/database.ts";
import { settledRequestsOf } from "../src/requests/settled-cache.ts";
import { startSystem, type System } from "../src/testing/system.ts";
import type { Tracing } from "../src/platform/tracing.ts";
import { sdkTracing } from "../src/platform/tracing-sdk.ts";
import { ExportResultCode } from "@opentelemetry/core";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { LOAD_CONNECTIONS, LOAD_SECONDS, measureApiRate, type ApiRate } from "./api-rate.ts";
import { EndUserThread, setUpEndUser } from "./end-user-thread.ts";
import { IDLE_STEPS, measureIdleSessions, type IdleResult } from "./idle-sessions.ts";
import { freshStore } from "./service-process.ts";
import {
  MIXED_CALLERS,
  MIXED_END_USERS,
  measureTwoInstances,
  PACED_RATE,
  type TwoInstancesResult,
} from "./two-instances.ts";
import { codecRows, runTypedBench } from "./typed.ts";
import { runBatchBench } from "./batch.ts";
import { hostileRows, measureHostile } from "./hostile.ts";
import { latencyRows } from "./latency.ts";
import { runMirrorBench } from "./mirror.ts";
import { measureStartup } from "./startup.ts";
import {
  IDLE_MEMORY_WAIT_MS,
  measureIdleMemory,
  type IdleMemory,
  type IdleMemoryResult,
} from "./idle-memory.ts";
import type { Arrival, ReceiverCommand, ReceiverReply } from "./webhook-receiver-worker.ts";

const WARM_UP_CALLS = 30;
const HANDOVER_SAMPLES = 300;
const THROUGHPUT_REQUESTS = 1500;
const THROUGHPUT_CONCURRENCY = 8;
const SEQUENTIAL_REQUESTS = 300;
const WEBHOOK_BURST_EVENTS = 5000;
const WEBHOOK_LATENCY_REQUESTS = 400;
const WEBHOOK_LATENCY_CONCURRENCY = 4;
// P4 ramps 5,000 sessions on each store: the whole run with DATABASE_URL needs more than 10 minutes.
/** The run's bound: 15 min per store (the PostgreSQL pass doubles it). */
const WATCHDOG_MS = (process.env.DATABASE_URL ? 2 : 1) * 900_000;
const PASSTHROUGH_BODY = "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>";

interface Row {
  figure: string;
  value: string;
  goal: string;
}

interface Percentiles {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

interface ThroughputResult {
  perSecond: number;
  latency: Percentiles;
  failures: number;
}

interface HandOverResult {
  fromCallStart: Percentiles;
  fromCommit: Percentiles;
  callTotal: Percentiles;
  failures: number;
}

interface WebhookResult {
  perSecond: number;
  burstDelivered: number;
  stateChangeToDelivery: Percentiles;
  latencyDelivered: number;
}

interface StoreRun {
  engine: string;
  handOver: HandOverResult;
  sequential: ThroughputResult;
  throughput: ThroughputResult;
  /** Typed retrieves, 8 in flight: queued ones share message sets (decision 0036). */
  typedThroughput: ThroughputResult;
  webhooks: WebhookResult;
  apiRate: ApiRate | null;
  /** The settled-Request cache's hits and misses during P3 (its warm-up included). */
  cacheCounts: { hits: number; misses: number };
  logLines: number;
}

function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => {
    if (sorted.length === 0) return Number.NaN;
    const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
    return sorted[index] ?? Number.NaN;
  };
  return { p50: at(0.5), p99: at(0.99), max: at(1), count: sorted.length };
}

const ms = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)} ms` : "n/a");
const now = (): number => performance.timeOrigin + performance.now();

/** The webhook receiver in a worker thread; see webhook-receiver-worker.ts. */
class ReceiverThread {
  private readonly worker: Worker;
  private pending: ((reply: ReceiverReply) => void) | null = null;

  constructor() {
    const entry = new URL("./webhook-receiver-worker.ts", import.meta.url).href;
    const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
    this.worker = new Worker(bootstrap, { eval: true });
    this.worker.on("message", (reply: ReceiverReply) => this.pending?.(reply));
    this.worker.on("error", (error) => {
      console.error("bench receiver failed:", error);
      process.exit(1);
    });
  }

  send<K extends ReceiverReply["cmd"]>(
    command: ReceiverCommand,
  ): Promise<Extract<ReceiverReply, { cmd: K }>> {
    return new Promise((resolve) => {
      this.pending = (reply) => resolve(reply as Extract<ReceiverReply, { cmd: K }>);
      this.worker.postMessage(command);
    });
  }

  /** Polls until `count` requests arrived (or `timeoutMs` passed); returns the arrivals. */
  async until(count: number, timeoutMs: number): Promise<Arrival[]> {
    const started = performance.now();
    for (;;) {
      const { arrivals } = await this.send<"arrivals">({ cmd: "arrivals" });
      if (arrivals.length >= count || performance.now() - started > timeoutMs) return arrivals;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async close(): Promise<void> {
    await this.send<"stopped">({ cmd: "stop" });
    await this.worker.terminate();
  }
}

async function createEndpoint(sys: System, body: Record<string, unknown>): Promise<string> {
  const res = await sys.call("POST", "/v1/webhook-endpoints", { body });
  if (res.status !== 201) throw new Error(`endpoint create: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/**
 * Webhook figures: a burst of events written in one transaction (deliveries per second from its
 * commit to the last arrival), then state change → delivery latency of request events while sync
 * round trips run.
 */
async function measureWebhooks(sys: System, endUser: EndUserThread): Promise<WebhookResult> {
  const receiver = new ReceiverThread();
  try {
    const { port } = await receiver.send<"started">({ cmd: "start" });
    const url = `http://127.0.0.1:${port}/hooks`;
    const burstEndpoint = await createEndpoint(sys, { url, eventTypes: ["connection.status_changed"] });
    const projectId = sys.project.project.id;
    const data = JSON.stringify({ id: "conn_bench", objectType: "integration_connection", status: "online" });
    await sys.deps.db.transaction().execute(async (trx) => {
      for (let i = 0; i < WEBHOOK_BURST_EVENTS; i++) {
        await insertEventIfSubscribed(trx, {
          id: newId("event"),
          projectId,
          isTest: false,
          type: "connection.status_changed",
          data,
          at: new Date(),
        });
      }
    });
    const committed = now();
    await sys.deps.store.notifier.notify(EVENTS_CHANNEL);
    const burst = await receiver.until(WEBHOOK_BURST_EVENTS, 60_000);
    const last = Math.max(...burst.map((a) => a.at));
    const perSecond = burst.length / ((last - committed) / 1000);
    await sys.call("DELETE", `/v1/webhook-endpoints/${burstEndpoint}`);

    await receiver.send<"reset">({ cmd: "reset" });
    await createEndpoint(sys, { url, eventTypes: ["request.succeeded"], includeSyncRequests: true });
    await measureThroughput(endUser, WEBHOOK_LATENCY_REQUESTS, WEBHOOK_LATENCY_CONCURRENCY);
    const events = await receiver.until(WEBHOOK_LATENCY_REQUESTS, 30_000);
    const latencies = events.flatMap((a) => (a.completedAt === null ? [] : [a.at - a.completedAt]));
    return {
      perSecond,
      burstDelivered: burst.length,
      stateChangeToDelivery: percentiles(latencies),
      latencyDelivered: events.length,
    };
  } finally {
    await receiver.close();
  }
}

/** Records when the service wakes a connection (right after committing a Request). */
function recordWakes(sys: System): number[] {
  const wakes: number[] = [];
  const notifier = sys.deps.store.notifier;
  const notify = notifier.notify.bind(notifier);
  notifier.notify = (channel: string, payload?: unknown): Promise<void> => {
    if (channel.startsWith("conn:")) wakes.push(now());
    return notify(channel, payload);
  };
  // On PostgreSQL the admission's statement carries the NOTIFY; this process is woken by wakeHere.
  const wakeHere = notifier.wakeHere.bind(notifier);
  notifier.wakeHere = (channel: string, payload?: unknown): void => {
    if (channel.startsWith("conn:")) wakes.push(now());
    wakeHere(channel, payload);
  };
  return wakes;
}

async function untilOnline(sys: System, endUserId: string): Promise<void> {
  const started = performance.now();
  for (;;) {
    const response = await sys.call("GET", `/v1/end-users/${endUserId}`);
    const body = (await response.json()) as { integrationConnections?: Array<{ status?: string }> };
    if (body.integrationConnections?.[0]?.status === "online") return;
    if (performance.now() - started > 15_000) throw new Error("the connection never came online");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function measureHandOver(endUser: EndUserThread, wakes: readonly number[]): Promise<HandOverResult> {
  const reply = await endUser.send<"handover">({
    cmd: "handover",
    warmUp: WARM_UP_CALLS,
    samples: HANDOVER_SAMPLES,
  });
  const fromCommit: number[] = [];
  for (const sample of reply.samples) {
    const wake = wakes.find((t) => t >= sample.start && t <= sample.arrival);
    if (wake !== undefined) fromCommit.push(sample.arrival - wake);
  }
  return {
    fromCallStart: percentiles(reply.samples.map((s) => s.arrival - s.start)),
    fromCommit: percentiles(fromCommit),
    callTotal: percentiles(reply.samples.map((s) => s.end - s.start)),
    failures: reply.failures,
  };
}

async function measureThroughput(
  endUser: EndUserThread,
  total: number,
  concurrency: number,
  kind: "passthrough" | "typed" = "passthrough",
): Promise<ThroughputResult> {
  const reply = await endUser.send<"throughput">({ cmd: "throughput", total, concurrency, kind });
  return { perSecond: reply.perSecond, latency: percentiles(reply.latencies), failures: reply.failures };
}

/** A sync passthrough call's Request ID (a settled Request for P3 to read). */
async function settledRequestId(sys: System, endUserId: string): Promise<string> {
  const res = await sys.call("POST", `/v1/end-users/${endUserId}/passthrough/ledger_desktop`, {
    body: PASSTHROUGH_BODY,
  });
  await res.text();
  const id = res.headers.get("svc-request-id");
  if (res.status !== 200 || !id) throw new Error(`passthrough call: ${res.status}`);
  return id;
}

/**
 * One full pass on a store as users run it: an on-disk PGlite in a fresh data directory (no
 * DATABASE_URL) or a fresh PostgreSQL database, info logging to a file.
 */
async function runOnStore(
  serverUrl: string | undefined,
  sections: ReadonlySet<string>,
  tracing?: Tracing,
): Promise<StoreRun> {
  const target = await freshStore(serverUrl);
  const store = await openStore({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  const logFile = join(target.dataDir, "service.log");
  // The service's own logger and destination (src/platform/logging.ts), writing to a file.
  const log = serviceLogger("info", logFile);
  const sys = await startSystem(null, {
    clock: systemClock,
    noOpPauseMs: 20,
    webhooks: true,
    store,
    logger: log.logger,
    ...(tracing ? { tracing } : {}),
    config: {
      CONNECTOR_HOLD_MS: "20000",
      LOG_LEVEL: "info",
      RATE_LIMIT_MAX: "1000000",
      WEBHOOK_ALLOW_LOOPBACK: "on",
    },
  });
  const wakes = recordWakes(sys);
  let endUser: EndUserThread | undefined;
  try {
    const setup = await setUpEndUser(sys, PASSTHROUGH_BODY);
    endUser = new EndUserThread(setup);
    await endUser.send<"started">({ cmd: "start" });
    await untilOnline(sys, setup.endUserId);
    const none: ThroughputResult = { perSecond: Number.NaN, latency: percentiles([]), failures: 0 };
    const p1 = sections.has("p1");
    // The traces section: P1's hand-over and sequential round trips only.
    const core = p1 || sections.has("p1-core");
    const handOver = core
      ? await measureHandOver(endUser, wakes)
      : {
          fromCallStart: percentiles([]),
          fromCommit: percentiles([]),
          callTotal: percentiles([]),
          failures: 0,
        };
    const sequential = core ? await measureThroughput(endUser, SEQUENTIAL_REQUESTS, 1) : none;
    const throughput = p1
      ? await measureThroughput(endUser, THROUGHPUT_REQUESTS, THROUGHPUT_CONCURRENCY)
      : none;
    const typedThroughput = p1
      ? await measureThroughput(endUser, THROUGHPUT_REQUESTS, THROUGHPUT_CONCURRENCY, "typed")
      : none;
    const webhooks = p1
      ? await measureWebhooks(sys, endUser)
      : {
          perSecond: Number.NaN,
          burstDelivered: 0,
          stateChangeToDelivery: percentiles([]),
          latencyDelivered: 0,
        };
    const cache = settledRequestsOf(sys.deps);
    const [hitsBefore, missesBefore] = [cache.hits, cache.misses];
    const apiRate = sections.has("p3")
      ? await measureApiRate(
          sys.url,
          sys.project.keys.secretLive,
          await settledRequestId(sys, setup.endUserId),
        )
      : null;
    const cacheCounts = { hits: cache.hits - hitsBefore, misses: cache.misses - missesBefore };
    log.flush();
    const logLines = readFileSync(logFile, "utf8").split("\n").length - 1;
    return {
      engine: sys.deps.store.engine,
      handOver,
      sequential,
      throughput,
      typedThroughput,
      webhooks,
      apiRate,
      cacheCounts,
      logLines,
    };
  } finally {
    await endUser?.close();
    await sys.close();
    await store.close();
    await target.drop();
  }
}

function p1Rows(run: StoreRun, label: string): Row[] {
  const h = run.handOver;
  const failures =
    h.failures + run.sequential.failures + run.throughput.failures + run.typedThroughput.failures;
  return [
    {
      figure: `[${label}] hand-over p50 / p99, from HTTP call start (n=${h.fromCallStart.count})`,
      value: `${ms(h.fromCallStart.p50)} / ${ms(h.fromCallStart.p99)}`,
      goal: "≤ 5 ms / ≤ 20 ms",
    },
    {
      figure: `[${label}] hand-over p50 / p99, from Request commit (wake-up)`,
      value: `${ms(h.fromCommit.p50)} / ${ms(h.fromCommit.p99)}`,
      goal: "(breakdown)",
    },
    {
      figure: `[${label}] sync call total p50 / p99 (held connector, 1 at a time)`,
      value: `${ms(h.callTotal.p50)} / ${ms(h.callTotal.p99)}`,
      goal: "-",
    },
    {
      figure: `[${label}] sync round trips/s, 1 in flight (n=${SEQUENTIAL_REQUESTS})`,
      value: `${run.sequential.perSecond.toFixed(0)}/s (p50 ${ms(run.sequential.latency.p50)})`,
      goal: "-",
    },
    {
      figure: `[${label}] sync round trips/s, ${THROUGHPUT_CONCURRENCY} in flight (n=${THROUGHPUT_REQUESTS}), passthrough: each its own message set`,
      value: `${run.throughput.perSecond.toFixed(0)}/s (p50 / p99 ${ms(run.throughput.latency.p50)} / ${ms(run.throughput.latency.p99)})`,
      goal: "-",
    },
    {
      figure: `[${label}] P2 sync round trips/s, ${THROUGHPUT_CONCURRENCY} in flight (n=${THROUGHPUT_REQUESTS}), typed retrieves: sharing message sets`,
      value: `${run.typedThroughput.perSecond.toFixed(0)}/s (p50 / p99 ${ms(run.typedThroughput.latency.p50)} / ${ms(run.typedThroughput.latency.p99)})`,
      goal: "≥ 300/s",
    },
    { figure: `[${label}] failed calls`, value: String(failures), goal: "0" },
    {
      figure: `[${label}] webhook deliveries/s to a local receiver (burst of ${WEBHOOK_BURST_EVENTS})`,
      value: `${run.webhooks.perSecond.toFixed(0)}/s (${run.webhooks.burstDelivered} delivered)`,
      goal: "≥ 1000/s",
    },
    {
      figure: `[${label}] state change → webhook delivery p50 / p99 (n=${run.webhooks.stateChangeToDelivery.count})`,
      value: `${ms(run.webhooks.stateChangeToDelivery.p50)} / ${ms(run.webhooks.stateChangeToDelivery.p99)}`,
      goal: "p99 ≤ 100 ms",
    },
  ];
}

const rps = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(0)}/s` : "n/a");
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

function p3Rows(rate: ApiRate, cache: StoreRun["cacheCounts"], label: string): Row[] {
  const { helloWorld, retrieve } = rate;
  const settings = `${LOAD_CONNECTIONS} connections, ${LOAD_SECONDS} s`;
  return [
    {
      figure: `[${label}] P3 GET /v1/requests/{id} ÷ Fastify hello-world (autocannon, ${settings})`,
      value: `${(retrieve.perSecond / helloWorld.perSecond).toFixed(2)} (${rps(retrieve.perSecond)} ÷ ${rps(helloWorld.perSecond)})`,
      goal: "≥ 0.4",
    },
    {
      figure: `[${label}] P3 settled-Request cache hits / misses (warm-up included)`,
      value: `${cache.hits} / ${cache.misses}`,
      goal: "-",
    },
    {
      figure: `[${label}] P3 GET /v1/requests/{id} latency p50 / p99; non-2xx + errors`,
      value: `${ms(retrieve.latencyP50)} / ${ms(retrieve.latencyP99)}; ${retrieve.non2xx + retrieve.errors}`,
      goal: "0 failed",
    },
  ];
}

function p4Rows(result: IdleResult): Row[] {
  const label = result.engine;
  const rows: Row[] = [
    {
      figure: `[${label}] P4 service RSS (V8 heap used, external) with no session (dist/main.js)`,
      value: `${mb(result.baselineRssBytes)} (${mb(result.baselineHeapUsedBytes)}, ${mb(result.baselineExternalBytes)})`,
      goal: "-",
    },
  ];
  for (const step of result.steps) {
    rows.push(
      {
        figure: `[${label}] P4 RSS (heap used, external) / idle CPU, ${step.sessions} idle sessions (${step.held} held)`,
        value: `${mb(step.rssBytes)} (${mb(step.heapUsedBytes)}, ${mb(step.externalBytes)}) / ${(step.idleCpu * 100).toFixed(0)}% of a core`,
        goal: step.sessions >= 5000 ? "≤ 600 MB / ≈ 0" : "≈ 0 CPU",
      },
      {
        figure: `[${label}] P4 hand-over p50 / p99 to one of ${step.sessions} idle sessions; failures`,
        value: `${ms(step.handOverP50)} / ${ms(step.handOverP99)}; ${step.failures}`,
        goal: "p99 ≤ 50 ms",
      },
    );
  }
  return rows;
}

function memoryRows(result: IdleMemoryResult): Row[] {
  const value = (m: IdleMemory): string =>
    `${mb(m.rssBytes)} (${mb(m.heapUsedBytes)}, ${mb(m.externalBytes)})`;
  const idle = `dist/main.js, ${IDLE_MEMORY_WAIT_MS / 1000} s idle`;
  return [
    {
      figure: `[${result.engine}] service RSS with no connector session (V8 heap used, external), restart (${idle})`,
      value: value(result.restart),
      goal: "≤ 150 MB",
    },
    {
      figure: `[${result.engine}] service RSS with no connector session (V8 heap used, external), first start of a new store`,
      value: value(result.firstStart),
      goal: "≤ 150 MB",
    },
  ];
}

const cpuMs = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)} ms` : "n/a");

function p5Rows(result: TwoInstancesResult): Row[] {
  const { one, two, alone, pair } = result;
  return [
    {
      figure: `[postgres] P5 two instances ÷ one, mixed API calls/s (${MIXED_CALLERS} callers, ${MIXED_END_USERS} connections)`,
      value: `${(two.perSecond / one.perSecond).toFixed(2)} (${rps(two.perSecond)} ÷ ${rps(one.perSecond)})`,
      goal: "≥ 1.7",
    },
    {
      figure: "[postgres] P5 service CPU per API call, each instance (one instance → two instances)",
      value: `${one.cpuMsPerCall.map(cpuMs).join(" / ")} → ${two.cpuMsPerCall.map(cpuMs).join(" / ")}`,
      goal: "two ≤ one",
    },
    {
      figure: `[postgres] P5 service CPU per API call at one load per instance (${PACED_RATE / 2} round trips/s + reads each): one alone → each of two`,
      value: `${alone.cpuMsPerCall.map(cpuMs).join(" / ")} → ${pair.cpuMsPerCall.map(cpuMs).join(" / ")} (${rps(alone.perSecond)} → ${rps(pair.perSecond / 2)} calls/s per instance; ${alone.failures + pair.failures} failed)`,
      goal: "two ≤ one",
    },
    {
      figure: "[postgres] P5 of which sync passthrough round trips/s (two / one); failed calls",
      value: `${rps(two.passthroughPerSecond)} / ${rps(one.passthroughPerSecond)}; ${two.failures + one.failures}`,
      goal: "0 failed",
    },
  ];
}

/** A figure that could not be measured: one row saying why (the table still prints). */
function failureRow(figure: string, error: unknown): Row {
  const reason = error instanceof Error ? error.message : String(error);
  return { figure, value: `failed: ${reason.slice(0, 120)}`, goal: "-" };
}

function printTable(rows: readonly Row[]): void {
  const headers: Row = { figure: "figure", value: "value", goal: "goal" };
  const widths = {
    figure: Math.max(...[headers, ...rows].map((r) => r.figure.length)),
    value: Math.max(...[headers, ...rows].map((r) => r.value.length)),
    goal: Math.max(...[headers, ...rows].map((r) => r.goal.length)),
  };
  const line = (r: Row): string =>
    `| ${r.figure.padEnd(widths.figure)} | ${r.value.padEnd(widths.value)} | ${r.goal.padEnd(widths.goal)} |`;
  const rule = `|${"-".repeat(widths.figure + 2)}|${"-".repeat(widths.value + 2)}|${"-".repeat(widths.goal + 2)}|`;
  console.log(line(headers));
  console.log(rule);
  for (const r of rows) console.log(line(r));
}

/** The typed figures of one store; a failed run is one row saying why (the table still prints). */
async function typedOrFailure(databaseUrl: string | undefined): Promise<Row[]> {
  try {
    return await runTypedBench(databaseUrl);
  } catch (error) {
    return [failureRow(`typed operations on ${databaseUrl ? "postgres" : "pglite"}`, error)];
  }
}

/** The batch figures of one store (a failed run is one row saying why). */
async function batchOrFailure(databaseUrl: string | undefined): Promise<Row[]> {
  try {
    return await runBatchBench(databaseUrl);
  } catch (error) {
    return [failureRow(`batch on ${databaseUrl ? "postgres" : "pglite"}`, error)];
  }
}

const ALL_SECTIONS = "p1,p3,p4,p5,typed,batch,startup,memory,hostile,latency,mirror,traces";

/** Takes every span and drops it: the cost of tracing on, without a collector's. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: ExportResultCode }) => void): void {
    this.spans += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

/**
 * Issue 28: P1 (hand-over, sequential sync round trips) and P3 with tracing off, then on (the SDK
 * started as `startTracing` starts it, a batch processor, spans dropped by the exporter), on one store.
 */
async function tracingCostRows(serverUrl: string | undefined): Promise<Row[]> {
  const sections = new Set(["p1-core", "p3"]);
  const off = await runOnStore(serverUrl, sections);
  const exporter = new DroppingExporter();
  const tracing = sdkTracing("ledger-bridge-bench", new BatchSpanProcessor(exporter));
  const on = await runOnStore(serverUrl, sections, tracing);
  await tracing.shutdown();
  const label = `${on.engine}] traces off → on`;
  const both = (value: (run: StoreRun) => string): string => `${value(off)} → ${value(on)}`;
  const rate = (run: StoreRun): number => run.apiRate?.retrieve.perSecond ?? Number.NaN;
  const p3p50 = (run: StoreRun): number => run.apiRate?.retrieve.latencyP50 ?? Number.NaN;
  const failed = (run: StoreRun): number =>
    run.handOver.failures +
    run.sequential.failures +
    (run.apiRate ? run.apiRate.retrieve.non2xx + run.apiRate.retrieve.errors : 0);
  return [
    {
      figure: `[${label}: P1 hand-over p50 / p99, from HTTP call start (n=${on.handOver.fromCallStart.count})`,
      value: both((r) => `${ms(r.handOver.fromCallStart.p50)} / ${ms(r.handOver.fromCallStart.p99)}`),
      goal: "off ≈ before",
    },
    {
      figure: `[${label}: P1 sync call total p50 / p99 (held connector, 1 at a time)`,
      value: both((r) => `${ms(r.handOver.callTotal.p50)} / ${ms(r.handOver.callTotal.p99)}`),
      goal: "-",
    },
    {
      figure: `[${label}: P1 sync round trips/s, 1 in flight (n=${SEQUENTIAL_REQUESTS})`,
      value: both((r) => `${rps(r.sequential.perSecond)} (p50 ${ms(r.sequential.latency.p50)})`),
      goal: "-",
    },
    {
      figure: `[${label}: P3 GET /v1/requests/{id} requests/s (p50)`,
      value: both((r) => `${rps(rate(r))} (${ms(p3p50(r))})`),
      goal: "-",
    },
    {
      figure: `[${label}: spans exported while on; failed calls`,
      value: `${exporter.spans}; ${failed(off)} → ${failed(on)}`,
      goal: "0 failed",
    },
  ];
}

function footer(started: number, sections: ReadonlySet<string>, logLines: number[]): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  return (
    `\nmachine: ${availableParallelism()} cores (${cpu.trim()}), node ${process.version}, ${process.platform}/${process.arch}; ` +
    `load average at the end ${load} (1/5/15 min; figures are noisy when it exceeds the core count).\n` +
    `store: on disk as \`npm start\` runs it (PGlite in a fresh data directory, or a fresh PostgreSQL database); ` +
    `logging at info level to a file${logLines.length > 0 ? ` (P1–P3: ${logLines.join(" + ")} lines written)` : ""}, ` +
    `as production writes it; rate limit lifted; ` +
    `typed figures run on an in-memory PGlite (or a fresh PostgreSQL database) with silent logging, the end user and its caller on a worker thread.\n` +
    `hand-over = HTTP call start (or Request commit) → document at the application; for P1–P3 the service runs ` +
    `on the main thread, the callers and the simulated end user (connector + company file) on worker threads; ` +
    `for P4–P5 the service is dist/main.js (compiled) in its own process (P4: ${IDLE_STEPS.join(" then ")} sessions, real NoOp pause 5 s, hold ${(Number(process.env.BENCH_HOLD_MS ?? loadConfig({}).CONNECTOR_HOLD_MS) / 1000).toFixed(0)} s), ` +
    `the connectors and callers in another process. ` +
    `Figures run: ${[...sections].join(", ")}; one run, ${((performance.now() - started) / 1000).toFixed(1)} s, all on 127.0.0.1.`
  );
}

async function main(): Promise<void> {
  const sections = new Set((process.env.BENCH_ONLY ?? ALL_SECTIONS).split(",").map((x) => x.trim()));
  const started = performance.now();
  const rows: Row[] = [];
  const logLines: number[] = [];
  const watchdog = setTimeout(() => {
    console.error(`bench: gave up after ${WATCHDOG_MS / 1000} s; what was measured so far:`);
    printTable(rows);
    console.log(footer(started, sections, logLines));
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  const databaseUrl = process.env.DATABASE_URL;
  const stores: Array<string | undefined> = databaseUrl ? [undefined, databaseUrl] : [undefined];
  if (sections.has("p1") || sections.has("p3")) {
    for (const store of stores) {
      const run = await runOnStore(store, sections);
      logLines.push(run.logLines);
      if (sections.has("p1")) rows.push(...p1Rows(run, run.engine));
      if (run.apiRate) rows.push(...p3Rows(run.apiRate, run.cacheCounts, run.engine));
    }
  }
  if (sections.has("memory")) {
    // The service's weight with no connector session, on each store (issue 17).
    for (const store of stores) {
      try {
        rows.push(...memoryRows(await measureIdleMemory(store)));
      } catch (error) {
        rows.push(
          failureRow(`[${store ? "postgres" : "pglite"}] service RSS with no connector session`, error),
        );
      }
    }
  }
  if (sections.has("p4")) {
    for (const store of stores) {
      try {
        rows.push(...p4Rows(await measureIdleSessions(store)));
      } catch (error) {
        rows.push(failureRow(`[${store ? "postgres" : "pglite"}] P4 idle sessions`, error));
      }
    }
  }
  if (sections.has("p5")) {
    if (databaseUrl) {
      try {
        rows.push(...p5Rows(await measureTwoInstances(databaseUrl)));
      } catch (error) {
        rows.push(failureRow("[postgres] P5 two instances ÷ one", error));
      }
    }
  }
  if (!databaseUrl) {
    rows.push({ figure: "[postgres] same figures, and P5", value: "n/a (set DATABASE_URL)", goal: "-" });
  }
  if (sections.has("typed")) {
    // Typed operations (issue 7): the codec, a cursor walk and typed creates, on each store.
    rows.push(...codecRows(), ...(await typedOrFailure(undefined)));
    if (databaseUrl) rows.push(...(await typedOrFailure(databaseUrl)));
  }
  if (sections.has("batch")) {
    // Batch (issue 15): 25 writes in one message set against 25 single calls.
    rows.push(...(await batchOrFailure(undefined)));
    if (databaseUrl) rows.push(...(await batchOrFailure(databaseUrl)));
  }
  if (sections.has("startup")) {
    // Start-up time and idle memory of `npm start` (dist/), the image's `node dist/main.js` and tsx (issue 16).
    try {
      rows.push(...(await measureStartup()));
    } catch (error) {
      rows.push(failureRow("start-up and idle memory", error));
    }
  }
  if (sections.has("hostile")) {
    // Issue 23: junk bodies and failed logins against the connector endpoint, on each store.
    for (const store of stores) {
      try {
        rows.push(...hostileRows(await measureHostile(store)));
      } catch (error) {
        rows.push(failureRow(`[${store ? "postgres" : "pglite"}] hostile load`, error));
      }
    }
  }
  if (sections.has("latency")) {
    // Issue 24: 8 callers' reads through a realistically slow simulated end user, on each store.
    for (const store of stores) {
      try {
        rows.push(...(await latencyRows(store)));
      } catch (error) {
        rows.push(failureRow(`[${store ? "postgres" : "pglite"}] latency`, error));
      }
    }
  }
  if (sections.has("traces")) {
    // Issue 28: what traces cost on P1 and P3, off against on, on each store.
    for (const store of stores) {
      try {
        rows.push(...(await tracingCostRows(store)));
      } catch (error) {
        rows.push(failureRow(`[${store ? "postgres" : "pglite"}] traces off → on`, error));
      }
    }
  }
  if (sections.has("mirror")) {
    // Issue 26: the mirror's fill, mirrored pages, freshness lag and size, on each store.
    for (const store of stores) {
      try {
        rows.push(...(await runMirrorBench(store)));
      } catch (error) {
        rows.push(failureRow(`[${store ? "postgres" : "pglite"}] mirror`, error));
      }
    }
  }
  console.log("");
  printTable(rows);
  console.log(footer(started, sections, logLines));
  clearTimeout(watchdog);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error("bench failed:", err);
    process.exit(1);
  },
);
