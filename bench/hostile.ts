/**
 * Hostile load on the connector endpoint (issue 23), against the compiled service alone in its
 * process, on loopback only, bounded in time:
 *
 *   1. junk: 10 callers each send 16 MB bodies to `POST /connector` (one SOAP envelope holding
 *      millions of empty elements, the body that used to be decoded and built into a tree before
 *      anything looked at it) for a fixed window, while `GET /readyz` is asked every 100 ms. It
 *      prints the service's resident memory before and at its peak, and the health check's latency
 *      with and without the attack.
 *   2. failed logins: 8 callers send `authenticate` with a wrong password from one address for a
 *      fixed window; it prints how many per second the service admitted (answered with its
 *      verdict `nvu`, a store read each) and how many it turned away before reading them.
 *
 * `tsx bench/hostile.ts` runs it alone; `npm run bench` runs it as the `hostile` section.
 */
import { request } from "node:http";
import { performance } from "node:perf_hooks";
import { CONNECTOR_NAMESPACE } from "../src/connector/soap.ts";
import { freshStore, seedStore, startService, type ServiceProcess } from "./service-process.ts";

/** One junk body: 16 MB, well-formed, namespaced like a SOAP call. */
export const JUNK_BODY_BYTES = 16 * 1024 * 1024;
export const JUNK_CALLERS = 10;
const JUNK_WINDOW_MS = 15_000;
const LOGIN_CALLERS = 8;
const LOGIN_WINDOW_MS = 5_000;
const HEALTH_EVERY_MS = 100;
const HEALTH_TIMEOUT_MS = 30_000;

export interface HostileResult {
  engine: string;
  rssBeforeBytes: number;
  rssPeakBytes: number;
  /** Resident memory 5 s after the attack, and the V8 heap used before and then. */
  rssAfterBytes: number;
  heapBeforeBytes: number;
  heapAfterBytes: number;
  healthQuiet: LatencySummary;
  healthUnderJunk: LatencySummary;
  junkBodiesSent: number;
  /** How the junk bodies ended: status codes, or the socket error that ended them. */
  junkEndings: Record<string, number>;
  /** Mean time from the first byte sent to the end of one junk call. */
  junkMeanMs: number;
  serviceSurvived: boolean;
  loginsAdmittedPerSecond: number;
  loginsRefusedPerSecond: number;
}

export interface LatencySummary {
  p50: number;
  p99: number;
  max: number;
  count: number;
  failed: number;
}

function summary(values: number[], failed: number): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted.length === 0
      ? Number.NaN
      : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN);
  return { p50: at(0.5), p99: at(0.99), max: at(1), count: sorted.length, failed };
}

