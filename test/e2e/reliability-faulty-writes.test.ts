import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { SimulatedLedgerApplication } from "../../src/simulator/ledger/index.ts";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { customerAdd, eventually } from "./helpers.ts";
import {
  createProjectByCli,
  setUpEndUser,
  startService,
  workspace,
  type ProjectKeys,
  type ServiceProcess,
  type Workspace,
} from "./processes.ts";
import { SOAK, plan, reportCounts, soakSeed, soakSize } from "./soak.ts";

/**
 * R1 (issue 8 §5): writes through the simulated connector while faults are injected at random (a
 * seeded plan): the answer lost after the application applied the write, the connector crashing
 * before handing a write over, the connector dropped mid-call, the service process SIGKILLed and
 * restarted on its store, and clients retrying with the same Idempotency-Key (after aborting their
 * own call, after a network error, or sending the same write twice at once). Clients follow the
 * spec's retry rules. Every write must end applied exactly once or `not_applied`, as counted in the
 * simulated company file and by the application's own receipts: 0 duplicates, 0 lost. Three writes
 * in five are typed creates, which the service coalesces into shared message sets (decision 0036:
 * `messageSetsByWrites` counts the sets by how many of this run's writes they carried); one in five
 * is an upsert by full name (decision 0046: a find, then an add, as one Request of two message sets
 * that goes alone); the rest are dependent batches (a customer and a job under it named by `$ref`,
 * decision 0050) and passthroughs, which go alone.
 *
 * The service runs as a real child process (`npm start`'s entry point) on the suite's store (an
 * on-disk PGlite data directory, or a database on the PostgreSQL server of DATABASE_URL); the
 * connector and the company file live in this process. `npm test` runs 30 writes and one kill,
 * `npm run soak` 1,000 writes and four kills (or SOAK_WRITES / SOAK_KILLS).
 */
const WRITES = soakSize("SOAK_WRITES", 30, 1000);
const KILLS = soakSize("SOAK_KILLS", 1, 4);
/** Clients writing at once. */
const CLIENTS = 6;
/** Real-time bound for one write to reach its end (faults and restarts included). */
const WRITE_BOUND_MS = 240_000;

const ENV = {
  SIMULATOR: "off",
  // A crashed instance's sessions are recovered by the restarted one within two seconds.
  INSTANCE_LEASE_MS: "2000",
  CONNECTOR_HOLD_MS: "1000",
  RATE_LIMIT_MAX: "1000000",
};

type ConnectorPlan = "none" | "lose_answer" | "crash_before_write" | "drop";
type ClientPlan = "none" | "abort" | "twice";
/**
 * A typed create (shares message sets with its neighbours: coalescing, decision 0036), an upsert by
 * full name (two message sets in one Request, decision 0046) or a passthrough (alone).
 */
type Route = "typed" | "upsert" | "batch" | "passthrough";

interface Write {
  index: number;
  name: string;
  key: string;
  async: boolean;
  route: Route;
  connector: ConnectorPlan;
  client: ClientPlan;
  /** The Requests the client was given for this key, in order. */
  requestIds: string[];
  sends: number;
  /** Retries after a Request ended retryable and not applied. */
  retriedEnds: number;
  final?: { requestId: string; status: string; outcome: string; recovered: boolean; code: string | null };
}

interface RequestView {
  id: string;
  status: string;
  outcome: string;
  recovered: boolean;
  error: { code: string; retryable: boolean } | null;
}

const TERMINAL = new Set(["succeeded", "failed", "canceled"]);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The service as a child process that can be killed and started again on the same store and port. */
class Service {
  current: ServiceProcess | null = null;
  kills = 0;
  /** Real time from each SIGKILL to the restarted service answering, in ms. */
  readonly downMs: number[] = [];
  constructor(
    private readonly t: Parameters<typeof workspace>[0],
    readonly ws: Workspace,
  ) {}
  async start(): Promise<void> {
    this.current = await startService(this.t, this.ws, ENV);
  }
  /** SIGKILL, then a start on the same data; callers meanwhile see refused connections. */
  async killAndRestart(): Promise<void> {
    const child = this.current?.child;
    assert.ok(child);
    const killedAt = Date.now();
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    this.kills += 1;
    await this.start();
    this.downMs.push(Date.now() - killedAt);
  }
}

