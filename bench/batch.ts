/**
 * Batch figures (issue 15, printed by `npm run bench`, never asserted): a 25-member write batch
 * against the same 25 creates sent singly (sync, one after another) through one connection, on the
 * real clock: wall time and connector round trips (request documents the simulated application
 * processed). The service and the simulated end user share this process, as the typed figures do.
 */
import { performance } from "node:perf_hooks";
import { systemClock } from "../src/platform/clock.ts";
import { watchApplication } from "../src/testing/application-watch.ts";
import { startSystem, type ConnectedEndUser, type System } from "../src/testing/system.ts";

const MEMBERS = 25;
const ROUNDS = 8;

export interface BatchRow {
  figure: string;
  value: string;
  goal: string;
}

function countDocuments(sys: System): { take(): number } {
  let documents = 0;
  watchApplication(sys, (xml) => {
    if (xml.includes("CustomerAddRq")) documents++;
  });
  return {
    take() {
      const value = documents;
      documents = 0;
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

export async function runBatchBench(databaseUrl?: string): Promise<BatchRow[]> {
  const previous = process.env.DATABASE_URL;
  if (databaseUrl === undefined) delete process.env.DATABASE_URL;
  const sys = await startSystem(null, {
    clock: systemClock,
    // Writes to one record are spaced a second apart; these creates touch no existing record.
    config: { RATE_LIMIT_MAX: "100000000", CONNECTOR_HOLD_MS: "15000" },
  });
  if (previous !== undefined) process.env.DATABASE_URL = previous;
  const store = sys.deps.store.engine;
  try {
    const documents = countDocuments(sys);
    const eu = await sys.connectEndUser({ companyName: "Batch Bench Co" });
    await waitOnline(sys, eu);
    let serial = 0;
    const create = () => ({ operationId: "ledger.customers.create", body: { name: `Bench ${++serial}` } });
    const batchTimes: number[] = [];
    const singleTimes: number[] = [];
    let batchTrips = 0;
    let singleTrips = 0;
    for (let round = 0; round < ROUNDS; round++) {
      documents.take();
      let started = performance.now();
      const response = await sys.call("POST", "/v1/ledger-desktop/batch", {
        endUserId: eu.endUserId,
        body: { requests: Array.from({ length: MEMBERS }, create) },
      });
      if (response.status !== 200)
        throw new Error(`batch answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
      batchTimes.push(performance.now() - started);
      batchTrips += documents.take();
      started = performance.now();
      for (let i = 0; i < MEMBERS; i++) {
        const single = await sys.call("POST", "/v1/ledger-desktop/customers", {
          endUserId: eu.endUserId,
          body: create().body,
        });
        if (single.status !== 201) throw new Error(`create answered ${single.status}`);
        await single.arrayBuffer();
      }
      singleTimes.push(performance.now() - started);
      singleTrips += documents.take();
    }
    const batchMs = median(batchTimes);
    const singleMs = median(singleTimes);
    return [
      {
        figure: `batch of ${MEMBERS} creates vs ${MEMBERS} single creates (${store}, median of ${ROUNDS})`,
        value: `${batchMs.toFixed(0)} ms vs ${singleMs.toFixed(0)} ms (${(singleMs / batchMs).toFixed(1)}× faster); round trips ${batchTrips / ROUNDS} vs ${singleTrips / ROUNDS}`,
        goal: "one round trip per batch",
      },
    ];
  } finally {
    await sys.close();
  }
}
