/**
 * Typed operations' figures (issue 7 benchmarks), printed by `npm run bench`, never asserted:
 *  1. A cursor walk over 10,000 invoices in the simulated application, pages of 150: total time and
 *     the service's own time per page (page time minus the time the application spent on the page).
 *  2. JSON → XML and XML → JSON for 1,000 invoices with 5 lines each (`typed-codec.ts`).
 *  3. Sync create-invoice round trips per second through one connection (zero-latency application).
 * The service and the simulated end user run in this process on the real clock, on 127.0.0.1.
 */
import { performance } from "node:perf_hooks";
import { resourceByPath } from "../src/ledger/resources/definitions.ts";
import { systemClock } from "../src/platform/clock.ts";
import type { BeginSessionOptions, BeginSessionResult } from "../src/simulator/application.ts";
import { startSystem, type ConnectedEndUser, type System } from "../src/testing/system.ts";
import { TypedFactory } from "../src/testing/typed-factory.ts";
import { measureCodec } from "./typed-codec.ts";

const INVOICES = 10_000;
const PAGE = 150;
const SEED_BATCH = 200;
const CREATES = 300;

export interface TypedRow {
  figure: string;
  value: string;
  goal: string;
}

type Json = Record<string, unknown>;

/** Wraps the simulated application so the time it spends processing is known. */
function meterApplication(sys: System): { take(): number } {
  let spent = 0;
  const original = sys.ledger.beginSession.bind(sys.ledger);
  sys.ledger.beginSession = async (options: BeginSessionOptions): Promise<BeginSessionResult> => {
    const begun = await original(options);
    if (begun.ok) {
      const session = begun.session;
      const process = session.processRequest.bind(session);
      session.processRequest = async (xml: string) => {
        const started = performance.now();
        try {
          return await process(xml);
        } finally {
          spent += performance.now() - started;
        }
      };
    }
    return begun;
  };
  return {
    take() {
      const value = spent;
      spent = 0;
      return value;
    },
  };
}

