import assert from "node:assert/strict";
import { test } from "node:test";
import type { BeginSessionOptions, BeginSessionResult } from "../../src/simulator/application.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  advanceUntil,
  READ,
  bringOnline,
  eventually,
  json,
  newestRequestIs,
  queueAsync,
  stopConnector,
} from "./helpers.ts";
import { readRequest, untilStatus } from "./waiting-helpers.ts";

/**
 * Issue 28, item 3 (decision 0047): where a call's time went, told the same way by the answer's
 * `Server-Timing` header and by the Request's `timings`/`durationMs`. The service's clock only moves
 * when the test moves it, so every figure is known exactly: the connector is stopped while the
 * call is admitted (connector), its session first runs another Request (queue), and the
 * application holds the call's message until the test lets it answer (ledger).
 */

interface Timings {
  queuedMs: number | null;
  connectorMs: number | null;
  ledgerMs: number | null;
  totalMs: number | null;
}

/** The header's metrics by name: `dur` (null when absent) and `desc`. */
function parseServerTiming(header: string | null): Map<string, { dur: number | null; desc: string }> {
  assert.ok(header !== null, "the answer carries Server-Timing");
  const metrics = new Map<string, { dur: number | null; desc: string }>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().split(";");
    const dur = params.find((p) => p.startsWith("dur="))?.slice(4);
    const desc = params.find((p) => p.startsWith("desc="))?.slice(5) ?? "";
    assert.ok(name !== undefined && /^[a-z]+$/.test(name), `a metric name: ${part}`);
    metrics.set(name, { dur: dur === undefined ? null : Number(dur), desc: desc.replace(/^"|"$/g, "") });
  }
  return metrics;
}

/**
 * Holds every message set the application is given until the test releases it: `arrived` counts
 * those that reached it, `release()` lets the oldest held one be processed.
 */
function holdApplication(sys: System): { arrived: () => number; release: () => void } {
  const gates: Array<() => void> = [];
  let arrived = 0;
  const begin = sys.ledger.beginSession.bind(sys.ledger);
  sys.ledger.beginSession = async (options: BeginSessionOptions): Promise<BeginSessionResult> => {
    const begun = await begin(options);
    if (begun.ok) {
      const process = begun.session.processRequest.bind(begun.session);
      begun.session.processRequest = async (xml: string) => {
        arrived += 1;
        await new Promise<void>((resolve) => gates.push(resolve));
        return process(xml);
      };
    }
    return begun;
  };
  return {
    arrived: () => arrived,
    release: () => (gates.shift() ?? assert.fail("a message set is held"))(),
  };
}

