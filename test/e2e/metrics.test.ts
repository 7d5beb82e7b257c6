import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { pino } from "pino";
import { startMetricsServer } from "../../src/platform/metrics-server.ts";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  customerAdd,
  eventually,
  passthroughPath,
  queueAsync,
  stopConnector,
} from "./helpers.ts";

/**
 * Prometheus metrics on their own listener (issue 8 §3): after a round trip through the simulated
 * connector the counters and the hand-over histogram moved, the gauges match the stored state
 * (queue depth per status, open sessions), a sweep is counted, the API's port has no /metrics,
 * and settled requests are logged with the request, end user and connection IDs.
 */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? "").split(",").filter(Boolean);
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(match[3]);
  }
  return null;
}

test("metrics follow a round trip, the queue, the sessions and the sweep; logs carry the IDs", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const lines: Record<string, unknown>[] = [];
  sys.deps.logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  const server = await startMetricsServer(sys.deps.metrics, 0, "127.0.0.1");
  t.after(() => server.close());
  const scrape = async (): Promise<string> => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    return res.text();
  };

  const eu = await sys.connectEndUser({ companyName: "Metrics Co" });
  await bringOnline(sys, eu);
  const ok = await sys.call("POST", passthroughPath(eu.endUserId), { body: customerAdd("Counted Ltd") });
  assert.equal(ok.status, 200);
  let text = await scrape();
  assert.equal(
    sample(text, "ledger_bridge_request_outcomes_total", {
      status: "succeeded",
      outcome: "applied",
      code: "none",
    }),
    1,
  );
  assert.equal(sample(text, "ledger_bridge_request_handover_seconds_count"), 1);
  assert.ok((sample(text, "ledger_bridge_connector_check_ins_total", { result: "session" }) ?? 0) >= 1);
  // The answer came back through receiveResponseXML after a sendRequestXML handed the request out;
  // the connector's next sendRequestXML may still be on its way, so it is not counted on here.
  assert.ok((sample(text, "ledger_bridge_connector_calls_total", { method: "sendRequestXML" }) ?? 0) >= 1);
  assert.ok(
    (sample(text, "ledger_bridge_connector_calls_total", { method: "receiveResponseXML" }) ?? 0) >= 1,
  );
  assert.equal(sample(text, "ledger_bridge_connector_sessions_open", { scope: "here" }), 1);
  assert.equal(sample(text, "ledger_bridge_connector_sessions_open", { scope: "all" }), 1);
  assert.equal(sample(text, "ledger_bridge_connections", { status: "online" }), 1);

  // Queue depth per status: two reads wait while the connector is away.
  await stopConnector(sys, eu);
  await queueAsync(sys, eu.endUserId, READ);
  const canceled = await queueAsync(sys, eu.endUserId, READ);
  assert.equal((await sys.call("POST", `/v1/requests/${canceled}/cancel`)).status, 200);
  text = await scrape();
  assert.equal(sample(text, "ledger_bridge_requests", { status: "queued" }), 1);
  assert.equal(
    sample(text, "ledger_bridge_request_outcomes_total", {
      status: "canceled",
      outcome: "not_applicable",
      code: "REQUEST_CANCELED",
    }),
    1,
  );
  assert.equal(sample(text, "ledger_bridge_connector_sessions_open", { scope: "all" }), 0);

  // One sweep interval of the service clock: one sweep counted.
  assert.equal(sample(text, "ledger_bridge_sweep_runs_total", { result: "ok" }), null);
  await sys.fakeClock?.advance(sys.deps.config.SWEEP_INTERVAL_MS);
  await eventually(
    "the sweep ended",
    async () => sample(await scrape(), "ledger_bridge_sweep_runs_total", { result: "ok" }) !== null,
  );
  assert.equal(sample(await scrape(), "ledger_bridge_sweep_runs_total", { result: "ok" }), 1);

  // Not on the API's port; nothing but GET /metrics on the metrics port.
  assert.equal((await fetch(`${sys.url}/metrics`)).status, 404);
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/`)).status, 404);

  const settled = lines.filter((l) => l.msg === "request settled");
  assert.equal(settled.length, 2);
  for (const line of settled) {
    assert.match(String(line.requestId), /^req_/);
    assert.equal(line.endUserId, eu.endUserId);
    assert.equal(line.connectionId, eu.connectionId);
  }
});
