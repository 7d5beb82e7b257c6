import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { it } from "node:test";
import { startService, workspace } from "./processes.ts";

/**
 * Ten parallel 16 MB junk bodies to the connector endpoint leave the service's memory where it was
 * and its health check answering (issue 23, decision 0031). Before the streaming reader, one such
 * body cost ~670 MB and stalled every call for seconds; `npm run bench` (section `hostile`) prints
 * the figures, this test holds the bound.
 */
const JUNK_BYTES = 16 * 1024 * 1024;
const CALLERS = 10;
/** A few MB: what ten refused calls' buffers and the collector's slack may take, far below one body. */
const GROWTH_LIMIT_BYTES = 24 * 1024 * 1024;

function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0") * 1024;
}

function junk(): Buffer {
  const open =
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><authenticate xmlns="http://developer.intuit.com/">';
  return Buffer.concat([Buffer.from(open), Buffer.alloc(JUNK_BYTES - open.length, "<x/>")]);
}

/** Posts `body`; resolves with the status code, or the socket error that ended the call. */
function post(url: string, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: "/connector",
        method: "POST",
        agent: false,
        headers: { "content-type": "text/xml; charset=utf-8", "content-length": body.length },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.statusCode)));
        res.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
    req.end(body);
  });
}

void it("ten parallel 16 MB junk bodies: memory grows by a few MB at most, and the health check answers", async (t) => {
  // Every body is read up to its refusal: the per-address throttle (hostile-edge.test.ts) would
  // otherwise turn all but the first ten away unread, as it does one address's flood in production.
  const ws = await workspace(t, { SIMULATOR: "off", FAILED_ATTEMPTS_PER_ADDRESS: "100000" });
  const service = await startService(t, ws);
  const pid = service.child.pid ?? 0;
  const body = junk();
  // Warm: the first calls compile the code paths whatever their bodies.
  await Promise.all([post(ws.url, body), post(ws.url, body)]);
  const before = residentBytes(pid);
  let peak = before;
  let health: string[] = [];
  let attacking = true;
  const sampler = (async () => {
    while (attacking) {
      peak = Math.max(peak, residentBytes(pid));
      const res = await fetch(`${ws.url}/readyz`).catch(() => null);
      health.push(String(res?.status ?? "no answer"));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const endings: string[] = [];
  for (let round = 0; round < 3; round += 1) {
    endings.push(...(await Promise.all(Array.from({ length: CALLERS }, () => post(ws.url, body)))));
  }
  attacking = false;
  await sampler;
  peak = Math.max(peak, residentBytes(pid));
  t.diagnostic(
    `RSS ${(before / 1048576).toFixed(1)} → peak ${(peak / 1048576).toFixed(1)} MB; endings ${endings.join(",")}`,
  );
  assert.ok(peak - before < GROWTH_LIMIT_BYTES, `grew by ${((peak - before) / 1048576).toFixed(1)} MB`);
  // Each call ended with the fault (500) or, when the service closed the socket while the client
  // was still writing, with that write's error; none was read whole.
  for (const ending of endings) assert.ok(["500", "EPIPE", "ECONNRESET"].includes(ending), ending);
  assert.ok(health.length > 0 && health.every((status) => status === "200"), health.join(","));
  health = [];
  assert.equal((await fetch(`${ws.url}/livez`)).status, 200, "alive after it");
});
