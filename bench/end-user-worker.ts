/**
 * The bench's end user and load generator, in a worker thread so that the service's thread does
 * only the service's work (as in a deployment, where the Web Connector runs on the end user's PC and
 * the callers on the developer's servers). It runs a simulated Web Connector configured from the
 * real `.qwc` and password, a zero-latency simulated company file, and the HTTP callers.
 *
 * Times are absolute (`performance.timeOrigin + performance.now()`), comparable across threads.
 */
import { parentPort, workerData } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import type {
  ApplicationSession,
  BeginSessionOptions,
  BeginSessionResult,
  ProcessResult,
  SimulatedApplication,
} from "../src/simulator/application.ts";
import { SimulatedLedgerApplication } from "../src/simulator/ledger/index.ts";
import { SimulatedWebConnector } from "../src/simulator/web-connector.ts";

export interface WorkerSetup {
  serviceUrl: string;
  secretKey: string;
  endUserId: string;
  qwc: string;
  password: string;
  companyName: string;
  body: string;
}

export type WorkerCommand =
  | { cmd: "start" }
  | { cmd: "handover"; warmUp: number; samples: number }
  /**
   * `total` sync reads, `concurrency` at a time: passthrough customer queries (each its own message
   * set: a passthrough goes alone) or typed customer retrieves (queued ones share message sets).
   */
  | { cmd: "throughput"; total: number; concurrency: number; kind?: "passthrough" | "typed" }
  /** Seeds invoices straight into the company file (typed bench; not measured). */
  | {
      cmd: "seedInvoices";
      customerId: string;
      itemId: string;
      count: number;
      batch: number;
      /** How long ago the invoices were written (their creation and modification times); 0: now. */
      ageMs?: number;
    }
  /** One typed call as a developer's server makes it (JSON body, `Svc-End-User-Id`, extra `headers`). */
  | {
      cmd: "call";
      method: "GET" | "POST" | "PUT" | "DELETE";
      path: string;
      body?: unknown;
      headers?: Record<string, string>;
      /** Answer `{source, nextCursor, count}` instead of the body (no copy of a page to the service's thread). */
      summary?: boolean;
    }
  /** `total` typed calls one after another (sync create round trips). */
  | { cmd: "repeat"; method: "GET" | "POST" | "PUT" | "DELETE"; path: string; body?: unknown; total: number }
  | { cmd: "stop" };

export interface HandOverSample {
  start: number;
  arrival: number;
  end: number;
}

export type WorkerReply =
  | { cmd: "started" }
  | { cmd: "handover"; samples: HandOverSample[]; failures: number }
  | { cmd: "throughput"; perSecond: number; latencies: number[]; failures: number }
  /** The seeded invoices' IDs, in order. */
  | { cmd: "seeded"; ids: string[] }
  /** `applicationMs`: the time the simulated application spent processing during the call. */
  | {
      cmd: "call";
      status: number;
      body: unknown;
      elapsedMs: number;
      applicationMs: number;
      headers: Record<string, string>;
    }
  | { cmd: "repeat"; perSecond: number; failures: number; firstFailure: string | null }
  | { cmd: "stopped" };

const now = (): number => performance.timeOrigin + performance.now();
const delay = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/** When the connector's `sendRequestXML` calls start and end, and when documents reach the app. */
class Probe {
  arrivals: number[] = [];
  sendStartedAt: number | null = null;
  /** Time the application spent processing documents, in ms (read and reset by `call`). */
  applicationMs = 0;

  /** Resolves once a `sendRequestXML` has been in flight for a few ms (the service holds it). */
  async untilHeld(timeoutMs = 5000): Promise<boolean> {
    const until = now() + timeoutMs;
    while (now() < until) {
      if (this.sendStartedAt !== null && now() - this.sendStartedAt >= 5) return true;
      await delay(1);
    }
    return false;
  }

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
          processRequest: async (requestXml: string): Promise<ProcessResult> => {
            const arrival = now();
            this.arrivals.push(arrival);
            try {
              return await session.processRequest(requestXml);
            } finally {
              this.applicationMs += now() - arrival;
            }
          },
          end: () => session.end(),
        };
        return { ok: true, session: wrapped };
      },
    };
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const isSend = (new Headers(init?.headers).get("soapaction") ?? "").includes("sendRequestXML");
    if (isSend) this.sendStartedAt = now();
    try {
      return await fetch(input, init);
    } finally {
      if (isSend) this.sendStartedAt = null;
    }
  };
}

const setup = workerData as WorkerSetup;
const probe = new Probe();
/** The company file's clock: set back while seeding records "written earlier" (`seedInvoices`'s `ageMs`). */
const ledgerClock = { ageMs: 0, now: (): number => Date.now() - ledgerClock.ageMs };
const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0", clock: ledgerClock });
const companyFilePath = `C:\\Company Files\\${setup.companyName}.qbw`;
ledger.createCompanyFile(companyFilePath, { companyName: setup.companyName, seed: "sample" });
ledger.openCompanyFile(companyFilePath);
const connector = new SimulatedWebConnector({
  qwc: setup.qwc,
  password: setup.password,
  application: probe.wrap(ledger),
  noOpPauseMs: 20,
  fetch: probe.fetch,
});