test("a sync call's Server-Timing and its Request's timings tell the same connector, queue and ledger time", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const clock = sys.fakeClock ?? assert.fail("a fake clock");
  const eu = await sys.connectEndUser({ companyName: "Stopwatch Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const held = holdApplication(sys);

  // Ahead in the queue: a passthrough (it goes alone, so the call below waits for its own set).
  const ahead = await queueAsync(sys, eu.endUserId, READ);
  const startedAt = clock.now();
  const pending = sys.call("GET", "/v1/ledger-desktop/customers?limit=2", {
    endUserId: eu.endUserId,
    headers: { "svc-timeout-seconds": "60" },
  });
  await newestRequestIs(sys, "queued");

  // 4 s with no connector to ask.
  await clock.advance(4000);
  void eu.connector.runSession();
  await eventually("the passthrough reached the application", async () => held.arrived() === 1);
  // 1.5 s in the session behind the passthrough, which the application then answers.
  await clock.advance(1500);
  held.release();
  await untilStatus(sys, ahead, "succeeded");
  // The call's own message set: the application answers 2.5 s after it was handed over.
  await eventually("the call reached the application", async () => held.arrived() === 2);
  await clock.advance(2500);
  held.release();

  const res = await pending;
  const text = await res.clone().text();
  assert.equal(res.status, 200, text);
  const endedAt = clock.now();
  const metrics = parseServerTiming(res.headers.get("server-timing"));
  assert.deepEqual([...metrics.keys()], ["queue", "connector", "ledger", "svc"]);
  const dur = (name: string) => metrics.get(name)?.dur ?? assert.fail(`${name} has a figure`);
  assert.equal(dur("connector"), 4000, "waiting for the Web Connector to ask");
  assert.equal(dur("queue"), 1500, "behind the passthrough in the session");
  assert.equal(dur("ledger"), 2500, "the application");
  assert.equal(dur("svc"), 0, "the service's own work took no time on a clock that stood still");
  assert.equal(
    dur("connector") + dur("queue") + dur("ledger") + dur("svc"),
    endedAt - startedAt,
    "the parts add up to the call's wall time",
  );

  const id = res.headers.get("svc-request-id") ?? assert.fail("a Request ID");
  const stored = (await readRequest(sys, id)) as unknown as { durationMs: number; timings: Timings };
  assert.deepEqual(stored.timings, { queuedMs: 5500, connectorMs: 4000, ledgerMs: 2500, totalMs: 8000 });
  assert.equal(stored.durationMs, 8000);
  assert.equal(stored.timings.queuedMs, dur("connector") + dur("queue"), "queuedMs = connector + queue");
  assert.equal(stored.timings.ledgerMs, dur("ledger"));
  assert.equal(stored.timings.totalMs, dur("connector") + dur("queue") + dur("ledger"));

  // The passthrough ahead: its session opened 4 s after it was queued; it was handed over at once.
  const first = (await readRequest(sys, ahead)) as unknown as { timings: Timings };
  assert.deepEqual(first.timings, { queuedMs: 4000, connectorMs: 4000, ledgerMs: 1500, totalMs: 5500 });
});

test("an async call (202) says what is known; a call into a warm session has no connector time", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const clock = sys.fakeClock ?? assert.fail("a fake clock");
  const eu = await sys.connectEndUser({ companyName: "Warm Co" });
  // The session is open (its sendRequestXML held) before the call; the application stalls.
  await bringOnline(sys, eu);
  eu.ledger.setFault({ kind: "not_responding" });

  const accepted = await sys.call("GET", "/v1/ledger-desktop/customers?limit=1", {
    endUserId: eu.endUserId,
    headers: { prefer: "respond-async" },
  });
  assert.equal(accepted.status, 202, await accepted.clone().text());
  const metrics = parseServerTiming(accepted.headers.get("server-timing"));
  assert.deepEqual([...metrics.keys()], ["queue", "connector", "ledger", "svc"]);
  assert.equal(metrics.get("svc")?.dur, 0);
  assert.equal(metrics.get("ledger")?.dur, null, "not handed over when the 202 left");
  const { id } = await json<{ id: string }>(accepted);

  await untilStatus(sys, id, "sent");
  await clock.advance(700);
  eu.ledger.setFault(null);
  await untilStatus(sys, id, "succeeded");
  const done = (await readRequest(sys, id)) as unknown as { durationMs: number; timings: Timings };
  assert.deepEqual(done.timings, { queuedMs: 0, connectorMs: 0, ledgerMs: 700, totalMs: 700 });
  assert.equal(done.durationMs, 700);

  // The Request retrieved later is not an application operation: no Server-Timing on it.
  const retrieved = await sys.call("GET", `/v1/requests/${id}`);
  assert.equal(retrieved.headers.get("server-timing"), null);
});

test("a sync call that times out after the hand-over (504) carries the application's time so far", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const clock = sys.fakeClock ?? assert.fail("a fake clock");
  const eu = await sys.connectEndUser({ companyName: "Stalled Co" });
  await bringOnline(sys, eu);
  eu.ledger.setFault({ kind: "not_responding" });
  const startedAt = clock.now();
  const pending = sys.call("GET", "/v1/ledger-desktop/customers?limit=1", {
    endUserId: eu.endUserId,
    headers: { "svc-timeout-seconds": "5" },
  });
  const res = await advanceUntil(sys, pending, 1000, 60);
  const text = await res.clone().text();
  assert.equal(res.status, 504, text);
  const { error } = await json<{ error: { code: string; details: { requestId: string } } }>(res);
  assert.equal(error.code, "LEDGER_REQUEST_TIMEOUT", text);
  const metrics = parseServerTiming(res.headers.get("server-timing"));
  assert.deepEqual([...metrics.keys()], ["queue", "connector", "ledger", "svc"]);
  assert.match(metrics.get("ledger")?.desc ?? "", /no answer yet/);
  const stored = (await readRequest(sys, error.details.requestId)) as unknown as {
    sentAt: string;
    timings: Timings;
  };
  assert.equal(stored.timings.ledgerMs, null, "the Request has no answer yet");
  assert.equal(stored.timings.connectorMs, 0, "the session was open before the call");
  const dur = (name: string) => metrics.get(name)?.dur ?? assert.fail(`${name} has a figure`);
  assert.equal(dur("connector"), 0);
  assert.equal(dur("queue"), stored.timings.queuedMs);
  // The wait ended at the caller's deadline, 5 s after the call began (or at a later step of the
  // clock, while the answer was being written): the application's part runs from the hand-over.
  const sentAfter = Date.parse(stored.sentAt) - startedAt;
  assert.ok(dur("ledger") >= 5000 - sentAfter, `ledger so far ${dur("ledger")} ms`);
  assert.ok(
    dur("connector") + dur("queue") + dur("ledger") + dur("svc") >= 5000,
    "the parts cover the call, which lasted until the caller's deadline at least",
  );
  eu.ledger.setFault(null);
  await untilStatus(sys, error.details.requestId, "succeeded");
});
