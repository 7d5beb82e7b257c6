/**
 * Typed operations' figures (issues 7 and 14), printed by `npm run bench`, never asserted:
 *  1. A cursor walk over 10,000 invoices in the simulated application, pages of 150: total time,
 *     and per page the service's main-thread busy time (`performance.eventLoopUtilization()` deltas:
 *     the time the event loop was not idle while the page was served, which counts the store's work
 *     on PGlite, whose engine runs on that thread); also the page time minus the application's time,
 *     the figure printed before issue 14.
 *  2. JSON → XML and XML → JSON for 1,000 invoices with 5 lines each (`typed-codec.ts`).
 *  3. Sync create-invoice round trips per second through one connection (zero-latency application),
 *     beside sync passthrough round trips through the same connection.
 * The service runs on this thread; the simulated end user (Web Connector, company file) and the
 * caller run on a worker thread (bench/end-user-worker.ts), so their SOAP, XML and JSON work is not
 * counted as the service's. All on the real clock, on 127.0.0.1.
 */
import { performance } from "node:perf_hooks";
import { resourceByPath } from "../src/ledger/resources/definitions.ts";
import { systemClock } from "../src/platform/clock.ts";
import type { Store } from "../src/store/database.ts";
import { startSystem, type System } from "../src/testing/system.ts";
import { TypedFactory } from "../src/testing/typed-factory.ts";
import { EndUserThread, setUpEndUser } from "./end-user-thread.ts";
import { codecInChildProcess } from "./typed-codec.ts";

/** Invoices in the walked list. */
export const INVOICES = 10_000;
/** Page size of the walk (the cursor list's largest). */
export const PAGE = 150;
const SEED_BATCH = 200;
const CREATES = 300;
const WARM_UP_CALLS = 20;
const PASSTHROUGH_BODY = "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>";

export interface TypedRow {
  figure: string;
  value: string;
  goal: string;
}

type Json = Record<string, unknown>;

export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

const pair = (values: number[]): string =>
  `${percentile(values, 0.5).toFixed(2)} / ${percentile(values, 0.99).toFixed(2)} ms`;

