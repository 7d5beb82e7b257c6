import assert from "node:assert/strict";
import { test } from "node:test";
import iconv from "iconv-lite";
import { soapAction, soapRequest } from "../../src/connector/soap.ts";
import { SoapByHand } from "../../src/testing/soap-by-hand.ts";
import { startSystem } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  eventually,
  json,
  lastReport,
  passthroughPath,
  queueAsync,
  stopConnector,
  within,
} from "./helpers.ts";

/**
 * Failures the connector reports, end to end: the application failing instead of answering,
 * connectionError, and a body in windows-1252.
 */

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
    30_000,
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