function junkBody(): Buffer {
  const open = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><authenticate xmlns="${CONNECTOR_NAMESPACE}">`;
  const close = "</authenticate></soap:Body></soap:Envelope>";
  const element = "<x/>";
  const count = Math.floor((JUNK_BODY_BYTES - open.length - close.length) / element.length);
  return Buffer.from(open + element.repeat(count) + close);
}

function authenticateBody(userName: string, password: string): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
    `<authenticate xmlns="${CONNECTOR_NAMESPACE}"><strUserName>${userName}</strUserName><strPassword>${password}</strPassword></authenticate>` +
    "</soap:Body></soap:Envelope>"
  );
}

/** One POST; resolves with the status code or the error code that ended it (never rejects). */
function post(
  url: string,
  body: Buffer | string,
  agentless = true,
): Promise<{ ending: string; text: string }> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: {
          "Content-Type": "text/xml; charset=utf-8",
          "Content-Length": Buffer.byteLength(body),
          SOAPAction: `"${CONNECTOR_NAMESPACE}authenticate"`,
          ...(agentless ? { Connection: "close" } : {}),
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ ending: String(res.statusCode), text: Buffer.concat(chunks).toString() }),
        );
        res.on("error", (error: NodeJS.ErrnoException) =>
          resolve({ ending: error.code ?? "error", text: "" }),
        );
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ ending: error.code ?? "error", text: "" }));
    req.end(body);
  });
}

/** Asks `/readyz` every 100 ms until `stop` aborts; latencies in ms (a failure or timeout counts apart). */
async function healthChecks(url: string, stop: AbortSignal): Promise<LatencySummary> {
  const latencies: number[] = [];
  let failed = 0;
  while (!stop.aborted) {
    const started = performance.now();
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
      await response.arrayBuffer();
      if (response.status === 200) latencies.push(performance.now() - started);
      else failed += 1;
    } catch {
      failed += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, HEALTH_EVERY_MS));
  }
  return summary(latencies, failed);
}

async function junkAttack(
  service: ServiceProcess,
): Promise<
  Pick<
    HostileResult,
    "rssPeakBytes" | "healthUnderJunk" | "junkBodiesSent" | "junkEndings" | "junkMeanMs" | "serviceSurvived"
  >
> {
  const body = junkBody();
  const stop = new AbortController();
  const health = healthChecks(service.url, stop.signal);
  let rssPeakBytes = service.rss();
  const sampler = setInterval(() => {
    try {
      rssPeakBytes = Math.max(rssPeakBytes, service.rss());
    } catch {
      // the process is gone
    }
  }, 50);
  const endings: Record<string, number> = {};
  const durations: number[] = [];
  const deadline = performance.now() + JUNK_WINDOW_MS;
  const caller = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const started = performance.now();
      const { ending } = await post(`${service.url}/connector`, body);
      durations.push(performance.now() - started);
      endings[ending] = (endings[ending] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: JUNK_CALLERS }, caller));
  stop.abort();
  clearInterval(sampler);
  const healthUnderJunk = await health;
  let serviceSurvived = true;
  try {
    serviceSurvived = (await fetch(`${service.url}/livez`, { signal: AbortSignal.timeout(10_000) })).ok;
  } catch {
    serviceSurvived = false;
  }
  return {
    rssPeakBytes,
    healthUnderJunk,
    junkBodiesSent: durations.length,
    junkEndings: endings,
    junkMeanMs: durations.reduce((a, b) => a + b, 0) / Math.max(1, durations.length),
    serviceSurvived,
  };
}

async function failedLogins(
  service: ServiceProcess,
  userName: string,
): Promise<{ admitted: number; refused: number }> {
  const body = authenticateBody(userName, "not-the-password");
  let admitted = 0;
  let refused = 0;
  const deadline = performance.now() + LOGIN_WINDOW_MS;
  const caller = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const { ending, text } = await post(`${service.url}/connector`, body, false);
      if (ending === "200" && text.includes(">nvu<")) admitted += 1;
      else refused += 1;
    }
  };
  await Promise.all(Array.from({ length: LOGIN_CALLERS }, caller));
  return { admitted: admitted / (LOGIN_WINDOW_MS / 1000), refused: refused / (LOGIN_WINDOW_MS / 1000) };
}

/**
 * Runs both attacks against a fresh service on the store (`serverUrl`: PostgreSQL; else PGlite).
 * The junk bodies come from one address, as a botnet's come from many: the per-address throttle
 * is raised out of their way so that every body is read up to its refusal; the failed logins then
 * meet the default throttle.
 */
export async function measureHostile(serverUrl: string | undefined): Promise<HostileResult> {
  const junk = await measureJunk(serverUrl);
  const target = await freshStore(serverUrl);
  const seeded = await seedStore(target, 1);
  const service = await startService(target);
  try {
    const logins = await failedLogins(service, seeded.endUsers[0]?.userName ?? "nobody");
    return { ...junk, loginsAdmittedPerSecond: logins.admitted, loginsRefusedPerSecond: logins.refused };
  } finally {
    await service.stop().catch(() => undefined);
    await target.drop();
  }
}

async function measureJunk(
  serverUrl: string | undefined,
): Promise<Omit<HostileResult, "loginsAdmittedPerSecond" | "loginsRefusedPerSecond">> {
  // Of the service's memory, the V8 heap tells retained objects from the allocator's slack.
  const target = await freshStore(serverUrl);
  const service = await startService(target, { FAILED_ATTEMPTS_PER_ADDRESS: "1000000" });
  try {
    const quietStop = new AbortController();
    const quiet = healthChecks(service.url, quietStop.signal);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    quietStop.abort();
    const healthQuiet = await quiet;
    const rssBeforeBytes = service.rss();
    const heapBeforeBytes = (await service.memory()).heapUsedBytes;
    const junk = await junkAttack(service);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const rssAfterBytes = junk.serviceSurvived ? service.rss() : Number.NaN;
    const heapAfterBytes = junk.serviceSurvived ? (await service.memory()).heapUsedBytes : Number.NaN;
    return {
      engine: serverUrl ? "postgres" : "pglite",
      rssBeforeBytes,
      rssAfterBytes,
      heapBeforeBytes,
      heapAfterBytes,
      healthQuiet,
      ...junk,
    };
  } finally {
    await service.stop().catch(() => undefined);
    await target.drop();
  }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const ms = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : "n/a");

/** The figures as the bench's table rows. */
export function hostileRows(result: HostileResult): Array<{ figure: string; value: string; goal: string }> {
  const label = `[${result.engine}] hostile`;
  const endings = Object.entries(result.junkEndings)
    .map(([ending, count]) => `${ending}×${count}`)
    .join(", ");
  return [
    {
      figure: `${label}: service RSS before → peak during → 5 s after ${JUNK_CALLERS} callers' ${mb(JUNK_BODY_BYTES)} junk bodies to /connector; V8 heap used before → 5 s after`,
      value:
        `${mb(result.rssBeforeBytes)} → ${mb(result.rssPeakBytes)} (+${mb(result.rssPeakBytes - result.rssBeforeBytes)}) → ${mb(result.rssAfterBytes)}; ` +
        `heap ${mb(result.heapBeforeBytes)} → ${mb(result.heapAfterBytes)}`,
      goal: "growth ≤ a few MB",
    },
    {
      figure: `${label}: GET /readyz p50 / p99 / max, quiet → under the junk bodies`,
      value:
        `${ms(result.healthQuiet.p50)} / ${ms(result.healthQuiet.p99)} / ${ms(result.healthQuiet.max)} → ` +
        `${ms(result.healthUnderJunk.p50)} / ${ms(result.healthUnderJunk.p99)} / ${ms(result.healthUnderJunk.max)}` +
        (result.healthUnderJunk.failed > 0 ? ` (${result.healthUnderJunk.failed} failed)` : ""),
      goal: "unaffected",
    },
    {
      figure: `${label}: junk bodies sent in ${JUNK_WINDOW_MS / 1000} s (per second), mean time each, how they ended`,
      value: `${result.junkBodiesSent} (${(result.junkBodiesSent / (JUNK_WINDOW_MS / 1000)).toFixed(0)}/s), ${ms(result.junkMeanMs)}, ${endings}${result.serviceSurvived ? "" : "; the service did not survive"}`,
      goal: "refused before parsing",
    },
    {
      figure: `${label}: failed connector logins per second from one address, admitted / turned away`,
      value: `${result.loginsAdmittedPerSecond.toFixed(1)} / ${result.loginsRefusedPerSecond.toFixed(1)}`,
      goal: "≤ 10 a minute admitted",
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = [];
  for (const store of process.env.DATABASE_URL ? [undefined, process.env.DATABASE_URL] : [undefined]) {
    rows.push(...hostileRows(await measureHostile(store)));
  }
  for (const row of rows) console.log(`${row.figure}\n    ${row.value}   (goal: ${row.goal})`);
  process.exit(0);
}
