import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { XMLParser } from "fast-xml-parser";
import { createClientAsync } from "soap";
import type { ApplicationSession } from "../../src/simulator/application.ts";
import { parseQwc } from "../../src/simulator/qwc.ts";
import { findReference, needReference } from "../../src/testing/references.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { E2E_CONFIG, READ, newestRequestIs, passthroughPath, queueAsync, requestById } from "./helpers.ts";

/**
 * Whole connector sessions driven by clients we did not write against our endpoint: a SOAP client
 * generated at run time by the `soap` package from the connector's published WSDL, and envelopes
 * copied from the captures of the real connector (`envelopes/` beside that WSDL) with only the
 * ticket, credentials and embedded document replaced. The accounting application's side is the
 * simulated company file, answering the documents these clients carry.
 */

const WSDL = findReference("QBWebConnectorSvc.wsdl");
const ENVELOPES = WSDL === undefined ? undefined : join(WSDL, "..", "envelopes");

/** The reference rule for this file's material: skipped outside CI when absent, failed under CI. */
const needs = {
  wsdl: (t: TestContext): boolean =>
    needReference(t, { what: "the connector's published WSDL", path: WSDL }) !== null,
  envelopes: (t: TestContext): boolean =>
    needReference(t, { what: "the connector's captured envelopes", path: ENVELOPES }) !== null,
};

/** The application the end user runs: a session on their company file, opened with their `.qwc`. */
async function application(sys: System, eu: ConnectedEndUser): Promise<ApplicationSession> {
  const qwc = parseQwc(eu.connectorQwc);
  const opened = await sys.ledger.beginSession({
    companyFilePath: eu.companyFilePath,
    appName: qwc.appName,
    ownerId: qwc.ownerId,
    fileId: qwc.fileId,
    stampFileId: true,
  });
  assert.ok(opened.ok, "the company file opens");
  return opened.session;
}

async function answer(app: ApplicationSession, xml: string): Promise<string> {
  const result = await app.processRequest(xml);
  assert.ok(result.ok, JSON.stringify(result));
  return result.response;
}

// ---- client 1: generated from the published WSDL by the `soap` package ------------------------

type Operation = (args: Record<string, unknown>) => Promise<[Record<string, unknown> | null, string]>;

/** The generated client, with each operation typed as what it is: arguments in, result object out. */
async function generatedClient(
  endpoint: string,
): Promise<(method: string, args?: Record<string, unknown>) => Promise<unknown>> {
  const client = (await createClientAsync(WSDL ?? "", { endpoint })) as unknown as Record<string, Operation>;
  return async (method, args = {}) => {
    const operation = client[`${method}Async`];
    assert.ok(operation, `the WSDL declares ${method}`);
    const [result] = await operation(args);
    return result?.[`${method}Result`] ?? "";
  };
}

