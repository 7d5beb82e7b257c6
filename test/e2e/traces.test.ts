import assert from "node:assert/strict";
import { test } from "node:test";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { FakeClock } from "../../src/platform/clock.ts";
import { exportingTo } from "../../src/platform/tracing-sdk.ts";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { openTestStore } from "../../src/testing/harness.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import { startWebhookReceiver } from "../../src/testing/webhook-receiver.ts";
import { E2E_CONFIG, READ, bringOnline, customerAdd, eventually, json, passthroughPath } from "./helpers.ts";
import { pointedAt } from "./processes.ts";
import { SYSTEM_CONFIG, endpointFor, ofType } from "./webhook-helpers.ts";

/**
 * Traces (issue 28 item 4, decision 0048): with an in-memory exporter, through HTTP, the SOAP
 * connector and the simulator, on whichever store the suite runs. One trace per Request, joined to
 * the caller's `traceparent`: the HTTP call, admission, the wait, the queue, the hand-over in the
 * connector session (on another instance too), the application and the settling answer; a webhook
 * delivery of its event continues it and sends it on. Off: nothing is stored or sent.
 */
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

/** The spans of the caller's trace, by name (each name once: a second one fails the test). */
function byName(spans: readonly ReadableSpan[]): Map<string, ReadableSpan> {
  const named = new Map<string, ReadableSpan>();
  for (const span of spans) {
    if (span.spanContext().traceId !== CALLER_TRACE) continue;
    assert.ok(!named.has(span.name), `one ${span.name} span`);
    named.set(span.name, span);
  }
  return named;
}

function span(named: Map<string, ReadableSpan>, name: string): ReadableSpan {
  const found = named.get(name);
  assert.ok(found, `a ${name} span (have: ${[...named.keys()].join(", ")})`);
  return found;
}

const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;

/** Waits until the HTTP call's server span (ended just after its answer left) is exported. */
async function untilSpan(exporter: InMemorySpanExporter, name: string): Promise<void> {
  await eventually(`the ${name} span`, async () =>
    exporter.getFinishedSpans().some((s) => s.name === name && s.spanContext().traceId === CALLER_TRACE),
  );
}

async function storedTraceparent(sys: System, requestId: string): Promise<string | null> {
  const row = await sys.deps.db
    .selectFrom("requests")
    .select("traceparent")
    .where("id", "=", requestId)
    .executeTakeFirstOrThrow();
  return row.traceparent;
}