/** The service with a simulated end user on a worker thread and a seeded company file. */
export interface WalkSystem {
  sys: System;
  engine: "pglite" | "postgres";
  worker: EndUserThread;
  call: (
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<CallReply>;
  endUserId: string;
  customerId: string;
  itemId: string;
  close(): Promise<void>;
}

export interface CallReply {
  status: number;
  body: Json;
  reply: { elapsedMs: number; applicationMs: number; headers: Record<string, string> };
}

/**
 * Starts the service on this thread (PGlite in memory, PostgreSQL with `databaseUrl`, or `store`
 * when given) and the end user on a worker, and seeds `invoices` invoices of one customer.
 */
export async function startWalkSystem(options: {
  databaseUrl?: string | undefined;
  store?: Store;
  invoices: number;
  /** Settings beside the bench's own (profiling: what a setting changes). */
  config?: Record<string, string>;
  /** Runs the mirror engine (bench/mirror.ts). */
  mirror?: boolean;
  /** How long ago the seeded invoices were written in the company file (default: now). */
  seedAgeMs?: number;
}): Promise<WalkSystem> {
  const previous = process.env.DATABASE_URL;
  if (options.databaseUrl === undefined) delete process.env.DATABASE_URL;
  const sys = await startSystem(null, {
    clock: systemClock,
    noOpPauseMs: 20,
    config: { RATE_LIMIT_MAX: "100000000", CONNECTOR_HOLD_MS: "15000", ...options.config },
    ...(options.mirror ? { mirror: true } : {}),
    ...(options.store ? { store: options.store } : {}),
  }).finally(() => {
    if (previous !== undefined) process.env.DATABASE_URL = previous;
  });
  let endUser: EndUserThread | undefined;
  try {
    const setup = await setUpEndUser(sys, PASSTHROUGH_BODY, "Bench Co");
    endUser = new EndUserThread(setup);
    const worker = endUser;
    await worker.send<"started">({ cmd: "start" });
    const call = async (
      method: "GET" | "POST" | "PUT" | "DELETE",
      path: string,
      body?: unknown,
      headers?: Record<string, string>,
    ) => {
      const reply = await worker.send<"call">({
        cmd: "call",
        method,
        path,
        body,
        ...(headers ? { headers } : {}),
      });
      return { status: reply.status, body: reply.body as Json, reply };
    };
    for (let i = 0; ; i++) {
      if ((await call("GET", "/v1/ledger-desktop/company")).status === 200) break;
      if (i > 500) throw new Error("the simulated end user did not come online");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const factory = new TypedFactory(call);
    const customers = resourceByPath("customers");
    const items = resourceByPath("service-items");
    if (!customers || !items) throw new Error("registry");
    const customer = await factory.create(customers);
    const item = await factory.create(items);
    await worker.send<"seeded">({
      cmd: "seedInvoices",
      customerId: String(customer.id),
      itemId: String(item.id),
      count: options.invoices,
      batch: SEED_BATCH,
      ...(options.seedAgeMs ? { ageMs: options.seedAgeMs } : {}),
    });
    return {
      sys,
      engine: sys.deps.store.engine,
      worker,
      call,
      endUserId: setup.endUserId,
      customerId: String(customer.id),
      itemId: String(item.id),
      close: async () => {
        await worker.close();
        await sys.close();
      },
    };
  } catch (error) {
    await endUser?.close();
    await sys.close();
    throw error;
  }
}

/** One page of a walk, as this thread saw it. */
export interface WalkPage {
  /** This thread's busy time while the page was served (event loop utilisation), ms. */
  busyMs: number;
  /** The page's time minus the application's, ms (the figure printed before issue 14). */
  serviceMs: number;
  records: number;
}

/**
 * The cursor walk: the caller (on the worker) asks for each page of the customer's invoices in
 * pages of {@link PAGE}; this thread measures itself per page.
 */
export async function walkInvoices(
  system: WalkSystem,
  beforePage: () => void = () => undefined,
): Promise<{ pages: WalkPage[]; records: number; walkMs: number }> {
  const pages: WalkPage[] = [];
  let records = 0;
  let path = `/v1/ledger-desktop/invoices?limit=${PAGE}&customerIds=${encodeURIComponent(system.customerId)}`;
  const walkStarted = performance.now();
  for (;;) {
    beforePage();
    const before = performance.eventLoopUtilization();
    const page = await system.call("GET", path);
    const used = performance.eventLoopUtilization(before);
    if (page.status !== 200) throw new Error(`page failed: ${JSON.stringify(page.body).slice(0, 500)}`);
    const count = (page.body.data as unknown[]).length;
    pages.push({
      busyMs: used.active,
      serviceMs: page.reply.elapsedMs - page.reply.applicationMs,
      records: count,
    });
    records += count;
    if (typeof page.body.nextCursor !== "string") break;
    path = `/v1/ledger-desktop/invoices?cursor=${page.body.nextCursor}`;
  }
  return { pages, records, walkMs: performance.now() - walkStarted };
}

export async function runTypedBench(databaseUrl?: string): Promise<TypedRow[]> {
  const system = await startWalkSystem({ databaseUrl, invoices: INVOICES });
  const { worker, customerId, itemId, engine } = system;
  try {
    // 1. Cursor walk: the caller (on the worker) asks for each page; this thread measures itself.
    const walk = await walkInvoices(system);
    const busy = walk.pages.map((page) => page.busyMs);
    const serviceTimes = walk.pages.map((page) => page.serviceMs);

    // 3. Sync create-invoice round trips, and passthrough round trips, one at a time.
    const body = {
      customerId,
      transactionDate: "2026-11-02",
      lines: [{ itemId, quantity: 1, rate: "10.00" }],
    };
    const invoicesPath = "/v1/ledger-desktop/invoices";
    await worker.send<"repeat">({
      cmd: "repeat",
      method: "POST",
      path: invoicesPath,
      body,
      total: WARM_UP_CALLS,
    });
    const creates = await worker.send<"repeat">({
      cmd: "repeat",
      method: "POST",
      path: invoicesPath,
      body,
      total: CREATES,
    });
    if (creates.failures > 0) throw new Error(`create failed: ${creates.firstFailure}`);
    await worker.send<"throughput">({ cmd: "throughput", total: WARM_UP_CALLS, concurrency: 1 });
    const passthrough = await worker.send<"throughput">({
      cmd: "throughput",
      total: CREATES,
      concurrency: 1,
    });

    return [
      {
        figure: `[${engine}] cursor walk, ${walk.records} invoices in pages of ${PAGE}`,
        value: `${(walk.walkMs / 1000).toFixed(2)} s, ${walk.pages.length} pages`,
        goal: "-",
      },
      {
        figure: `[${engine}] service main-thread busy time per page (p50 / p99), end user on a worker`,
        value: pair(busy),
        goal: engine === "pglite" ? "≤ 10 / ≤ 30 ms" : "≤ 5 / ≤ 15 ms",
      },
      {
        figure: `[${engine}] page time minus application time (p50 / p99), as printed before`,
        value: pair(serviceTimes),
        goal: "-",
      },
      {
        figure: `[${engine}] sync create-invoice round trips/s, one connection (passthrough beside it)`,
        value: `${creates.perSecond.toFixed(0)}/s (passthrough ${passthrough.perSecond.toFixed(0)}/s, ${((creates.perSecond / passthrough.perSecond) * 100).toFixed(0)} %)`,
        goal: "within 20 % of passthrough",
      },
    ];
  } finally {
    await system.close();
  }
}

export function codecRows(): TypedRow[] {
  const figures = codecInChildProcess();
  return [
    {
      figure: "JSON → XML, 1,000 invoices × 5 lines (validate + write; own process, warm, median of 9)",
      value: `${figures.encodeMs.toFixed(1)} ms`,
      goal: "≤ 50 ms",
    },
    {
      figure: "XML → JSON, 1,000 invoices × 5 lines (parse + read; own process, warm, median of 9)",
      value: `${figures.decodeMs.toFixed(1)} ms`,
      goal: "≤ 50 ms",
    },
  ];
}

if (process.argv[1]?.endsWith("typed.ts")) {
  const rows = [...codecRows(), ...(await runTypedBench())];
  if (process.env.DATABASE_URL) rows.push(...(await runTypedBench(process.env.DATABASE_URL)));
  for (const row of rows) console.log(`${row.figure}: ${row.value} (goal ${row.goal})`);
  process.exit(0);
}
