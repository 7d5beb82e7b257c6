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
  | { cmd: "throughput"; total: number; concurrency: number }
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
  | { cmd: "stopped" };

const now = (): number => performance.timeOrigin + performance.now();
const delay = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/** When the connector's `sendRequestXML` calls start and end, and when documents reach the app. */
class Probe {
  arrivals: number[] = [];
  sendStartedAt: number | null = null;

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
          processRequest: (requestXml: string): Promise<ProcessResult> => {
            this.arrivals.push(now());
            return session.processRequest(requestXml);
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
const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0" });
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

async function throughput(total: number, concurrency: number): Promise<WorkerReply> {
  const latencies: number[] = [];
  let failures = 0;
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (issued < total) {
      issued += 1;
      const start = now();
      const ok = await call().catch(() => false);
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
        return throughput(command.total, command.concurrency);
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
