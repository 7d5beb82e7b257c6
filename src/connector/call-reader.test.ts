import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { findReference, needReference } from "../testing/references.ts";
import { BodyDecoder } from "./body-encoding.ts";
import { SoapCallReader, parseSoapCall } from "./call-reader.ts";
import { SOAP_METHODS, SoapParseError, soapRequest, type SoapCall, type SoapMethod } from "./soap.ts";

/**
 * The streaming call reader (decision 0031): whatever pieces a body arrives in, the call read is
 * the same, and a body that is not a call is refused at its first wrong element, before the rest of
 * it has been read.
 */
const ENVELOPES = process.env["LEDGER_CONNECTOR_ENVELOPES_DIR"] ?? findReference("envelopes");

/** Reads `text` in the given pieces (with saxes alone when `general`). */
function readInPieces(text: string, cuts: readonly number[], general = false): SoapCall {
  const reader = general ? new SoapCallReader(undefined, { general: true }) : new SoapCallReader();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    reader.write(text.slice(at, cut));
    at = cut;
  }
  reader.write(text.slice(at));
  return reader.end();
}

const TEXT = fc.string({ unit: "grapheme", maxLength: 40 });

function callFor(method: SoapMethod, a: string, b: string): SoapCall {
  switch (method) {
    case "serverVersion":
      return { method };
    case "clientVersion":
      return { method, strVersion: a };
    case "authenticate":
      return { method, strUserName: a, strPassword: b };
    case "sendRequestXML":
      return {
        method,
        ticket: a,
        strHCPResponse: `<?xml version="1.0"?><QBXML><x>${b}</x></QBXML>`,
        strCompanyFileName: "C:\\Files\\Company.QBW",
        qbXMLCountry: "US",
        qbXMLMajorVers: "16",
        qbXMLMinorVers: "0",
      };
    case "receiveResponseXML":
      return { method, ticket: a, response: `<r>${b}</r>`, hresult: "", message: b };
    case "connectionError":
      return { method, ticket: a, hresult: "0x80040408", message: b };
    case "getLastError":
    case "closeConnection":
    case "getServerVersion":
      return { method, ticket: a };
    case "getInteractiveURL":
      return { method, wcTicket: a, sessionID: b };
    case "interactiveDone":
      return { method, wcTicket: a };
    case "interactiveRejected":
      return { method, wcTicket: a, reason: b };
  }
}

/** What the whole text parses to; "" text reads as "" after the reader's whitespace rule. */
function expected(call: SoapCall): SoapCall {
  return parseSoapCall(soapRequest(call));
}

