/**
 * Many lightweight Web Connectors and their callers, in a child process of the bench (so that the
 * service's process holds only the service: its memory is measured). Each connector speaks the real
 * protocol over HTTP: `authenticate`, then `sendRequestXML` held by the service until work arrives;
 * an empty answer is followed by `getLastError` ("NoOp") and, after the connector's pause, the next
 * `sendRequestXML`. A document is answered at once through `receiveResponseXML` with a canned,
 * successful answer for each of its requests (a zero-latency application that knows no records).
 *
 * Commands arrive over IPC (`process.send`); times are epoch milliseconds with sub-ms precision.
 */
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import {
  SOAP_CONTENT_TYPE,
  parseSoapResponse,
  soapAction,
  soapRequest,
  type SoapCall,
} from "../src/connector/soap.ts";

export interface FleetConnector {
  /** The service's base URL this connector's `.qwc` points at. */
  url: string;
  userName: string;
  password: string;
}

export interface MixedTarget {
  url: string;
  endUserId: string;
}

export type FleetCommand =
  | { cmd: "connect"; connectors: FleetConnector[]; noOpPauseMs: number; rampConcurrency: number }
  | { cmd: "held" }
  | { cmd: "handover"; index: number; url: string; secretKey: string; endUserId: string; samples: number }
  | {
      cmd: "mixed";
      secretKey: string;
      targets: MixedTarget[];
      concurrency: number;
      durationMs: number;
      /** Passthrough round trips started per second over all callers (unset: as fast as they go). */
      ratePerSecond?: number;
    }
  | { cmd: "stop" };

export type FleetReply =
  | { cmd: "connected"; sessions: number; refused: number; ms: number }
  | { cmd: "held"; held: number; sessions: number; errors: number }
  | { cmd: "handover"; samples: number[]; failures: number }
  | {
      cmd: "mixed";
      calls: number;
      passthrough: number;
      reads: number;
      failures: number;
      ms: number;
      /** Completed API calls per service URL (each instance's share). */
      byUrl: Record<string, number>;
    }
  | { cmd: "stopped" };

export const PASSTHROUGH_BODY = "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>";

const now = (): number => performance.timeOrigin + performance.now();
const delay = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
let stopping = false;

/** One HTTP exchange over the shared keep-alive agent. */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  method = "POST",
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function soap(url: string, call: SoapCall): Promise<ReturnType<typeof parseSoapResponse>> {
  const { text } = await post(
    `${url}/connector`,
    { "content-type": SOAP_CONTENT_TYPE, soapaction: soapAction(call.method) },
    soapRequest(call),
  );
  return parseSoapResponse(call.method, text);
}

/** A successful, empty answer to each request of a message set (echoing its requestID). */
function cannedAnswer(document: string): string {
  const answers: string[] = [];
  for (const match of document.matchAll(/<(\w+)Rq(?:\s+requestID="([^"]*)")?/g)) {
    const [, name, id] = match;
    if (name === "QBXMLMsgs") continue;
    const requestId = id === undefined ? "" : ` requestID="${id}"`;
    answers.push(`<${name}Rs${requestId} statusCode="0" statusSeverity="Info" statusMessage="Status OK" />`);
  }
  return `<?xml version="1.0" ?><QBXML><QBXMLMsgsRs>${answers.join("")}</QBXMLMsgsRs></QBXML>`;
}

class Connector {
  /** When its `sendRequestXML` started, while one is in flight. */
  heldSince: number | null = null;
  arrivals: number[] = [];
  open = false;
  errors = 0;

  constructor(
    private readonly c: FleetConnector,
    private readonly noOpPauseMs: number,
  ) {}

  /** Authenticates; true when the service opened a session. Then runs it in the background. */
  async connect(): Promise<boolean> {
    const result = await soap(this.c.url, {
      method: "authenticate",
      strUserName: this.c.userName,
      strPassword: this.c.password,
    });
    const [ticket, status] = Array.isArray(result) ? result : [];
    if (!ticket || status === "nvu" || status === "none") return false;
    this.open = true;
    void this.run(ticket).catch(() => {
      this.errors += 1;
      this.open = false;
    });
    return true;
  }

  private async run(ticket: string): Promise<void> {
    const url = this.c.url;
    while (!stopping) {
      this.heldSince = now();
      const document = String(
        await soap(url, {
          method: "sendRequestXML",
          ticket,
          strHCPResponse: "",
          strCompanyFileName: `C:\\Company Files\\${this.c.userName}.qbw`,
          qbXMLCountry: "US",
          qbXMLMajorVers: "16",
          qbXMLMinorVers: "0",
        }),
      );
      this.heldSince = null;
      if (document !== "") {
        this.arrivals.push(now());
        const progress = Number(
          await soap(url, {
            method: "receiveResponseXML",
            ticket,
            response: cannedAnswer(document),
            hresult: "",
            message: "",
          }),
        );
        if (progress < 0 || progress >= 100) break;
        continue;
      }
      const lastError = String(await soap(url, { method: "getLastError", ticket }));
      if (lastError !== "NoOp") break;
      await delay(this.noOpPauseMs);
    }
    this.open = false;
    if (!stopping) await soap(url, { method: "closeConnection", ticket }).catch(() => undefined);
  }
}

let connectors: Connector[] = [];

async function connectAll(
  list: FleetConnector[],
  noOpPauseMs: number,
  rampConcurrency: number,
): Promise<FleetReply> {
  const started = now();
  const fresh = list.map((c) => new Connector(c, noOpPauseMs));
  connectors.push(...fresh);
  let next = 0;
  let refused = 0;
  const ramp = async (): Promise<void> => {
    while (next < fresh.length) {
      const connector = fresh[next++];
      if (connector && !(await connector.connect().catch(() => false))) refused += 1;
    }
  };
  await Promise.all(Array.from({ length: rampConcurrency }, ramp));
  return { cmd: "connected", sessions: fresh.length - refused, refused, ms: now() - started };
}