test("a client generated from the published WSDL runs whole sessions against the endpoint", async (t: TestContext) => {
  if (!needs.wsdl(t)) return;
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Generated Client Co" });
  const call = await generatedClient(`${sys.url}/connector`);
  const app = await application(sys, eu);
  const { userName } = parseQwc(eu.connectorQwc);
  const authenticate = async (): Promise<string[]> => {
    const result = (await call("authenticate", { strUserName: userName, strPassword: eu.password })) as {
      string: string[] | string;
    };
    return Array.isArray(result.string) ? result.string : [result.string];
  };
  const send = async (ticket: string, hcp: string): Promise<string> =>
    String(
      await call("sendRequestXML", {
        ticket,
        strHCPResponse: hcp,
        strCompanyFileName: app.companyFilePath,
        qbXMLCountry: "US",
        qbXMLMajorVers: 16,
        qbXMLMinorVers: 0,
      }),
    );

  await t.test(
    "the first session adopts the company file: serverVersion → … → getLastError → close",
    async () => {
      assert.match(String(await call("serverVersion", { strVersion: "" })), /ledger-bridge/);
      assert.equal(await call("clientVersion", { strVersion: "2.3.0.215" }), "");
      const [ticket, companyFile] = await authenticate();
      assert.ok(ticket);
      assert.equal(companyFile ?? "", "", "no file remembered yet: the one open is used");
      // Nothing to do: the held call ends empty, getLastError says pause, and the session closes.
      assert.equal(await send(ticket, app.hostCompanyPreferencesXml()), "");
      assert.equal(await call("getLastError", { ticket }), "NoOp");
      assert.equal(await call("closeConnection", { ticket }), "OK");
    },
  );

  await t.test(
    "a sync call is carried: authenticate → sendRequestXML → receiveResponseXML → close",
    async () => {
      const caller = sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
      await newestRequestIs(sys, "queued");
      const [ticket, companyFile] = await authenticate();
      assert.ok(ticket);
      assert.equal(companyFile, app.companyFilePath, "the adopted file is named");
      const document = await send(ticket, app.hostCompanyPreferencesXml());
      assert.match(document, /<CustomerQueryRq>/);
      const progress = await call("receiveResponseXML", {
        ticket,
        response: await answer(app, document),
        hresult: "",
        message: "",
      });
      assert.equal(Number(progress), 50);
      const res = await caller;
      assert.equal(res.status, 200, await res.clone().text());
      assert.match(await res.text(), /<CustomerQueryRs [^>]*statusCode="0"/);
      assert.equal(await send(ticket, ""), "");
      assert.equal(await call("getLastError", { ticket }), "NoOp");
      assert.equal(await call("closeConnection", { ticket }), "OK");
    },
  );

  await t.test("a ticket the service ended is told so, so the client stops", async () => {
    const [first] = await authenticate();
    const [second] = await authenticate();
    assert.ok(first && second && first !== second);
    assert.equal(await send(first, ""), "");
    const reason = String(await call("getLastError", { ticket: first }));
    assert.notEqual(reason, "NoOp");
    assert.match(reason, /replaced by a newer one/);
    assert.ok(
      Number(await call("receiveResponseXML", { ticket: first, response: "", hresult: "", message: "" })) < 0,
    );
    assert.equal(await call("closeConnection", { ticket: first }), reason);
    assert.equal(await call("closeConnection", { ticket: second }), "OK");
  });

  await t.test(
    "an error HRESULT fails the request with its code and ends the session with the reason",
    async () => {
      const id = await queueAsync(sys, eu.endUserId, READ);
      const [ticket] = await authenticate();
      assert.ok(ticket);
      assert.match(await send(ticket, app.hostCompanyPreferencesXml()), /<CustomerQueryRq>/);
      const result = await call("receiveResponseXML", {
        ticket,
        response: "",
        hresult: "0x80040414",
        message: "A modal dialog box is showing.",
      });
      assert.ok(Number(result) < 0, `negative, got ${String(result)}`);
      const reason = String(await call("getLastError", { ticket }));
      assert.match(reason, /dialog window is open.*0x80040414/);
      assert.equal(await call("closeConnection", { ticket }), reason);
      const failed = await requestById(sys, id);
      assert.equal(failed.status, "failed");
      assert.equal(failed.error?.code, "LEDGER_MODAL_DIALOG_OPEN");
      assert.equal(failed.error?.integrationCode, "0x80040414");
    },
  );
});

// ---- client 2: the connector's own captured envelopes ---------------------------------------

const resultParser = new XMLParser({ removeNSPrefix: true, parseTagValue: false, ignoreAttributes: true });

/** Posts a captured envelope as the connector does and reads `<method>Result` independently of our codec. */
async function postCapture(url: string, method: string, body: string): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "text/xml; charset=utf-8",
      soapaction: `"http://developer.intuit.com/${method}"`,
    },
    body,
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const parsed = resultParser.parse(text) as { Envelope: { Body: Record<string, Record<string, unknown>> } };
  return parsed.Envelope.Body[`${method}Response`]?.[`${method}Result`] ?? "";
}

function capture(name: string): string {
  return readFileSync(join(ENVELOPES ?? "", name), "utf8").trimEnd();
}

const withTicket = (envelope: string, ticket: string): string =>
  envelope.replace(/<ticket>[^<]*<\/ticket>/, `<ticket>${ticket}</ticket>`);

/** Escapes a document into text content by hand (independently of the codec under test). */
const escaped = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