void describe("SoapCallReader", () => {
  void it("reads the same call whatever pieces the body arrives in", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SOAP_METHODS),
        TEXT,
        TEXT,
        fc.array(fc.nat(), { maxLength: 12 }),
        (method, a, b, cuts) => {
          const call = callFor(method, a, b);
          const text = soapRequest(call);
          assert.deepEqual(
            readInPieces(
              text,
              cuts.map((cut) => cut % (text.length + 1)),
            ),
            expected(call),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  void it("reads every reference request envelope byte by byte as a whole", (t) => {
    const dir = needReference(t, { what: "the reference envelopes", path: ENVELOPES, hint: "" });
    if (dir === null) return;
    const names = readdirSync(dir).filter((name) => name.includes(".request."));
    assert.ok(names.length >= 13);
    for (const name of names) {
      const bytes: Buffer = readFileSync(join(dir, name));
      const decoder = new BodyDecoder("text/xml; charset=utf-8");
      const reader = new SoapCallReader();
      for (const byte of bytes) reader.write(decoder.write(Uint8Array.of(byte)));
      reader.write(decoder.end());
      assert.deepEqual(reader.end(), parseSoapCall(bytes.toString("utf8")), name);
    }
  });

  void it("refuses a body that is not a call at its first wrong element, before the rest is read", () => {
    const junkStarts = [
      "<html><body>",
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><authenticate xmlns="http://developer.intuit.com/"><x/><x/>',
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><dropTables xmlns="http://developer.intuit.com/">',
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><authenticate xmlns="http://developer.intuit.com/"><strUserName><b>',
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><getLastError xmlns="http://developer.intuit.com/"/><getLastError xmlns="http://developer.intuit.com/"/>',
      "<!DOCTYPE x [<!ENTITY a 'b'>]>",
    ];
    for (const start of junkStarts) {
      const reader = new SoapCallReader();
      // Only the start has been read: no end, no closing tags, and the refusal comes already.
      assert.throws(() => reader.write(start), SoapParseError, start);
    }
  });

  void it("keeps no text of elements it skips, and shows the ticket as soon as it has been read", () => {
    const reader = new SoapCallReader();
    reader.write(
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header><h:T xmlns:h="urn:h">',
    );
    reader.write("header text ".repeat(1000));
    reader.write('</h:T></s:Header><s:Body><receiveResponseXML xmlns="http://developer.intuit.com/">');
    assert.equal(reader.ticket, null);
    assert.equal(reader.methodName, "receiveResponseXML");
    reader.write("<ticket>abc</ticket>");
    assert.equal(reader.ticket, "abc", "known before the rest of the call");
    reader.write("<response>&lt;a/&gt;</response></receiveResponseXML></s:Body></s:Envelope>");
    assert.deepEqual(reader.end(), {
      method: "receiveResponseXML",
      ticket: "abc",
      response: "<a/>",
      hresult: "",
      message: "",
    });
  });

  void it("the purpose-built tokenizer reads the reference envelopes into the calls saxes reads", (t) => {
    const dir = needReference(t, { what: "the reference envelopes", path: ENVELOPES, hint: "" });
    if (dir === null) return;
    let byTokens = 0;
    const names = readdirSync(dir).filter((name) => name.includes(".request."));
    for (const name of names) {
      const text: string = readFileSync(join(dir, name), "utf8");
      for (const body of [text, text.replace(/\r\n/g, "\n")] as const) {
        const reader = new SoapCallReader();
        reader.write(body);
        assert.deepEqual(reader.end(), generalRead(body, [body.length]), name);
        if (reader.readByTokens) byTokens += 1;
      }
    }
    assert.ok(byTokens >= names.length, `the tokenizer read ${byTokens} of ${names.length * 2}`);
  });

  void it("the tokenizer and saxes read the same call, or refuse it alike, whatever the pieces", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SOAP_METHODS),
        TEXT,
        TEXT,
        fc.nat(),
        fc.constantFrom(
          "",
          "<",
          ">",
          "&",
          "&amp;",
          "&#65;",
          "\r\n",
          "<!-- c -->",
          "<![CDATA[x]]>",
          "<x/>",
          "</x>",
          '"',
          " a='1'",
          "]]>",
          "\u0001",
          "xmlns:p='urn:p'",
        ),
        fc.nat({ max: 4 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (method, a, b, position, insert, removed, cuts) => {
          const whole = soapRequest(callFor(method, a, b));
          const at = position % (whole.length + 1);
          const body = whole.slice(0, at) + insert + whole.slice(at + removed);
          const pieces = cuts.map((cut) => cut % (body.length + 1));
          assert.deepEqual(
            outcome(() => readInPieces(body, pieces)),
            outcome(() => generalRead(body, pieces)),
            body,
          );
        },
      ),
      { numRuns: 1500 },
    );
  });

  void it("the tokenizer reads a large answer as it arrives, in pieces, without saxes", () => {
    const answer = `<?xml version="1.0" ?>\n<QBXML><QBXMLMsgsRs><InvoiceQueryRs statusCode="0">${"<InvoiceRet><TxnID>1-2</TxnID><Memo>a &amp; b &lt;c&gt;</Memo></InvoiceRet>".repeat(3000)}</InvoiceQueryRs></QBXMLMsgsRs></QBXML>`;
    const body = soapRequest({
      method: "receiveResponseXML",
      ticket: "t",
      response: answer,
      hresult: "",
      message: "",
    });
    const reader = new SoapCallReader();
    for (let at = 0; at < body.length; at += 4093) reader.write(body.slice(at, at + 4093));
    const call = reader.end();
    assert.ok(reader.readByTokens);
    assert.deepEqual(call, generalRead(body, [body.length]));
    assert.equal((call as { response: string }).response, answer);
  });
});

/** The call as saxes alone reads it, in the given pieces. */
const generalRead = (text: string, cuts: readonly number[]): SoapCall => readInPieces(text, cuts, true);

/** What reading gives: the call, or the refusal's kind and message. */
function outcome(read: () => SoapCall): unknown {
  try {
    return { call: read() };
  } catch (error) {
    if (!(error instanceof SoapParseError)) throw error;
    return { refused: error.message, fault: error.faultCode };
  }
}