function apiHeaders(secretKey: string): Record<string, string> {
  return { authorization: `Bearer ${secretKey}`, "content-type": "application/xml" };
}

/** Sequential sync calls to one end user whose connector is held: call start → document at its connector. */
/** The longest the hand-over samples of one step may take together. */
const HANDOVER_PHASE_MS = 90_000;

async function handOver(command: Extract<FleetCommand, { cmd: "handover" }>): Promise<FleetReply> {
  const connector = connectors[command.index];
  const samples: number[] = [];
  let failures = 0;
  if (!connector) return { cmd: "handover", samples, failures: command.samples };
  // Bounded as a whole: a connector that never holds again (its session lost under load) must not
  // keep the bench waiting 30 s per sample; the samples not taken count as failures.
  const phaseEnd = now() + HANDOVER_PHASE_MS;
  for (let i = 0; i < command.samples; i += 1) {
    if (now() > phaseEnd) {
      failures += command.samples - i;
      break;
    }
    const until = Math.min(now() + 30_000, phaseEnd);
    while ((connector.heldSince === null || now() - connector.heldSince < 5) && now() < until) await delay(1);
    connector.arrivals.length = 0;
    const start = now();
    const answer = await post(
      `${command.url}/v1/end-users/${command.endUserId}/passthrough/ledger_desktop`,
      apiHeaders(command.secretKey),
      PASSTHROUGH_BODY,
    ).catch(() => ({ status: 0, text: "" }));
    const arrival = connector.arrivals[0];
    if (answer.status !== 200 || arrival === undefined) failures += 1;
    else samples.push(arrival - start);
  }
  return { cmd: "handover", samples, failures };
}

/**
 * Mixed API load for a fixed time: `concurrency` callers, each in turn a sync passthrough round
 * trip to a random target end user (through that target's instance), then a read of the Request it
 * made (`GET /v1/requests/{id}`) and of the end user. With `ratePerSecond`, round trips start on a
 * fixed schedule (a caller waits for the next free slot), so that runs compare at the same load.
 */
async function mixed(command: Extract<FleetCommand, { cmd: "mixed" }>): Promise<FleetReply> {
  const headers = apiHeaders(command.secretKey);
  const until = now() + command.durationMs;
  let passthrough = 0;
  let reads = 0;
  let failures = 0;
  const byUrl: Record<string, number> = {};
  const served = (url: string): void => {
    byUrl[url] = (byUrl[url] ?? 0) + 1;
  };
  const started = now();
  let scheduled = 0;
  const slot = async (): Promise<void> => {
    if (command.ratePerSecond === undefined) return;
    const at = started + (scheduled++ * 1000) / command.ratePerSecond;
    if (at > now()) await new Promise((resolve) => setTimeout(resolve, at - now()));
  };
  // One turn over all callers: the targets (end user × instance) are served in rotation, so every
  // end user, and so every instance's connectors, gets an equal share however short the run. (Each
  // caller walking the list from its own start skewed short runs toward the first end users, whose
  // connectors are all on the first instance: 5× its neighbour's connector work in a paced run.)
  let turn = 0;
  const caller = async (): Promise<void> => {
    while (now() < until) {
      await slot();
      if (now() >= until) return;
      const target = command.targets[turn++ % command.targets.length];
      if (!target) return;
      const res = await new Promise<{ status: number; id: string }>((resolve) => {
        const req = request(
          `${target.url}/v1/end-users/${target.endUserId}/passthrough/ledger_desktop`,
          { method: "POST", agent, headers },
          (r) => {
            r.resume();
            r.on("end", () =>
              resolve({ status: r.statusCode ?? 0, id: String(r.headers["svc-request-id"] ?? "") }),
            );
          },
        );
        req.on("error", () => resolve({ status: 0, id: "" }));
        req.end(PASSTHROUGH_BODY);
      });
      if (res.status !== 200) {
        failures += 1;
        continue;
      }
      passthrough += 1;
      served(target.url);
      for (const path of [`/v1/requests/${res.id}`, `/v1/end-users/${target.endUserId}`]) {
        const read = await post(
          `${target.url}${path}`,
          { authorization: headers.authorization ?? "" },
          "",
          "GET",
        ).catch(() => ({ status: 0, text: "" }));
        if (read.status === 200) {
          reads += 1;
          served(target.url);
        } else failures += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: command.concurrency }, () => caller()));
  return {
    cmd: "mixed",
    calls: passthrough + reads,
    passthrough,
    reads,
    failures,
    ms: now() - started,
    byUrl,
  };
}

process.on("message", (command: FleetCommand) => {
  const reply = async (): Promise<FleetReply> => {
    switch (command.cmd) {
      case "connect":
        return connectAll(command.connectors, command.noOpPauseMs, command.rampConcurrency);
      case "held": {
        const open = connectors.filter((c) => c.open);
        return {
          cmd: "held",
          held: open.filter((c) => c.heldSince !== null).length,
          sessions: open.length,
          errors: connectors.reduce((n, c) => n + c.errors, 0),
        };
      }
      case "handover":
        return handOver(command);
      case "mixed":
        return mixed(command);
      case "stop":
        stopping = true;
        agent.destroy();
        connectors = [];
        return { cmd: "stopped" };
    }
  };
  reply().then(
    (message) => process.send?.(message),
    (error: unknown) => {
      console.error("connector fleet failed:", error);
      process.exit(1);
    },
  );
});