test("a sync typed call is one trace under the caller's traceparent: HTTP, admission, wait, queue, hand-over, application, settle", async (t) => {
  const exporter = new InMemorySpanExporter();
  const sys = await startSystem(t, { ...E2E_CONFIG, tracing: exportingTo(exporter) });
  const eu = await sys.connectEndUser({ companyName: "Traced Co" });
  await bringOnline(sys, eu);
  const res = await sys.call("GET", "/v1/ledger-desktop/customers?limit=1", {
    endUserId: eu.endUserId,
    headers: { traceparent: TRACEPARENT },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const requestId = res.headers.get("svc-request-id") ?? "";
  assert.match(requestId, /^req_/);
  const http = "GET /v1/ledger-desktop/customers";
  await untilSpan(exporter, http);

  const named = byName(exporter.getFinishedSpans());
  const call = span(named, http);
  assert.equal(parentOf(call), CALLER_SPAN, "the HTTP call joins the caller's span");
  assert.equal(call.attributes["http.route"], "/v1/ledger-desktop/customers");
  assert.equal(call.attributes["http.response.status_code"], 200);
  const callId = call.spanContext().spanId;
  const steps = [
    "request.admission",
    "request.wait",
    "request.queued",
    "connector.hand_over",
    "ledger.application",
    "request.settle",
  ];
  for (const name of steps) {
    const step = span(named, name);
    assert.equal(parentOf(step), callId, `${name} is a child of the HTTP call`);
    assert.equal(step.attributes["ledger_bridge.request.id"], requestId, `${name} names the Request`);
  }
  assert.deepEqual([...named.keys()].sort(), [http, ...steps].sort(), "nothing else in the trace");
  assert.equal(
    span(named, "connector.hand_over").attributes["ledger_bridge.instance.id"],
    sys.deps.instanceId,
  );
  assert.equal(
    span(named, "request.admission").attributes["ledger_bridge.operation"],
    "ledger.customers.list",
  );
  // The Request carries its trace, for any instance that hands it over later.
  assert.equal(await storedTraceparent(sys, requestId), `00-${CALLER_TRACE}-${callId}-01`);
});

test("a Request handed over by another instance lands in the same trace", async (t) => {
  const { store, drop } = await openTestStore();
  const closing: Array<() => Promise<void>> = [];
  // In this order: the connector, the instances, then their store.
  t.after(async () => {
    for (const close of closing.reverse()) await close();
    await store.close();
    await drop();
  });
  const clock = new FakeClock(Date.now());
  const config = { ...E2E_CONFIG.config, CONNECTOR_HOLD_MS: "150" };
  const onA = new InMemorySpanExporter();
  const onB = new InMemorySpanExporter();
  const a = await startSystem(null, { store, clock, config, tracing: exportingTo(onA) });
  closing.push(() => a.close());
  const b = await startSystem(null, { store, clock, config, tracing: exportingTo(onB) });
  closing.push(() => b.close());
  // The end user is set up through A; its Web Connector talks to B only.
  const eu = await a.connectEndUser({ companyName: "Two Instances Traced Co" });
  const connector = new SimulatedWebConnector({
    qwc: pointedAt(eu.connectorQwc, b.url),
    password: eu.password,
    application: eu.ledger,
    noOpPauseMs: 20,
  });
  closing.push(() => connector.stop());
  connector.start();
  await eventually("the connection is online through B", async () => {
    const body = await json<{ integrationConnections: { status: string }[] }>(
      await a.call("GET", `/v1/end-users/${eu.endUserId}`),
    );
    return body.integrationConnections[0]?.status === "online";
  });

  const res = await a.call("POST", passthroughPath(eu.endUserId), {
    body: READ,
    headers: { traceparent: TRACEPARENT },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const requestId = res.headers.get("svc-request-id") ?? "";
  const http = "POST /v1/end-users/:id/passthrough/:integrationSlug";
  await untilSpan(onA, http);

  const fromA = byName(onA.getFinishedSpans());
  const fromB = byName(onB.getFinishedSpans());
  const call = span(fromA, http);
  assert.equal(parentOf(call), CALLER_SPAN);
  const callId = call.spanContext().spanId;
  for (const name of ["request.admission", "request.wait"]) assert.equal(parentOf(span(fromA, name)), callId);
  for (const name of ["request.queued", "connector.hand_over", "ledger.application", "request.settle"]) {
    assert.ok(!fromA.has(name), `${name} is not A's`);
    const step = span(fromB, name);
    assert.equal(parentOf(step), callId, `${name} on B continues A's HTTP call`);
    assert.equal(step.attributes["ledger_bridge.request.id"], requestId);
    assert.equal(step.attributes["ledger_bridge.instance.id"], b.deps.instanceId);
  }
});

test("a webhook delivery of a Request's event carries the Request's trace to the receiver", async (t) => {
  const exporter = new InMemorySpanExporter();
  const sys = await startSystem(t, { ...SYSTEM_CONFIG, tracing: exportingTo(exporter) });
  const receiver = await startWebhookReceiver(t);
  await endpointFor(sys, receiver.url, { eventTypes: ["request.*"] });
  const eu = await sys.connectEndUser({ companyName: "Traced Hooks Co" });
  await bringOnline(sys, eu);
  const res = await sys.call("POST", passthroughPath(eu.endUserId), {
    body: READ,
    headers: { traceparent: TRACEPARENT, prefer: "respond-async" },
  });
  assert.equal(res.status, 202, await res.clone().text());
  const requestId = (await json<{ id: string }>(res)).id;
  await receiver.waitFor("request.succeeded", (r) => ofType(r, "request.succeeded").length === 1);
  const [webhook] = ofType(receiver.received, "request.succeeded");
  assert.ok(webhook);
  assert.equal(webhook.event.data.id, requestId);
  const sent = String(webhook.headers.traceparent ?? "");
  const [, traceId, spanId] = sent.split("-");
  assert.equal(traceId, CALLER_TRACE, `the receiver sees the Request's trace (${sent})`);

  await untilSpan(exporter, "webhook.delivery");
  const named = byName(exporter.getFinishedSpans());
  const delivery = span(named, "webhook.delivery");
  assert.equal(delivery.spanContext().spanId, spanId, "the header names the delivery's span");
  const call = span(named, "POST /v1/end-users/:id/passthrough/:integrationSlug");
  assert.equal(parentOf(delivery), call.spanContext().spanId, "a child of the Request's HTTP call");
  assert.equal(delivery.attributes["ledger_bridge.event.type"], "request.succeeded");
  assert.equal(delivery.attributes["http.response.status_code"], 200);
  assert.ok(!named.has("request.wait"), "an async caller does not wait");
});

test("a write whose answer was lost stays in its trace: interrupted, then recovered by the next query", async (t) => {
  const exporter = new InMemorySpanExporter();
  const sys = await startSystem(t, { ...E2E_CONFIG, tracing: exportingTo(exporter) });
  const eu = await sys.connectEndUser({ companyName: "Traced Recovery Co" });
  await bringOnline(sys, eu);
  eu.connector.setFault({ kind: "send_again_without_answer", match: "write" });
  const res = await sys.call("POST", passthroughPath(eu.endUserId), {
    body: customerAdd("Traced Lost Ltd"),
    headers: { traceparent: TRACEPARENT, prefer: "respond-async" },
  });
  assert.equal(res.status, 202, await res.clone().text());
  const requestId = (await json<{ id: string }>(res)).id;
  const done = await eventually("recovered", async () => {
    const r = await json<{ status: string; recovered: boolean }>(
      await sys.call("GET", `/v1/requests/${requestId}`),
    );
    return r.status === "succeeded" ? r : null;
  });
  assert.equal(done.recovered, true);
  await untilSpan(exporter, "request.recovery");

  const named = byName(exporter.getFinishedSpans());
  const callId = span(named, "POST /v1/end-users/:id/passthrough/:integrationSlug").spanContext().spanId;
  for (const name of [
    "request.admission",
    "request.queued",
    "connector.hand_over",
    "request.interrupted",
    "request.recovery",
  ]) {
    const step = span(named, name);
    assert.equal(parentOf(step), callId, `${name} is a child of the HTTP call`);
    assert.equal(step.attributes["ledger_bridge.request.id"], requestId);
  }
  assert.match(
    String(span(named, "request.interrupted").attributes["ledger_bridge.detail"]),
    /answer was lost/,
  );
  assert.ok(!named.has("request.settle"), "no answer was received for it");
});

test("off (no OTEL_* configured): calls and webhooks work, nothing is stored or sent", async (t) => {
  const sys = await startSystem(t, SYSTEM_CONFIG);
  assert.equal(sys.deps.tracing, undefined);
  const receiver = await startWebhookReceiver(t);
  await endpointFor(sys, receiver.url, { eventTypes: ["request.*"] });
  const eu = await sys.connectEndUser({ companyName: "Untraced Co" });
  await bringOnline(sys, eu);
  const sync = await sys.call("POST", passthroughPath(eu.endUserId), {
    body: READ,
    headers: { traceparent: TRACEPARENT },
  });
  assert.equal(sync.status, 200, await sync.clone().text());
  const async = await sys.call("POST", passthroughPath(eu.endUserId), {
    body: READ,
    headers: { traceparent: TRACEPARENT, prefer: "respond-async" },
  });
  assert.equal(async.status, 202);
  const asyncId = (await json<{ id: string }>(async)).id;
  await receiver.waitFor("request.succeeded", (r) => ofType(r, "request.succeeded").length === 1);
  const [webhook] = ofType(receiver.received, "request.succeeded");
  assert.equal(webhook?.event.data.id, asyncId);
  assert.equal(webhook.headers.traceparent, undefined, "no traceparent sent");
  assert.equal(await storedTraceparent(sys, sync.headers.get("svc-request-id") ?? ""), null);
  assert.equal(await storedTraceparent(sys, asyncId), null);
});