async function waitOnline(sys: System, eu: ConnectedEndUser): Promise<void> {
  eu.connector.start();
  for (let i = 0; i < 500; i++) {
    const response = await sys.call("GET", "/v1/ledger-desktop/company", { endUserId: eu.endUserId });
    if (response.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the simulated end user did not come online");
}

/** Seeds invoices straight into the simulated company file (not measured). */
async function seedInvoices(
  sys: System,
  eu: ConnectedEndUser,
  customerId: string,
  itemId: string,
): Promise<void> {
  const begun = await sys.ledger.beginSession({
    companyFilePath: eu.companyFilePath,
    appName: "bench seed",
    ownerId: "{00000000-0000-0000-0000-000000000000}",
    fileId: "{00000000-0000-0000-0000-000000000001}",
    stampFileId: false,
  });
  if (!begun.ok) throw new Error(begun.message);
  for (let done = 0; done < INVOICES; done += SEED_BATCH) {
    const adds = Array.from({ length: Math.min(SEED_BATCH, INVOICES - done) }, (_, i) => {
      const lines = Array.from(
        { length: 5 },
        (_, l) =>
          `<InvoiceLineAdd><ItemRef><ListID>${itemId}</ListID></ItemRef><Desc>Line ${l + 1}</Desc><Quantity>${l + 1}</Quantity><Rate>12.50</Rate></InvoiceLineAdd>`,
      ).join("");
      return `<InvoiceAddRq><InvoiceAdd><CustomerRef><ListID>${customerId}</ListID></CustomerRef><TxnDate>2026-11-02</TxnDate><RefNumber>B${done + i}</RefNumber>${lines}</InvoiceAdd></InvoiceAddRq>`;
    });
    const result = await begun.session.processRequest(
      `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="16.0"?>\n<QBXML><QBXMLMsgsRq onError="stopOnError">${adds.join("")}</QBXMLMsgsRq></QBXML>`,
    );
    if (!result.ok) throw new Error(`seeding failed: ${result.message}`);
  }
  begun.session.end();
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

export async function runTypedBench(databaseUrl?: string): Promise<TypedRow[]> {
  const previous = process.env.DATABASE_URL;
  if (databaseUrl === undefined) delete process.env.DATABASE_URL;
  const sys = await startSystem(null, {
    clock: systemClock,
    config: { RATE_LIMIT_MAX: "100000000", CONNECTOR_HOLD_MS: "15000" },
  });
  if (previous !== undefined) process.env.DATABASE_URL = previous;
  const engine = sys.deps.store.engine;
  try {
    const meter = meterApplication(sys);
    const eu = await sys.connectEndUser({ companyName: "Bench Co" });
    await waitOnline(sys, eu);
    const call = async (method: "GET" | "POST" | "DELETE", path: string, body?: unknown) => {
      const response = await sys.call(method, path, {
        endUserId: eu.endUserId,
        ...(body === undefined ? {} : { body }),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const factory = new TypedFactory(call);
    const customers = resourceByPath("customers");
    const items = resourceByPath("service-items");
    if (!customers || !items) throw new Error("registry");
    const customer = await factory.create(customers);
    const item = await factory.create(items);
    await seedInvoices(sys, eu, String(customer.id), String(item.id));

    // 1. Cursor walk.
    const pageTimes: number[] = [];
    const serviceTimes: number[] = [];
    let records = 0;
    let path = `/v1/ledger-desktop/invoices?limit=${PAGE}&customerIds=${encodeURIComponent(String(customer.id))}`;
    const walkStarted = performance.now();
    for (;;) {
      meter.take();
      const started = performance.now();
      const page = await call("GET", path);
      const elapsed = performance.now() - started;
      if (page.status !== 200) throw new Error(`page failed: ${JSON.stringify(page.body).slice(0, 500)}`);
      pageTimes.push(elapsed);
      serviceTimes.push(elapsed - meter.take());
      records += (page.body.data as unknown[]).length;
      if (typeof page.body.nextCursor !== "string") break;
      path = `/v1/ledger-desktop/invoices?cursor=${page.body.nextCursor}`;
    }
    const walkMs = performance.now() - walkStarted;

    // 3. Sync create-invoice round trips.
    const body = {
      customerId: customer.id,
      transactionDate: "2026-11-02",
      lines: [{ itemId: item.id, quantity: 1, rate: "10.00" }],
    };
    for (let i = 0; i < 20; i++) await call("POST", "/v1/ledger-desktop/invoices", body);
    const createStarted = performance.now();
    for (let i = 0; i < CREATES; i++) {
      const created = await call("POST", "/v1/ledger-desktop/invoices", body);
      if (created.status !== 201)
        throw new Error(`create failed: ${JSON.stringify(created.body).slice(0, 300)}`);
    }
    const createsPerSecond = CREATES / ((performance.now() - createStarted) / 1000);

    return [
      {
        figure: `[${engine}] cursor walk, ${records} invoices in pages of ${PAGE}`,
        value: `${(walkMs / 1000).toFixed(2)} s, ${pageTimes.length} pages`,
        goal: "-",
      },
      {
        figure: `[${engine}] service time per page (p50 / p99), application excluded`,
        value: `${percentile(serviceTimes, 0.5).toFixed(2)} / ${percentile(serviceTimes, 0.99).toFixed(2)} ms`,
        goal: "≤ 5 ms",
      },
      {
        figure: `[${engine}] sync create-invoice round trips/s, one connection`,
        value: `${createsPerSecond.toFixed(0)}/s`,
        goal: "-",
      },
    ];
  } finally {
    await sys.close();
  }
}

export function codecRows(): TypedRow[] {
  const figures = measureCodec();
  return [
    {
      figure: "JSON → XML, 1,000 invoices × 5 lines (validate + write)",
      value: `${figures.encodeMs.toFixed(1)} ms`,
      goal: "≤ 50 ms",
    },
    {
      figure: "XML → JSON, 1,000 invoices × 5 lines (parse + read)",
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
