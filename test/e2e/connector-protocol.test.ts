import assert from "node:assert/strict";
import { test } from "node:test";
import iconv from "iconv-lite";
import { TEXTS } from "../../src/connector/session.ts";
import { soapAction, soapRequest } from "../../src/connector/soap.ts";
import { SimulatedWebConnector, type SessionReport } from "../../src/simulator/web-connector.ts";
import { SoapByHand } from "../../src/testing/soap-by-hand.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  customerAdd,
  eventually,
  json,
  passthroughPath,
  stopConnector,
  type RequestResource,
} from "./helpers.ts";

/**
 * The connector protocol's edge cases end to end: the API, the SOAP endpoint and the simulated Web
 * Connector and company file, over HTTP.
 */

async function requestById(
  sys: System,
  id: string,
): Promise<RequestResource & { error: { code: string; integrationCode: string | null } | null }> {
  return json(await sys.call("GET", `/v1/requests/${id}`));
}

async function queueAsync(sys: System, endUserId: string, body: string): Promise<string> {
  const res = await sys.call("POST", passthroughPath(endUserId), {
    body,
    headers: { prefer: "respond-async" },
  });
  assert.equal(res.status, 202, await res.clone().text());
  return (await json<RequestResource>(res)).id;
}

/** A promise that must settle within `ms` (real time), else the test fails naming `what`. */
async function within<T>(what: string, ms: number, pending: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function lastReport(connector: SimulatedWebConnector): SessionReport | undefined {
  const ended = connector.events.filter((e) => e.type === "session_ended");
  const last = ended.at(-1);
  return last?.type === "session_ended" ? last.report : undefined;
}

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
  const report = await within("the replaced session's end", 5000, held);
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

test("the application failing mid-session reaches the caller with its code; the connector stops with the reason", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Dialog Co" });
  await bringOnline(sys, eu);
  sys.ledger.setFault({ kind: "modal_dialog" });
  const res = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
  assert.equal(res.status, 503, await res.clone().text());
  const body = await json<{ error: { code: string; integrationCode: string } }>(res);
  assert.equal(body.error.code, "LEDGER_MODAL_DIALOG_OPEN");
  assert.equal(body.error.integrationCode, "0x80040414");
  const report = await eventually("the session ended", async () => lastReport(eu.connector));
  assert.equal(report.outcome, "closed_with_error");
  assert.match(report.message, /dialog window is open.*0x80040414/);
});

test("after connectionError a sync call fails fast with the connection's error", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Closed App Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  sys.ledger.setFault({ kind: "app_not_running" });
  await queueAsync(sys, eu.endUserId, READ); // a reason for the next check-in to open a session
  const report = await eu.connector.runSession();
  assert.equal(report.outcome, "connection_failed");
  const connectionErrors = eu.connector.calls.filter((c) => c.call.method === "connectionError");
  assert.equal(connectionErrors.length, 1, "no retry when no other company file path can help");
  // No check-in happens meanwhile and the service clock stands still: only a fast failure answers.
  const res = await within(
    "the sync call's answer",
    5000,
    sys.call("POST", passthroughPath(eu.endUserId), { body: READ }),
  );
  assert.equal(res.status, 503, await res.clone().text());
  const body = await json<{ error: { code: string; integrationCode: string } }>(res);
  assert.equal(body.error.code, "LEDGER_CANNOT_START");
  assert.equal(body.error.integrationCode, "0x80040408");
});

test("a windows-1252 body reaches the service as text (company name from the first sendRequestXML)", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Encoding Co" });
  const ticket = await SoapByHand.for(sys, eu).ticket();
  const hcp =
    '<?xml version="1.0" ?><QBXML><QBXMLMsgsRs><CompanyQueryRs statusCode="0"><CompanyRet>' +
    "<CompanyName>Café Müller – Söhne</CompanyName></CompanyRet></CompanyQueryRs></QBXMLMsgsRs></QBXML>";
  const envelope = soapRequest({
    method: "sendRequestXML",
    ticket,
    strHCPResponse: hcp,
    strCompanyFileName: eu.companyFilePath,
    qbXMLCountry: "US",
    qbXMLMajorVers: "13",
    qbXMLMinorVers: "0",
  }).replace('encoding="utf-8"', 'encoding="windows-1252"');
  const res = await fetch(`${sys.url}/connector`, {
    method: "POST",
    headers: { "content-type": "text/xml", soapaction: soapAction("sendRequestXML") },
    body: new Uint8Array(iconv.encode(envelope, "win1252")),
  });
  assert.equal(res.status, 200, await res.text());
  const user = await json<{ integrationConnections: { companyFile: { companyName: string } | null }[] }>(
    await sys.call("GET", `/v1/end-users/${eu.endUserId}`),
  );
  assert.equal(user.integrationConnections[0]?.companyFile?.companyName, "Café Müller – Söhne");
});