async function call(): Promise<boolean> {
  const response = await fetch(
    `${setup.serviceUrl}/v1/end-users/${setup.endUserId}/passthrough/ledger_desktop`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${setup.secretKey}`, "content-type": "application/xml" },
      body: setup.body,
    },
  );
  const text = await response.text();
  return response.status === 200 && text.includes("CustomerQueryRs");
}

async function typedCall(
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
  summary = false,
): Promise<WorkerReply> {
  probe.applicationMs = 0;
  const start = now();
  const response = await fetch(`${setup.serviceUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${setup.secretKey}`,
      "svc-end-user-id": setup.endUserId,
      ...extraHeaders,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed: unknown = await response.json();
  const elapsedMs = now() - start;
  const page = parsed as { source?: unknown; nextCursor?: unknown; data?: unknown };
  return {
    cmd: "call",
    status: response.status,
    body: summary
      ? {
          source: page.source,
          nextCursor: page.nextCursor,
          count: Array.isArray(page.data) ? page.data.length : null,
        }
      : parsed,
    elapsedMs,
    applicationMs: probe.applicationMs,
    headers: Object.fromEntries(response.headers),
  };
}

async function repeat(
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body: unknown,
  total: number,
): Promise<WorkerReply> {
  let failures = 0;
  let firstFailure: string | null = null;
  const started = now();
  for (let i = 0; i < total; i++) {
    const reply = await typedCall(method, path, body);
    if (reply.cmd === "call" && reply.status >= 300) {
      failures += 1;
      firstFailure ??= JSON.stringify(reply.body).slice(0, 300);
    }
  }
  return { cmd: "repeat", perSecond: total / ((now() - started) / 1000), failures, firstFailure };
}

/** Seeds invoices straight into the simulated company file (not through the service). */
async function seedInvoices(
  customerId: string,
  itemId: string,
  count: number,
  batch: number,
  ageMs = 0,
): Promise<WorkerReply> {
  ledgerClock.ageMs = ageMs;
  try {
    return await seedWithClock(customerId, itemId, count, batch);
  } finally {
    ledgerClock.ageMs = 0;
  }
}

async function seedWithClock(
  customerId: string,
  itemId: string,
  count: number,
  batch: number,
): Promise<WorkerReply> {
  const begun = await ledger.beginSession({
    companyFilePath,
    appName: "bench seed",
    ownerId: "{00000000-0000-0000-0000-000000000000}",
    fileId: "{00000000-0000-0000-0000-000000000001}",
    stampFileId: false,
  });
  if (!begun.ok) throw new Error(begun.message);
  const ids: string[] = [];
  for (let done = 0; done < count; done += batch) {
    const adds = Array.from({ length: Math.min(batch, count - done) }, (_, i) => {
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
    for (const match of result.response.matchAll(/<TxnID>([^<]+)<\/TxnID>/g)) ids.push(match[1] ?? "");
  }
  begun.session.end();
  return { cmd: "seeded", ids };
}

async function handOver(warmUp: number, samples: number): Promise<WorkerReply> {
  const out: HandOverSample[] = [];
  let failures = 0;
  for (let i = 0; i < warmUp + samples; i += 1) {
    if (!(await probe.untilHeld())) {
      failures += 1;
      continue;
    }
    probe.arrivals.length = 0;
    const start = now();
    const ok = await call().catch(() => false);
    const end = now();
    const arrival = probe.arrivals[0];
    if (!ok || arrival === undefined) failures += 1;
    else if (i >= warmUp) out.push({ start, arrival, end });
  }
  return { cmd: "handover", samples: out, failures };
}

/** Customer IDs of the company file, for typed retrieves (read once over HTTP, not measured). */
let customerIds: string[] | undefined;

async function typedRetrieve(i: number): Promise<boolean> {
  if (!customerIds) {
    const list = await typedCall("GET", "/v1/ledger-desktop/customers?limit=20");
    const records = (list.cmd === "call" ? (list.body as { data?: { id: string }[] }).data : undefined) ?? [];
    customerIds = records.map((r) => r.id);
    if (customerIds.length === 0) throw new Error("the company file has no customers");
  }
  const id = customerIds[i % customerIds.length] ?? "";
  const response = await fetch(`${setup.serviceUrl}/v1/ledger-desktop/customers/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${setup.secretKey}`, "svc-end-user-id": setup.endUserId },
  });
  const body = (await response.json()) as { id?: string };
  return response.status === 200 && body.id === id;
}

async function throughput(
  total: number,
  concurrency: number,
  kind: "passthrough" | "typed",
): Promise<WorkerReply> {
  if (kind === "typed") await typedRetrieve(0);
  const latencies: number[] = [];
  let failures = 0;
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (issued < total) {
      issued += 1;
      const start = now();
      const ok = await (kind === "typed" ? typedRetrieve(issued) : call()).catch(() => false);
      latencies.push(now() - start);
      if (!ok) failures += 1;
    }
  };
  const started = now();
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return { cmd: "throughput", perSecond: total / ((now() - started) / 1000), latencies, failures };
}

parentPort?.on("message", (command: WorkerCommand) => {
  const reply = async (): Promise<WorkerReply> => {
    switch (command.cmd) {
      case "start":
        connector.start();
        return { cmd: "started" };
      case "handover":
        return handOver(command.warmUp, command.samples);
      case "throughput":
        return throughput(command.total, command.concurrency, command.kind ?? "passthrough");
      case "seedInvoices":
        return seedInvoices(command.customerId, command.itemId, command.count, command.batch, command.ageMs);
      case "call":
        return typedCall(command.method, command.path, command.body, command.headers, command.summary);
      case "repeat":
        return repeat(command.method, command.path, command.body, command.total);
      case "stop":
        await connector.stop();
        return { cmd: "stopped" };
    }
  };
  reply().then(
    (message) => parentPort?.postMessage(message),
    (error: unknown) => {
      throw error;
    },
  );
});
