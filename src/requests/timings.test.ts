import assert from "node:assert/strict";
import { test } from "node:test";
import {
  formatServerTiming,
  requestTimings,
  serverTimingMetrics,
  type RequestStamps,
  type ServerTimingMetric,
} from "./timings.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Admission at T0 + 100, the session opened at +2100, handed over at +2600, answered at +5600. */
const settled: RequestStamps = {
  createdAtMs: T0 + 100,
  connectorAskedAtMs: T0 + 2100,
  sentAtMs: T0 + 2600,
  completedAtMs: T0 + 5600,
};

const durations = (metrics: ServerTimingMetric[]) =>
  Object.fromEntries(metrics.map((m) => [m.name, m.durMs]));

test("a settled Request: the wait is cut where the Web Connector opened the session that took it", () => {
  assert.deepEqual(requestTimings(settled), {
    queuedMs: 2500,
    connectorMs: 2000,
    ledgerMs: 3000,
    totalMs: 5500,
  });
});

test("a session open before admission: connectorMs is 0 and the whole wait is queue", () => {
  const timings = requestTimings({ ...settled, connectorAskedAtMs: T0 - 60_000 });
  assert.equal(timings.connectorMs, 0);
  assert.equal(timings.queuedMs, 2500);
});

test("a queued Request: every figure is null", () => {
  assert.deepEqual(
    requestTimings({ createdAtMs: T0, connectorAskedAtMs: null, sentAtMs: null, completedAtMs: null }),
    { queuedMs: null, connectorMs: null, ledgerMs: null, totalMs: null },
  );
});

test("a sent Request: queued and connector known, ledger and total not yet", () => {
  assert.deepEqual(requestTimings({ ...settled, completedAtMs: null }), {
    queuedMs: 2500,
    connectorMs: 2000,
    ledgerMs: null,
    totalMs: null,
  });
});

test("a Request that ended unsent: queuedMs is its whole life, no connector part, no ledger", () => {
  assert.deepEqual(
    requestTimings({ createdAtMs: T0, connectorAskedAtMs: null, sentAtMs: null, completedAtMs: T0 + 900 }),
    { queuedMs: 900, connectorMs: null, ledgerMs: null, totalMs: 900 },
  );
});

test("a Request handed over before the stamp existed: connectorMs null, the rest as before", () => {
  const timings = requestTimings({ ...settled, connectorAskedAtMs: null });
  assert.deepEqual(timings, { queuedMs: 2500, connectorMs: null, ledgerMs: 3000, totalMs: 5500 });
});

test("a sync call: the four parts add up to the call's wall time, and match the Request's timings", () => {
  // The call arrived 100 ms before admission and its answer left 40 ms after the Request settled.
  const metrics = serverTimingMetrics({ kind: "request", stamps: settled }, T0, T0 + 5640);
  assert.deepEqual(durations(metrics), { queue: 500, connector: 2000, ledger: 3000, svc: 140 });
  const timings = requestTimings(settled);
  assert.equal((durations(metrics).queue ?? 0) + (durations(metrics).connector ?? 0), timings.queuedMs);
  assert.equal(durations(metrics).ledger, timings.ledgerMs);
  const sum = metrics.reduce((total, m) => total + (m.durMs ?? 0), 0);
  assert.equal(sum, 5640);
});

test("a replayed settled Request: its parts are the original run's and svc is this call's whole time", () => {
  const metrics = serverTimingMetrics({ kind: "request", stamps: settled }, T0 + 90_000, T0 + 90_012);
  assert.deepEqual(durations(metrics), { queue: 500, connector: 2000, ledger: 3000, svc: 12 });
});

test("an async answer (202): the wait so far is one queue figure, connector and ledger unknown", () => {
  const queued = { createdAtMs: T0 + 3, connectorAskedAtMs: null, sentAtMs: null, completedAtMs: null };
  const metrics = serverTimingMetrics({ kind: "request", stamps: queued }, T0, T0 + 10);
  assert.deepEqual(durations(metrics), { queue: 7, connector: null, ledger: null, svc: 3 });
  assert.match(metrics[0]?.desc ?? "", /so far/);
});

test("a sync call that timed out after the hand-over: ledger so far, up to the call's end", () => {
  const sent = { ...settled, completedAtMs: null };
  const metrics = serverTimingMetrics({ kind: "request", stamps: sent }, T0, T0 + 9100);
  assert.deepEqual(durations(metrics), { queue: 500, connector: 2000, ledger: 6500, svc: 100 });
  assert.match(metrics[2]?.desc ?? "", /no answer yet/);
});

test("a mirror answer and a call without a Request carry svc alone, the other names with the reason", () => {
  for (const source of [{ kind: "mirror" }, { kind: "none" }] as const) {
    const metrics = serverTimingMetrics(source, T0, T0 + 25);
    assert.deepEqual(durations(metrics), { queue: null, connector: null, ledger: null, svc: 25 });
  }
  assert.match(formatServerTiming(serverTimingMetrics({ kind: "mirror" }, T0, T0 + 25)), /mirror/);
});

test("no description needs escaping: none holds a comma, a semicolon, a quote or a backslash", () => {
  const stamps: RequestStamps[] = [
    settled,
    { ...settled, completedAtMs: null },
    { ...settled, connectorAskedAtMs: null },
    { createdAtMs: T0, connectorAskedAtMs: null, sentAtMs: null, completedAtMs: null },
    { createdAtMs: T0, connectorAskedAtMs: null, sentAtMs: null, completedAtMs: T0 + 1 },
  ];
  const sources = [
    ...stamps.map((s) => ({ kind: "request" as const, stamps: s })),
    { kind: "mirror" as const },
    { kind: "none" as const },
  ];
  for (const source of sources) {
    for (const metric of serverTimingMetrics(source, T0, T0 + 10_000)) {
      assert.doesNotMatch(metric.desc, /[,;"\\]/, `${source.kind} ${metric.name}: ${metric.desc}`);
    }
  }
});

test('the header\'s syntax: name;dur=…;desc="…" per metric, a metric without a figure has no dur', () => {
  assert.equal(
    formatServerTiming([
      { name: "queue", durMs: 5, desc: "in the session" },
      { name: "connector", durMs: null, desc: 'known "later"' },
    ]),
    'queue;dur=5;desc="in the session", connector;desc="known later"',
  );
});
