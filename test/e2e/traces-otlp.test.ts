import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { test } from "node:test";
import { freePort } from "../../src/testing/system.ts";
import { eventually } from "./helpers.ts";
import { call, createProjectByCli, setUpEndUser, startService, workspace } from "./processes.ts";
import { SimulatedLedgerApplication } from "../../src/simulator/ledger/index.ts";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";

/**
 * Traces as an operator turns them on (decision 0048): `npm start`'s entry point with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` sends the spans of a Request over OTLP/HTTP to the collector's
 * `/v1/traces` (a graceful stop flushes what the batch processor still holds).
 */
const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const TRACEPARENT = `00-${CALLER_TRACE}-b7ad6b7169203331-01`;

test("OTEL_EXPORTER_OTLP_ENDPOINT: a call's spans reach the collector over OTLP/HTTP, the service stops cleanly", async (t) => {
  const posts: Array<{ path: string; type: string; body: Buffer }> = [];
  const collector = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      posts.push({
        path: request.url ?? "",
        type: String(request.headers["content-type"]),
        body: Buffer.concat(chunks),
      });
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => collector.listen(port, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => collector.close(() => resolve())));

  const ws = await workspace(t, {
    SIMULATOR: "off",
    CONNECTOR_HOLD_MS: "2000",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
  });
  const service = await startService(t, ws);
  const keys = await createProjectByCli(ws, "Traced");
  const { endUserId, qwc, password } = await setUpEndUser(ws, keys, "Traced Co");
  const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0" });
  const path = "C:\\Company Files\\Traced Co.qbw";
  ledger.createCompanyFile(path, { companyName: "Traced Co", seed: "sample" });
  ledger.openCompanyFile(path);
  const connector = new SimulatedWebConnector({ qwc, password, application: ledger, noOpPauseMs: 20 });
  t.after(() => connector.stop());
  connector.start();
  await eventually("the connection is online", async () => {
    const res = await call(ws, keys.secretLive, "GET", `/v1/end-users/${endUserId}`);
    const body = (await res.json()) as { integrationConnections: { status: string }[] };
    return body.integrationConnections[0]?.status === "online";
  });
  const res = await call(ws, keys.secretLive, "GET", "/v1/ledger-desktop/customers?limit=1", {
    endUserId,
    headers: { traceparent: TRACEPARENT },
  });
  assert.equal(res.status, 200, await res.text());
  await connector.stop();
  assert.equal(await service.stop(), 0);

  const traces = posts.filter((p) => p.path === "/v1/traces");
  assert.ok(traces.length > 0, "spans were posted to /v1/traces");
  const spans: Array<{ service: unknown; traceId: string; name: string }> = [];
  for (const post of traces) {
    assert.equal(post.type, "application/json", "OTLP/HTTP with JSON bodies (http/json)");
    const body = JSON.parse(post.body.toString("utf8")) as OtlpBody;
    for (const rs of body.resourceSpans) {
      const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue;
      for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ service, ...s });
    }
  }
  const names = spans.filter((s) => s.traceId === CALLER_TRACE).map((s) => s.name);
  for (const name of [
    "GET /v1/ledger-desktop/customers",
    "request.admission",
    "connector.hand_over",
    "request.settle",
  ])
    assert.ok(names.includes(name), `${name} exported in the caller's trace (have: ${names.join(", ")})`);
  assert.ok(
    spans.every((s) => s.service === "ledger-bridge"),
    "service.name is OTEL_SERVICE_NAME's default",
  );
});

interface OtlpBody {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans: Array<{ spans: Array<{ traceId: string; name: string }> }>;
  }>;
}