test("the connector's captured envelopes run whole sessions against the endpoint", async (t: TestContext) => {
  if (!needs.envelopes(t)) return;
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Captured Envelopes Co" });
  const url = `${sys.url}/connector`;
  const app = await application(sys, eu);
  const { userName } = parseQwc(eu.connectorQwc);
  const authenticate = async (): Promise<string> => {
    const body = capture("03_authenticate.request.xml")
      .replace("<strUserName>username</strUserName>", `<strUserName>${userName}</strUserName>`)
      .replace("<strPassword>password</strPassword>", `<strPassword>${eu.password}</strPassword>`);
    const result = (await postCapture(url, "authenticate", body)) as { string: string[] };
    const ticket = result.string[0];
    assert.ok(ticket && result.string[1] !== "none" && result.string[1] !== "nvu", JSON.stringify(result));
    return ticket;
  };
  const firstSend = async (ticket: string): Promise<string> =>
    String(
      await postCapture(
        url,
        "sendRequestXML",
        withTicket(capture("04_sendRequestXML.request.first-call-with-HCP.xml"), ticket),
      ),
    );

  await t.test("the first session adopts the company file", async () => {
    assert.ok(
      String(await postCapture(url, "serverVersion", capture("01_serverVersion.request.VERBATIM.xml")))
        .length > 0,
    );
    assert.equal(await postCapture(url, "clientVersion", capture("02_clientVersion.request.xml")), "");
    const ticket = await authenticate();
    assert.equal(await firstSend(ticket), "");
    assert.equal(
      await postCapture(url, "getLastError", withTicket(capture("06_getLastError.request.xml"), ticket)),
      "NoOp",
    );
    assert.equal(
      await postCapture(
        url,
        "closeConnection",
        withTicket(capture("08_closeConnection.request.xml"), ticket),
      ),
      "OK",
    );
  });

  await t.test("a session with an answer, a pause and a close", async () => {
    const id = await queueAsync(sys, eu.endUserId, READ);
    const ticket = await authenticate();
    const document = await firstSend(ticket);
    assert.match(
      document,
      /<\?qbxml version="13\.0"\?>[\s\S]*<CustomerQueryRq>/,
      "the captured processor level (13.0) is used",
    );
    const wire = withTicket(
      capture("05_receiveResponseXML.request.receive-payment-add.wire.xml"),
      ticket,
    ).replace(
      /<response>[\s\S]*<\/response>/,
      `<response>${escaped(await answer(app, document))}</response>`,
    );
    assert.equal(await postCapture(url, "receiveResponseXML", wire), "50");
    assert.equal((await requestById(sys, id)).status, "succeeded");
    const next = withTicket(capture("04_sendRequestXML.request.subsequent-call.xml"), ticket);
    assert.equal(await postCapture(url, "sendRequestXML", next), "");
    assert.equal(
      await postCapture(url, "getLastError", withTicket(capture("06_getLastError.request.xml"), ticket)),
      "NoOp",
    );
    assert.equal(
      await postCapture(
        url,
        "closeConnection",
        withTicket(capture("08_closeConnection.request.xml"), ticket),
      ),
      "OK",
    );
  });

  await t.test("the captured parse-error HRESULT fails the request and stops the session", async () => {
    const id = await queueAsync(sys, eu.endUserId, READ);
    const ticket = await authenticate();
    assert.match(await firstSend(ticket), /<CustomerQueryRq>/);
    const failure = withTicket(capture("05_receiveResponseXML.request.hresult-0x80040400.xml"), ticket);
    assert.ok(Number(await postCapture(url, "receiveResponseXML", failure)) < 0);
    assert.match(
      String(
        await postCapture(url, "getLastError", withTicket(capture("06_getLastError.request.xml"), ticket)),
      ),
      /0x80040400/,
    );
    const failed = await requestById(sys, id);
    assert.equal(failed.error?.code, "LEDGER_REQUEST_ERROR");
    assert.equal(failed.error?.integrationCode, "0x80040400");
  });

  await t.test("after the captured connectionError the ticket is dead: no NoOp loop", async () => {
    await queueAsync(sys, eu.endUserId, READ);
    const ticket = await authenticate();
    assert.equal(
      await postCapture(
        url,
        "connectionError",
        withTicket(capture("07_connectionError.request.xml"), ticket),
      ),
      "done",
    );
    const next = withTicket(capture("04_sendRequestXML.request.subsequent-call.xml"), ticket);
    assert.equal(await postCapture(url, "sendRequestXML", next), "");
    const reason = String(
      await postCapture(url, "getLastError", withTicket(capture("06_getLastError.request.xml"), ticket)),
    );
    assert.notEqual(reason, "NoOp");
    assert.match(reason, /0x80040408/);
    assert.equal(
      await postCapture(
        url,
        "closeConnection",
        withTicket(capture("08_closeConnection.request.xml"), ticket),
      ),
      reason,
    );
  });
});