test(
  `R1: ${WRITES} writes under injected faults, ${KILLS} service kill(s): each applied once or not_applied`,
  {
    timeout: SOAK ? 3_000_000 : 175_000,
  },
  async (t) => {
    const seed = soakSeed(t, "R1");
    const startedAt = Date.now();
    const ws = await workspace(t, ENV);
    const service = new Service(t, ws);
    await service.start();
    const keys: ProjectKeys = await createProjectByCli(ws, "Reliability R1");
    const setup = await setUpEndUser(ws, keys, "Faulty Writes Co");

    const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0" });
    const path = "C:\\Company Files\\Faulty Writes Co.qbw";
    ledger.createCompanyFile(path, { companyName: "Faulty Writes Co", seed: "empty" });
    ledger.openCompanyFile(path);
    const file = ledger.companyFile(path);
    // Each write takes a little time in the application, so drops and kills can land mid-write.
    ledger.setFault({ kind: "slow_processing", ms: 10 });

    // The application's receipts: how often each write document reached it, and how it answered.
    const receipts = new Map<string, number>();
    let answersDropped = 0;
    // Message sets the application ran, by how many of this run's writes they carried.
    const setSizes = new Map<number, number>();
    const connector = new SimulatedWebConnector({
      qwc: setup.qwc,
      password: setup.password,
      application: ledger,
      noOpPauseMs: 20,
      requestTimeoutMs: 30_000,
      onEvent: (event) => {
        if (event.type === "request_processed") {
          // A message set carries up to CONNECTOR_MESSAGE_SET_MAX_REQUESTS writes (coalescing on).
          const names = [...event.requestXml.matchAll(/<Name>(R1-[^<]+)<\/Name>/g)].map((m) => m[1] ?? "");
          for (const name of names) receipts.set(name, (receipts.get(name) ?? 0) + 1);
          if (names.length > 0) setSizes.set(names.length, (setSizes.get(names.length) ?? 0) + 1);
        }
        if (event.type === "answer_dropped") answersDropped += 1;
      },
    });

    // The end user's connector checks in again whenever a session ends (a dropped connector stays
    // away for a moment first); a refused connection while the service restarts ends a session too.
    let finished = false;
    let dropped = false;
    let connectorDrops = 0;
    const driving = (async () => {
      while (!finished) {
        if (!dropped) await connector.runSession();
        await sleep(dropped ? 20 : 50);
      }
    })();
    t.after(async () => {
      finished = true;
      await connector.stop();
      await driving;
    });
    const drop = async (afterMs: number, awayMs: number): Promise<void> => {
      await sleep(afterMs);
      if (dropped) return;
      dropped = true;
      connectorDrops += 1;
      await connector.stop();
      await sleep(awayMs);
      dropped = false;
    };

    const base = ws.url;
    const headers = { authorization: `Bearer ${keys.secretLive}` };
    const passthrough = `${base}/v1/end-users/${setup.endUserId}/passthrough/ledger_desktop`;
    const customers = `${base}/v1/ledger-desktop/customers`;
    const upserts = `${base}/v1/ledger-desktop/customers/by-key`;
    const batches = `${base}/v1/ledger-desktop/batch`;
    /** A dependent batch's job: under the write's customer, named through `$ref`. */
    const jobOf = (w: Write): string => `${w.name}:Job`;
    await eventually(
      "the connection is online",
      async () => {
        const res = await fetch(`${base}/v1/end-users/${setup.endUserId}`, { headers });
        const body = (await res.json()) as { integrationConnections: { status: string }[] };
        return body.integrationConnections[0]?.status === "online";
      },
      60_000,
    );

    // The plan: one entry per write, from the seed.
    const entries = plan(
      fc.record({
        async: fc.boolean(),
        route: fc.constantFrom<Route>("typed", "typed", "typed", "upsert", "batch", "passthrough"),
        connector: fc.constantFrom<ConnectorPlan>(
          ...(Array(7).fill("none") as ConnectorPlan[]),
          "lose_answer",
          "crash_before_write",
          "drop",
        ),
        client: fc.constantFrom<ClientPlan>(...(Array(8).fill("none") as ClientPlan[]), "abort", "twice"),
        delayMs: fc.integer({ min: 0, max: 40 }),
      }),
      seed,
      WRITES,
    );
    const killAt = new Set(
      Array.from({ length: KILLS }, (_, k) => Math.floor(((k + 1) * WRITES) / (KILLS + 1))),
    );
    const writes: Write[] = entries.map((e, index) => ({
      index,
      name: `R1-${seed % 100000}-${index}`,
      key: `r1-${seed}-${index}`,
      async: e.async,
      route: e.route,
      connector: e.connector,
      client: e.client,
      requestIds: [],
      sends: 0,
      retriedEnds: 0,
    }));
    let networkErrors = 0;
    let retries = 0;
    const kills: Promise<void>[] = [];

    /** One POST of the write; the Request it names, or null after a network error. */
    const send = async (w: Write, abortAfterMs?: number): Promise<string | null> => {
      w.sends += 1;
      try {
        const common = {
          ...headers,
          "idempotency-key": w.key,
          "svc-timeout-seconds": "20",
          ...(w.async ? { prefer: "respond-async" } : {}),
        };
        const json = { ...common, "content-type": "application/json", "svc-end-user-id": setup.endUserId };
        const url = { typed: customers, upsert: upserts, batch: batches, passthrough }[w.route];
        const body = {
          typed: () => JSON.stringify({ name: w.name }),
          upsert: () => JSON.stringify({ key: { fullName: w.name } }),
          batch: () =>
            JSON.stringify({
              requests: [
                { operationId: "ledger.customers.create", body: { name: w.name } },
                {
                  operationId: "ledger.customers.create",
                  body: { name: "Job", parentId: { $ref: "requests[0].data.id" } },
                },
              ],
            }),
          passthrough: () => customerAdd(w.name),
        }[w.route]();
        const res = await fetch(url, {
          method: w.route === "upsert" ? "PUT" : "POST",
          headers: w.route === "passthrough" ? { ...common, "content-type": "application/xml" } : json,
          body,
          ...(abortAfterMs === undefined ? {} : { signal: AbortSignal.timeout(abortAfterMs) }),
        });
        const text = await res.text();
        const id = res.headers.get("svc-request-id") ?? "";
        assert.ok(id.startsWith("req_"), `write ${w.index}: HTTP ${res.status} without a Request: ${text}`);
        w.requestIds.push(id);
        return id;
      } catch (error) {
        if (error instanceof assert.AssertionError) throw error;
        networkErrors += 1;
        return null;
      }
    };

    /** Reads the Request until it is terminal (long polls; network errors while the service restarts). */
    const settle = async (id: string, started: number): Promise<RequestView> => {
      for (;;) {
        assert.ok(Date.now() - started < WRITE_BOUND_MS, `request ${id} did not settle`);
        try {
          const res = await fetch(`${base}/v1/requests/${id}?waitSeconds=5`, { headers });
          if (res.status === 200) {
            const view = (await res.json()) as RequestView;
            if (TERMINAL.has(view.status)) return view;
            continue;
          }
        } catch {
          networkErrors += 1;
        }
        await sleep(250);
      }
    };

    /** A client writing `w` until it has an end, following the retry rules with the same key. */
    const write = async (w: Write): Promise<void> => {
      const started = Date.now();
      const entry = entries[w.index];
      assert.ok(entry);
      if (w.connector === "lose_answer") connector.setFault({ kind: "lose_answer_after_write" });
      if (w.connector === "crash_before_write") connector.setFault({ kind: "crash_before_write" });
      if (w.connector === "drop") void drop(entry.delayMs, 100 + entry.delayMs * 5);
      if (w.client === "abort") await send(w, entry.delayMs + 1);
      const sending = w.client === "twice" ? [send(w), send(w)] : [send(w)];
      let id = (await Promise.all(sending)).find((found) => found !== null) ?? null;
      for (;;) {
        assert.ok(
          Date.now() - started < WRITE_BOUND_MS,
          `write ${w.index} did not end: ${JSON.stringify(w)}`,
        );
        if (id === null) {
          retries += 1;
          await sleep(250 + entry.delayMs * 5);
          id = await send(w);
          continue;
        }
        const view = await settle(id, started);
        const retryable =
          view.status !== "succeeded" && view.outcome === "not_applied" && view.error?.retryable;
        if (retryable && w.retriedEnds < 10) {
          // retry_same_request: the identical request with the same key; a replay of this very
          // Request is its end.
          w.retriedEnds += 1;
          retries += 1;
          await sleep(100);
          const again = await send(w);
          if (again !== view.id) {
            id = again;
            continue;
          }
        }
        w.final = {
          requestId: view.id,
          status: view.status,
          outcome: view.outcome,
          recovered: view.recovered,
          code: view.error?.code ?? null,
        };
        return;
      }
    };

    let next = 0;
    const client = async (): Promise<void> => {
      while (next < writes.length) {
        const w = writes[next++];
        assert.ok(w);
        if (killAt.has(w.index)) {
          // The kill lands while this write and the other clients' are in flight.
          const delayMs = entries[w.index]?.delayMs ?? 0;
          // One kill at a time: the next waits for the previous restart.
          const previous = kills.at(-1) ?? Promise.resolve();
          const kill = previous.then(() => sleep(delayMs)).then(() => service.killAndRestart());
          // Awaited after the writes (a failed restart fails the test there).
          kill.catch(() => undefined);
          kills.push(kill);
        }
        await write(w);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    await Promise.all(kills);

    // Every client that retries now gets its Request back; nothing more reaches the application.
    const receiptsBefore = [...receipts.values()].reduce((a, b) => a + b, 0);
    for (const w of writes) {
      assert.ok(w.final, `write ${w.index} has no end`);
      const id = await send(w);
      assert.equal(id, w.final.requestId, `write ${w.index}: a retry with its key replays its Request`);
    }
    await sleep(500);
    assert.equal(
      [...receipts.values()].reduce((a, b) => a + b, 0),
      receiptsBefore,
      "replays sent nothing",
    );

    const named = new Map<string, number>();
    for (const record of file.recordsOf("Customer")) {
      const name = file.fullNameOf(record);
      named.set(name, (named.get(name) ?? 0) + 1);
    }
    // A dependent batch writes its customer and the job under it: both once, or neither.
    const names = (w: Write): string[] => (w.route === "batch" ? [w.name, jobOf(w)] : [w.name]);
    const appliedOnce = writes.filter(
      (w) =>
        w.final?.status === "succeeded" &&
        w.final.outcome === "applied" &&
        names(w).every((name) => named.get(name) === 1),
    );
    const notApplied = writes.filter(
      (w) => w.final?.outcome === "not_applied" && names(w).every((name) => !named.has(name)),
    );
    const duplicates = writes.filter(
      (w) => names(w).some((name) => (named.get(name) ?? 0) > 1) || (receipts.get(w.name) ?? 0) > 1,
    );
    const lost = writes.filter((w) => !appliedOnce.includes(w) && !notApplied.includes(w));
    const counts = {
      seconds: Math.round((Date.now() - startedAt) / 1000),
      store: process.env.DATABASE_URL ? "postgres" : "pglite",
      writes: WRITES,
      typedWrites: writes.filter((w) => w.route === "typed").length,
      upserts: writes.filter((w) => w.route === "upsert").length,
      dependentBatches: writes.filter((w) => w.route === "batch").length,
      appliedOnce: appliedOnce.length,
      notApplied: notApplied.length,
      duplicates: duplicates.length,
      lost: lost.length,
      recovered: writes.filter((w) => w.final?.recovered).length,
      messageSetsByWrites: Object.fromEntries([...setSizes].sort(([a], [b]) => a - b)),
      faults: {
        serviceKills: service.kills,
        serviceDownMs: service.downMs,
        answersDropped,
        connectorDrops,
        clientAborts: writes.filter((w) => w.client === "abort").length,
        sentTwiceAtOnce: writes.filter((w) => w.client === "twice").length,
        networkErrors,
        retries,
      },
      notAppliedCodes: Object.fromEntries(
        [...new Set(notApplied.map((w) => w.final?.code ?? "none"))].map((code) => [
          code,
          notApplied.filter((w) => (w.final?.code ?? "none") === code).length,
        ]),
      ),
    };
    reportCounts(t, "R1", counts);
    assert.equal(service.kills, KILLS, "every planned kill happened");
    assert.deepEqual(
      duplicates.map((w) => ({ ...w, receipts: receipts.get(w.name), records: named.get(w.name) })),
      [],
      "no write applied or received twice",
    );
    assert.deepEqual(
      lost.map((w) => ({ ...w, receipts: receipts.get(w.name), records: named.get(w.name) })),
      [],
      "no write lost: each ended applied once (a record) or not_applied (none)",
    );
    // Names of this run in the file are exactly the applied writes.
    assert.equal(
      [...named.keys()].filter((n) => n.startsWith("R1-") && !n.endsWith(":Job")).length,
      appliedOnce.length,
    );
    finished = true;
    await connector.stop();
    await driving;
    assert.equal(await service.current?.stop(), 0, "a graceful stop at the end");
  },
);
