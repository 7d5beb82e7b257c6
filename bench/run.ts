/**
 * `npm run bench`: the benchmark suite (architecture §7). Prints one run's figures as a table and
 * exits 0; timings are reported, never asserted (the machines are shared and noisy).
 *
 * Figures:
 *  1. Hand-over latency with a connector in session (architecture §2): a sync passthrough read is
 *     issued while the connector's `sendRequestXML` is held; measured from the HTTP call start (and,
 *     separately, from the Request's commit, seen as the connection wake-up the API sends right after
 *     inserting the row) to the simulated application receiving the request document.
 *  2. Sync round trips per second through one connection (requests are FIFO per connection, one in
 *     flight at a time) with a zero-latency simulated application.
 *  3. The same on PostgreSQL, when DATABASE_URL is set.
 *
 * All traffic is on 127.0.0.1; the run is bounded by a watchdog.
 */
import { availableParallelism, cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { systemClock } from "../src/platform/clock.ts";
import type {
  ApplicationSession,
  BeginSessionOptions,
  BeginSessionResult,
  ProcessResult,
  SimulatedApplication,
} from "../src/simulator/application.ts";
import { SimulatedWebConnector } from "../src/simulator/web-connector.ts";
import { findConnectionById } from "../src/store/connections.ts";
import { loadSetup, qwcForSetup } from "../src/tenancy/auth-sessions.ts";
import { startSystem, type System } from "../src/testing/system.ts";

const WARM_UP_CALLS = 30;
const HANDOVER_SAMPLES = 300;
const THROUGHPUT_REQUESTS = 1000;
const THROUGHPUT_CONCURRENCY = 8;
const SEQUENTIAL_REQUESTS = 200;
const WATCHDOG_MS = 170_000;
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

interface StoreRun {
  engine: string;
  handOver: HandOverResult;
  sequential: ThroughputResult;
  throughput: ThroughputResult;
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
const delay = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/**
 * Watches the system from the outside: when a request document reaches the application, when the
 * connector's `sendRequestXML` is in flight, and when the service wakes the connection (commit).
 */
class Probe {
  /** Arrival times (performance.now) of request documents at the application, oldest first. */
  arrivals: number[] = [];
  /** Time of the first connection wake-up since {@link arm}. */
  firstWake: number | undefined;
  /** SOAP `sendRequestXML` calls currently in flight. */
  sendsInFlight = 0;
  /** Connection waits registered by the service since the last sendRequestXML started. */
  waitsSinceSend = 0;
  private armed = false;

  arm(): void {
    this.armed = true;
    this.firstWake = undefined;
    this.arrivals.length = 0;
  }

  disarm(): void {
    this.armed = false;
  }

  onWake(): void {
    if (this.armed && this.firstWake === undefined) this.firstWake = performance.now();
  }

  /** Resolves once the connector's sendRequestXML is held (in flight and waiting on a wake-up). */
  async untilHeld(timeoutMs = 5000): Promise<boolean> {
    const until = performance.now() + timeoutMs;
    while (performance.now() < until) {
      if (this.sendsInFlight > 0 && this.waitsSinceSend > 0) return true;
      await delay(1);
    }
    return false;
  }

  /** Wraps the simulated application so that every ProcessRequest records its arrival time. */
  wrap(inner: SimulatedApplication): SimulatedApplication {
    return {
      beginSession: async (options: BeginSessionOptions): Promise<BeginSessionResult> => {
        const begun = await inner.beginSession(options);
        if (!begun.ok) return begun;
        const session = begun.session;
        const wrapped: ApplicationSession = {
          companyFilePath: session.companyFilePath,
          country: session.country,
          xmlVersion: session.xmlVersion,
          hostCompanyPreferencesXml: () => session.hostCompanyPreferencesXml(),
          processRequest: (requestXml: string): Promise<ProcessResult> => {
            this.arrivals.push(performance.now());
            return session.processRequest(requestXml);
          },
          end: () => session.end(),
        };
        return { ok: true, session: wrapped };
      },
    };
  }

  /** A fetch for the connector that counts sendRequestXML calls in flight. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const action = new Headers(init?.headers).get("soapaction") ?? "";
    const isSend = action.includes("sendRequestXML");
    if (isSend) {
      this.sendsInFlight += 1;
      this.waitsSinceSend = 0;
    }
    try {
      const response = await fetch(input, init);
      // The body is read by the caller; count the call as finished once headers arrive.
      return response;
    } finally {
      if (isSend) this.sendsInFlight -= 1;
    }
  };
}

interface BenchEndUser {
  endUserId: string;
  connector: SimulatedWebConnector;
}

/**
 * Same steps as `System.connectEndUser` (src/testing/system.ts), but with the probed application
 * and fetch: end user, auth session, `.qwc` + password from the setup, company file, connector.
 */
async function connectProbedEndUser(sys: System, probe: Probe): Promise<BenchEndUser> {
  const companyName = "Bench Books";
  const created = await sys.call("POST", "/v1/end-users", {
    body: { companyName, sourceId: "bench-1" },
  });
  const endUser = (await created.json()) as { id: string };
  const sessionResponse = await sys.call("POST", "/v1/auth-sessions", {
    body: { publishableKey: sys.project.keys.publishableLive, endUserId: endUser.id },
  });
  const session = (await sessionResponse.json()) as { id: string; clientSecret: string };
  const setup = await loadSetup(sys.deps, session.id, session.clientSecret);
  if (setup.state !== "waiting") throw new Error(`setup state ${setup.state}`);
  const connection = await findConnectionById(sys.deps.db, setup.connection.id);
  if (!connection) throw new Error("no connection");
  const companyFilePath = `C:\\Company Files\\${companyName}.qbw`;
  sys.ledger.createCompanyFile(companyFilePath, { companyName, seed: "sample" });
  sys.ledger.openCompanyFile(companyFilePath);
  const connector = new SimulatedWebConnector({
    qwc: qwcForSetup(sys.deps, connection, companyName),
    password: setup.password,
    application: probe.wrap(sys.ledger),
    noOpPauseMs: 20,
    fetch: probe.fetch,
  });
  return { endUserId: endUser.id, connector };
}

/** Watches the service's notifier: connection wake-ups (commit) and connection waits (hold). */
function instrumentNotifier(sys: System, probe: Probe): void {
  const notifier = sys.deps.store.notifier;
  const notify = notifier.notify.bind(notifier);
  const wait = notifier.wait.bind(notifier);
  notifier.notify = (channel: string): Promise<void> => {
    if (channel.startsWith("conn:")) probe.onWake();
    return notify(channel);
  };
  notifier.wait = (channel: string, signal: AbortSignal): Promise<void> => {
    if (channel.startsWith("conn:")) probe.waitsSinceSend += 1;
    return wait(channel, signal);
  };
}

async function untilOnline(sys: System, endUserId: string): Promise<void> {
  const started = performance.now();
  for (;;) {
    const response = await sys.call("GET", `/v1/end-users/${endUserId}`);
    const body = (await response.json()) as { integrationConnections?: Array<{ status?: string }> };
    if (body.integrationConnections?.[0]?.status === "online") return;
    if (performance.now() - started > 15_000) throw new Error("the connection never came online");
    await delay(20);
  }
}

async function passthrough(sys: System, endUserId: string): Promise<boolean> {
  const response = await sys.call("POST", `/v1/end-users/${endUserId}/passthrough/ledger_desktop`, {
    body: PASSTHROUGH_BODY,
    headers: { "content-type": "application/xml" },
  });
  const text = await response.text();
  return response.status === 200 && text.includes("CustomerQueryRs");
}

async function measureHandOver(sys: System, probe: Probe, endUserId: string): Promise<HandOverResult> {
  const fromCallStart: number[] = [];
  const fromCommit: number[] = [];
  const callTotal: number[] = [];
  let failures = 0;
  for (let i = 0; i < WARM_UP_CALLS + HANDOVER_SAMPLES; i += 1) {
    // One request at a time, each handed to a connector whose sendRequestXML is already held.
    if (!(await probe.untilHeld())) {
      failures += 1;
      continue;
    }
    await delay(1);
    probe.arm();
    const start = performance.now();
    const ok = await passthrough(sys, endUserId);
    const end = performance.now();
    probe.disarm();
    const arrival = probe.arrivals[0];
    if (!ok || arrival === undefined) {
      failures += 1;
      continue;
    }
    if (i < WARM_UP_CALLS) continue;
    fromCallStart.push(arrival - start);
    if (probe.firstWake !== undefined) fromCommit.push(arrival - probe.firstWake);
    callTotal.push(end - start);
  }
  return {
    fromCallStart: percentiles(fromCallStart),
    fromCommit: percentiles(fromCommit),
    callTotal: percentiles(callTotal),
    failures,
  };
}

async function measureThroughput(
  sys: System,
  endUserId: string,
  total: number,
  concurrency: number,
): Promise<ThroughputResult> {
  const latencies: number[] = [];
  let failures = 0;
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (issued < total) {
      issued += 1;
      const start = performance.now();
      const ok = await passthrough(sys, endUserId).catch(() => false);
      latencies.push(performance.now() - start);
      if (!ok) failures += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  const elapsedS = (performance.now() - started) / 1000;
  return { perSecond: total / elapsedS, latency: percentiles(latencies), failures };
}

/** One full pass on a store: the embedded PGlite (no DATABASE_URL) or PostgreSQL. */
async function runOnStore(databaseUrl: string | undefined): Promise<StoreRun> {
  const saved = process.env.DATABASE_URL;
  if (databaseUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = databaseUrl;
  let sys: System;
  try {
    sys = await startSystem(null, {
      clock: systemClock,
      noOpPauseMs: 20,
      config: { CONNECTOR_HOLD_MS: "20000", LOG_LEVEL: "silent", RATE_LIMIT_MAX: "1000000" },
    });
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
  const probe = new Probe();
  instrumentNotifier(sys, probe);
  let connector: SimulatedWebConnector | undefined;
  try {
    const endUser = await connectProbedEndUser(sys, probe);
    connector = endUser.connector;
    connector.start();
    await untilOnline(sys, endUser.endUserId);
    const handOver = await measureHandOver(sys, probe, endUser.endUserId);
    const sequential = await measureThroughput(sys, endUser.endUserId, SEQUENTIAL_REQUESTS, 1);
    const throughput = await measureThroughput(
      sys,
      endUser.endUserId,
      THROUGHPUT_REQUESTS,
      THROUGHPUT_CONCURRENCY,
    );
    return { engine: sys.deps.store.engine, handOver, sequential, throughput };
  } finally {
    await connector?.stop();
    await sys.close();
  }
}

function rowsFor(run: StoreRun, label: string): Row[] {
  const h = run.handOver;
  const failures = h.failures + run.sequential.failures + run.throughput.failures;
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
      figure: `[${label}] sync round trips/s, ${THROUGHPUT_CONCURRENCY} in flight (n=${THROUGHPUT_REQUESTS})`,
      value: `${run.throughput.perSecond.toFixed(0)}/s`,
      goal: "≥ 300/s",
    },
    {
      figure: `[${label}] latency p50 / p99 at ${THROUGHPUT_CONCURRENCY} in flight`,
      value: `${ms(run.throughput.latency.p50)} / ${ms(run.throughput.latency.p99)}`,
      goal: "-",
    },
    { figure: `[${label}] failed calls`, value: String(failures), goal: "0" },
  ];
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

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`bench: gave up after ${WATCHDOG_MS / 1000} s`);
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  const started = performance.now();
  const rows: Row[] = [];
  const embedded = await runOnStore(undefined);
  rows.push(...rowsFor(embedded, embedded.engine));
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const server = await runOnStore(databaseUrl);
    rows.push(...rowsFor(server, server.engine));
  } else {
    rows.push({
      figure: "[postgres] same figures with DATABASE_URL",
      value: "n/a (set DATABASE_URL)",
      goal: "-",
    });
  }
  console.log("");
  printTable(rows);
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  console.log(
    `\nmachine: ${availableParallelism()} cores (${cpu.trim()}), node ${process.version}, ${process.platform}/${process.arch}; ` +
      `hand-over = HTTP call start (or Request commit) → document at the application; ` +
      `one run, ${((performance.now() - started) / 1000).toFixed(1)} s, all on 127.0.0.1.`,
  );
  clearTimeout(watchdog);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error("bench failed:", err);
    process.exit(1);
  },
);
