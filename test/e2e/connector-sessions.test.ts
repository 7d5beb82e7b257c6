import assert from "node:assert/strict";
import { test } from "node:test";
import { TEXTS } from "../../src/connector/session.ts";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  customerAdd,
  eventually,
  lastReport,
  passthroughPath,
  queueAsync,
  requestById,
  stopConnector,
  within,
} from "./helpers.ts";

/**
 * Connector sessions end to end (API, SOAP endpoint, simulated Web Connector and company file over
 * HTTP): a replaced session stops its connector, answers lost inside a session, and the clean end of
 * an idle session.
 */

test("a connector whose session the service replaced stops instead of looping on NoOp", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Replaced Co" });
  await bringOnline(sys, eu);
  // Recent traffic keeps the next session open (held) even with nothing queued.
  assert.equal((await sys.call("POST", passthroughPath(eu.endUserId), { body: READ })).status, 200);
  await stopConnector(sys, eu);
  const held = eu.connector.runSession();
  await eventually("the first connector holds", async () => eu.connector.callInFlight === "sendRequestXML");
  // The same registration checking in again (a second computer, or a restarted connector).
  const second = new SimulatedWebConnector({
    qwc: eu.connectorQwc,
    password: eu.password,
    application: sys.ledger,
    noOpPauseMs: 20,
    fileIdStamped: true,
  });
  t.after(() => second.stop());
  void second.runSession();
  const report = await within("the replaced session's end", 30_000, held);
  assert.equal(report.outcome, "closed_with_error");
  assert.equal(report.message, TEXTS.replaced);
  const calls = eu.connector.calls.map((c) => c.call.method);
  assert.deepEqual(calls.slice(-3), ["sendRequestXML", "getLastError", "closeConnection"]);
});

test("an answer lost inside a session: the write is recovered at once, the read fails retryably, the queue moves on", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Lost Inside Co" });
  await bringOnline(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);

  await t.test("write → outcome_unknown → recovered through its message set, applied once", async () => {
    const before = file.count("Customer");
    eu.connector.setFault({ kind: "send_again_without_answer", match: "write" });
    const id = await queueAsync(sys, eu.endUserId, customerAdd("Lost Inside Ltd"));
    const done = await eventually("recovered", async () => {
      const r = await requestById(sys, id);
      return r.status === "succeeded" ? r : null;
    });
    assert.equal(done.recovered, true);
    assert.deepEqual(
      done.timeline.map((e) => e.status),
      ["queued", "sent", "outcome_unknown", "succeeded"],
    );
    assert.equal(file.count("Customer"), before + 1, "applied once");
    // The call after the dropped answer was handed the recovery query, in the same session.
    const events = eu.connector.events;
    const dropped = events.findIndex((e) => e.type === "answer_dropped");
    const next = events.slice(dropped).find((e) => e.type === "call" && e.call.method === "sendRequestXML");
    assert.ok(
      next?.type === "call" && typeof next.result === "string" && next.result.includes("oldMessageSetID"),
    );
    assert.equal(
      events.slice(dropped).filter((e) => e.type === "call" && e.call.method === "authenticate").length,
      0,
    );
  });

  await t.test(
    "read → LEDGER_READ_INTERRUPTED, and the next request is handed over in the same call",
    async () => {
      await stopConnector(sys, eu);
      const first = await queueAsync(sys, eu.endUserId, READ);
      const second = await queueAsync(
        sys,
        eu.endUserId,
        "<AccountQueryRq><MaxReturned>1</MaxReturned></AccountQueryRq>",
      );
      eu.connector.clearEvents();
      eu.connector.setFault({ kind: "send_again_without_answer", match: "read" });
      eu.connector.start();
      const answered = await eventually("the second read answered", async () => {
        const r = await requestById(sys, second);
        return r.status === "succeeded" ? r : null;
      });
      assert.equal(answered.outcome, "not_applicable");
      const interrupted = await requestById(sys, first);
      assert.equal(interrupted.status, "failed");
      assert.equal(interrupted.error?.code, "LEDGER_READ_INTERRUPTED");
      const sends = eu.connector.calls
        .filter((c) => c.call.method === "sendRequestXML")
        .map((c) => (c.type === "call" ? String(c.result) : ""));
      const firstDoc = sends.findIndex((doc) => doc.includes("<CustomerQueryRq>"));
      assert.match(sends[firstDoc + 1] ?? "", /<AccountQueryRq>/, "the very next call got the next request");
    },
  );
});

test("an idle session ends cleanly: closing query, 100, closeConnection, no error shown", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Idle Co" });
  await bringOnline(sys, eu);
  const res = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
  assert.equal(res.status, 200);
  await eventually("held", async () => eu.connector.callInFlight === "sendRequestXML");
  await sys.fakeClock?.advance(sys.deps.config.CONNECTOR_IDLE_CLOSE_MS);
  const report = await eventually("the session ended", async () => lastReport(eu.connector));
  assert.equal(report.outcome, "completed");
  assert.equal(report.message, "OK");
  const calls = eu.connector.calls.map((c) => c.call.method);
  assert.deepEqual(calls.slice(-3), ["sendRequestXML", "receiveResponseXML", "closeConnection"]);
  assert.ok(!calls.slice(-3).includes("getLastError"));
});
