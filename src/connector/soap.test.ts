import assert from "node:assert/strict";
import { parseSoapCall } from "./call-reader.ts";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { XMLValidator } from "fast-xml-parser";
import {
  SOAP_METHODS,
  SoapFaultError,
  SoapParseError,
  escapeDropping,
  escapeXmlText,
  parseSoapResponse,
  soapFault,
  soapRequest,
  soapResponse,
  type SoapCall,
  type SoapMethod,
} from "./soap.ts";
import { findReference, needReference } from "../testing/references.ts";
import { wsdlDocument } from "./wsdl.ts";

// Reference captures are read in place: they are research material, not repository fixtures.
// The folder is found by name so that no vendor name has to appear in our sources.
const ENVELOPES = process.env["LEDGER_CONNECTOR_ENVELOPES_DIR"] ?? findReference("envelopes");

/** Whether the reference envelopes are there (the reference rule: skipped outside CI, failed under CI). */
function needEnvelopes(t: TestContext): boolean {
  const dir = needReference(t, {
    what: "the connector's reference envelopes (envelopes/)",
    path: ENVELOPES,
    hint: "set LEDGER_CONNECTOR_ENVELOPES_DIR",
  });
  return dir !== null;
}
const TICKET = "{9c4a3e3b-0f5e-4d0b-9a55-3f8f2f5b2c11}";

function envelope(name: string): string {
  return readFileSync(join(ENVELOPES ?? "", name), "utf8");
}

/** Text inside `<name>…</name>` exactly as it sits on the wire, decoded by hand, independently of the codec. */
function wireText(body: string, name: string): string {
  const start = body.indexOf(`<${name}>`);
  const end = body.indexOf(`</${name}>`);
  assert.ok(start >= 0 && end > start, `no <${name}> in capture`);
  return body
    .slice(start + name.length + 2, end)
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

/** The company file named by the captures. */
const company = (): string =>
  wireText(envelope("04_sendRequestXML.request.subsequent-call.xml"), "strCompanyFileName");

void describe("parseSoapCall on the reference request envelopes", () => {
  void it("reads every *.request.* file in the reference folder", (t) => {
    if (!needEnvelopes(t)) return;
    const requests = readdirSync(ENVELOPES ?? "").filter((name) => name.includes(".request."));
    assert.ok(requests.length >= 13);
    for (const name of requests) {
      const call = parseSoapCall(envelope(name));
      assert.ok(SOAP_METHODS.includes(call.method), name);
      assert.ok(name.includes(call.method), `${name} parsed as ${call.method}`);
    }
  });

  void it("accepts the connector's parameterless serverVersion, and one with strVersion", (t) => {
    if (!needEnvelopes(t)) return;
    assert.deepEqual(parseSoapCall(envelope("01_serverVersion.request.VERBATIM.xml")), {
      method: "serverVersion",
    });
    const withChild = soapRequest({ method: "serverVersion" }).replace(
      '<serverVersion xmlns="http://developer.intuit.com/" />',
      '<serverVersion xmlns="http://developer.intuit.com/"><strVersion>1.0</strVersion></serverVersion>',
    );
    assert.deepEqual(parseSoapCall(withChild), { method: "serverVersion" });
  });

  void it("reads clientVersion, authenticate, getLastError, connectionError, closeConnection", (t) => {
    if (!needEnvelopes(t)) return;
    assert.deepEqual(parseSoapCall(envelope("02_clientVersion.request.xml")), {
      method: "clientVersion",
      strVersion: "2.2.0.71",
    });
    assert.deepEqual(parseSoapCall(envelope("03_authenticate.request.xml")), {
      method: "authenticate",
      strUserName: "username",
      strPassword: "password",
    });
    assert.deepEqual(parseSoapCall(envelope("06_getLastError.request.xml")), {
      method: "getLastError",
      ticket: TICKET,
    });
    assert.deepEqual(parseSoapCall(envelope("07_connectionError.request.xml")), {
      method: "connectionError",
      ticket: TICKET,
      hresult: "0x80040408",
      message: wireText(envelope("07_connectionError.request.xml"), "message"),
    });
    assert.deepEqual(parseSoapCall(envelope("08_closeConnection.request.xml")), {
      method: "closeConnection",
      ticket: TICKET,
    });
  });

  void it("reads sendRequestXML with the host/company/preferences document and with an empty one", (t) => {
    if (!needEnvelopes(t)) return;
    const first = parseSoapCall(envelope("04_sendRequestXML.request.first-call-with-HCP.xml"));
    assert.equal(first.method, "sendRequestXML");
    if (first.method !== "sendRequestXML") return;
    assert.ok(first.strHCPResponse.startsWith('<?xml version="1.0" ?><QBXML><QBXMLMsgsRs><HostQueryRs'));
    assert.equal(
      first.strHCPResponse,
      wireText(envelope("04_sendRequestXML.request.first-call-with-HCP.xml"), "strHCPResponse"),
    );
    assert.ok(XMLValidator.validate(first.strHCPResponse) === true);

    assert.deepEqual(parseSoapCall(envelope("04_sendRequestXML.request.subsequent-call.xml")), {
      method: "sendRequestXML",
      ticket: TICKET,
      strHCPResponse: "",
      strCompanyFileName: company(),
      qbXMLCountry: "US",
      qbXMLMajorVers: "13",
      qbXMLMinorVers: "0",
    });
  });

  void it("reads the verbatim receiveResponseXML captures byte-exactly, including &amp;quot; and the final newline", (t) => {
    if (!needEnvelopes(t)) return;
    const captures = readdirSync(ENVELOPES ?? "").filter((name) => name.endsWith(".wire.xml"));
    assert.equal(captures.length, 4);
    for (const name of captures) {
      const body = envelope(name);
      const call = parseSoapCall(body);
      assert.equal(call.method, "receiveResponseXML", name);
      if (call.method !== "receiveResponseXML") continue;
      assert.equal(call.ticket, "354f40b4-b661-4472-a13f-8abf13a743c3");
      assert.equal(call.response, wireText(body, "response"), name);
      assert.ok(call.response.startsWith('<?xml version="1.0" ?>\n<QBXML>'), name);
      assert.ok(call.response.endsWith("</QBXML>\n"), name);
      assert.equal(call.hresult, "");
      assert.equal(call.message, "");
      // The embedded document is itself well-formed XML once unescaped.
      assert.ok(XMLValidator.validate(call.response) === true, name);
      // Re-serialising gives back the connector's exact bytes.
      assert.equal(soapRequest(call), body.trimEnd(), name);
    }
    const mixed = parseSoapCall(
      envelope("05_receiveResponseXML.request.salesorder-continueOnError-mixed.wire.xml"),
    );
    assert.ok(mixed.method === "receiveResponseXML" && mixed.response.includes("Customer &quot;nonononono"));
  });

  void it("reads receiveResponseXML with an HRESULT and an empty response", (t) => {
    if (!needEnvelopes(t)) return;
    assert.deepEqual(parseSoapCall(envelope("05_receiveResponseXML.request.hresult-0x80040400.xml")), {
      method: "receiveResponseXML",
      ticket: TICKET,
      response: "",
      hresult: "0x80040400",
      message: wireText(envelope("05_receiveResponseXML.request.hresult-0x80040400.xml"), "message"),
    });
  });

  void it("re-serialises every reconstructed request byte-exactly", (t) => {
    if (!needEnvelopes(t)) return;
    for (const name of readdirSync(ENVELOPES ?? "").filter((file) => file.includes(".request."))) {
      const body = envelope(name);
      // The fixture files end with a newline that was not part of the HTTP body.
      assert.equal(soapRequest(parseSoapCall(body)), body.trimEnd(), name);
    }
  });
});

void describe("parseSoapCall edge cases", () => {
  void it("treats <x />, <x></x> and a missing element alike", () => {
    const base = soapRequest({ method: "connectionError", ticket: "t", hresult: "", message: "" });
    assert.ok(base.includes("<hresult /><message />"));
    const expected = { method: "connectionError", ticket: "t", hresult: "", message: "" };
    assert.deepEqual(parseSoapCall(base), expected);
    assert.deepEqual(parseSoapCall(base.replace("<hresult /><message />", "<hresult></hresult>")), expected);
    assert.deepEqual(parseSoapCall(base.replace("<hresult /><message />", "")), expected);
  });

  void it("keeps numbers-looking text as text", () => {
    const call = parseSoapCall(
      soapRequest({ method: "clientVersion", strVersion: "00123" }).replace("00123", "00123"),
    );
    assert.deepEqual(call, { method: "clientVersion", strVersion: "00123" });
  });

  void it("accepts other prefixes, whitespace between elements and a byte order mark", () => {
    const body =
      '\uFEFF<?xml version="1.0"?>\n<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/">\n' +
      '  <SOAP-ENV:Header/>\n  <SOAP-ENV:Body>\n    <ns1:getLastError xmlns:ns1="http://developer.intuit.com/">\n' +
      "      <ns1:ticket>abc</ns1:ticket>\n    </ns1:getLastError>\n  </SOAP-ENV:Body>\n</SOAP-ENV:Envelope>\n";
    assert.deepEqual(parseSoapCall(body), { method: "getLastError", ticket: "abc" });
  });

  void it("throws SoapParseError on garbage, unknown methods and DTDs", () => {
    const bad = [
      "",
      "hello",
      "<a><b>1</b>",
      "<notSoap />",
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body /></soap:Envelope>',
      soapRequest({ method: "getLastError", ticket: "t" }).replace(/getLastError/g, "dropTables"),
      '<!DOCTYPE x [<!ENTITY e "boom">]>' + soapRequest({ method: "getLastError", ticket: "&e;" }),
      soapRequest({ method: "getLastError", ticket: "t" }).replace(
        "<ticket>t</ticket>",
        "<ticket><x>1</x></ticket>",
      ),
    ];
    for (const body of bad) assert.throws(() => parseSoapCall(body), SoapParseError, body);
  });
});

const TRICKY = `a < b && c > "d" 'e' ü € 😀 &amp;quot; ]]> \r\n\t \u007F end`;
const responseDoc = (): string =>
  envelope("05_receiveResponseXML.request.salesorder-continueOnError-mixed.wire.xml");

function trickyCall(method: SoapMethod): SoapCall {
  const doc = wireText(responseDoc(), "response");
  switch (method) {
    case "serverVersion":
      return { method };
    case "clientVersion":
      return { method, strVersion: TRICKY };
    case "authenticate":
      return { method, strUserName: TRICKY, strPassword: "p&ss<word>\"'" };
    case "sendRequestXML":
      return {
        method,
        ticket: TRICKY,
        strHCPResponse: doc,
        strCompanyFileName: company(),
        qbXMLCountry: "US",
        qbXMLMajorVers: "016",
        qbXMLMinorVers: "0",
      };
    case "receiveResponseXML":
      return { method, ticket: "t", response: doc, hresult: "", message: TRICKY };
    case "connectionError":
      return { method, ticket: "t", hresult: "0x80040408", message: TRICKY };
    case "getLastError":
    case "closeConnection":
    case "getServerVersion":
      return { method, ticket: TRICKY };
    case "getInteractiveURL":
      return { method, wcTicket: TRICKY, sessionID: "" };
    case "interactiveDone":
      return { method, wcTicket: TRICKY };
    case "interactiveRejected":
      return { method, wcTicket: "t", reason: TRICKY };
  }
}

void describe("soapRequest → parseSoapCall", () => {
  void it("round-trips every method with tricky text", (t) => {
    if (!needEnvelopes(t)) return;
    for (const method of SOAP_METHODS) {
      const call = trickyCall(method);
      const wire = soapRequest(call);
      assert.ok(wire.startsWith('<?xml version="1.0" encoding="utf-8"?><soap:Envelope'), method);
      assert.ok(!wire.includes("\n<soap:Body>"), "one-line prefix");
      assert.deepEqual(parseSoapCall(wire), call, method);
    }
  });

  void it("drops characters XML 1.0 cannot carry instead of writing a malformed envelope", () => {
    const wire = soapRequest({ method: "clientVersion", strVersion: "a\u0001b\uFFFEc\uD800d" });
    assert.ok(XMLValidator.validate(wire) === true);
    assert.deepEqual(parseSoapCall(wire), { method: "clientVersion", strVersion: "abcd" });
  });

  void it("escapes text on its fast path exactly as the reference (every character class, random mixes)", () => {
    const pieces = [
      "a",
      "é",
      "&",
      "<",
      ">",
      "\r",
      "\n",
      "\t",
      '"',
      "\u0001",
      "\u001F",
      "\u007F",
      "\u0085",
      "\uFFFE",
      "\uFFFF",
      "\uD800",
      "\uDC00",
      "😀",
      "&amp;",
    ];
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: next() % 12 }, () => pieces[next() % pieces.length]).join("");
      assert.equal(escapeXmlText(text), escapeDropping(text), JSON.stringify(text));
    }
    assert.equal(escapeXmlText('<a b="1">x & y\r</a>'), '&lt;a b="1"&gt;x &amp; y&#xD;&lt;/a&gt;');
  });

  void it("writes the embedded document as escaped text with &amp;quot; preserved", () => {
    const doc = '<?xml version="1.0" ?>\n<X a="&quot;q&quot;">1 &amp; 2</X>\n';
    const wire = soapRequest({
      method: "receiveResponseXML",
      ticket: "t",
      response: doc,
      hresult: "",
      message: "",
    });
    assert.ok(
      wire.includes(
        '&lt;X a="&amp;quot;q&amp;quot;"&gt;1 &amp;amp; 2&lt;/X&gt;\n</response><hresult /><message />',
      ),
    );
    const call = parseSoapCall(wire);
    assert.ok(call.method === "receiveResponseXML" && call.response === doc);
  });
});

void describe("soapResponse → parseSoapResponse", () => {
  function resultFor(method: SoapMethod): string | number | string[] {
    if (method === "authenticate") return [TICKET, company(), "", "300"];
    if (method === "receiveResponseXML") return -101;
    if (method === "sendRequestXML") return wireText(responseDoc(), "response");
    return TRICKY;
  }

  void it("round-trips every method", (t) => {
    if (!needEnvelopes(t)) return;
    for (const method of SOAP_METHODS) {
      const result = resultFor(method);
      assert.deepEqual(parseSoapResponse(method, soapResponse(method, result)), result, method);
      const empty = method === "authenticate" ? [] : method === "receiveResponseXML" ? 0 : "";
      assert.deepEqual(parseSoapResponse(method, soapResponse(method, empty)), empty, method);
    }
  });

  void it("writes empty strings self-closing and authenticate as ArrayOfString", () => {
    assert.ok(soapResponse("clientVersion", "").includes("<clientVersionResult />"));
    assert.ok(
      soapResponse("authenticate", ["t", "nvu"]).includes(
        "<authenticateResult><string>t</string><string>nvu</string></authenticateResult>",
      ),
    );
    assert.ok(
      soapResponse("receiveResponseXML", 100).includes(
        "<receiveResponseXMLResult>100</receiveResponseXMLResult>",
      ),
    );
    assert.throws(() => soapResponse("authenticate", "x"), TypeError);
    assert.throws(() => soapResponse("receiveResponseXML", 1.5), TypeError);
  });

  void it("reads the reference response envelopes", (t) => {
    if (!needEnvelopes(t)) return;
    assert.equal(parseSoapResponse("serverVersion", envelope("01_serverVersion.response.xml")), "1.0.0");
    assert.equal(parseSoapResponse("clientVersion", envelope("02_clientVersion.response.xml")), "");
    assert.deepEqual(parseSoapResponse("authenticate", envelope("03_authenticate.response.none.xml")), [
      TICKET,
      "none",
      "",
      "",
    ]);
    assert.deepEqual(parseSoapResponse("authenticate", envelope("03_authenticate.response.nvu.xml")), [
      "",
      "nvu",
    ]);
    assert.deepEqual(parseSoapResponse("authenticate", envelope("03_authenticate.response.work-to-do.xml")), [
      TICKET,
      company(),
    ]);
    assert.equal(
      parseSoapResponse("sendRequestXML", envelope("04_sendRequestXML.response.nothing-to-send.xml")),
      "",
    );
    const request = parseSoapResponse("sendRequestXML", envelope("04_sendRequestXML.response.xml"));
    assert.equal(typeof request, "string");
    assert.ok(
      typeof request === "string" && request.includes('<CustomerQueryRq requestID="1" iterator="Start">'),
    );
    assert.equal(
      parseSoapResponse("receiveResponseXML", envelope("05_receiveResponseXML.response.error.xml")),
      -1,
    );
    assert.equal(
      parseSoapResponse("receiveResponseXML", envelope("05_receiveResponseXML.response.progress-50.xml")),
      50,
    );
    assert.equal(parseSoapResponse("getLastError", envelope("06_getLastError.response.NoOp.xml")), "NoOp");
    assert.equal(
      parseSoapResponse("connectionError", envelope("07_connectionError.response.done.xml")),
      "done",
    );
    assert.equal(parseSoapResponse("closeConnection", envelope("08_closeConnection.response.xml")), "OK");
  });

  void it("reads a single <string> authenticate result as a one-element array", () => {
    assert.deepEqual(parseSoapResponse("authenticate", soapResponse("authenticate", ["only"])), ["only"]);
  });

  void it("raises SoapFaultError for a fault and SoapParseError for a wrong response", () => {
    assert.throws(
      () => parseSoapResponse("getLastError", soapFault("bad <thing> & more")),
      (err: unknown) =>
        err instanceof SoapFaultError &&
        err.message === "bad <thing> & more" &&
        err.faultCode === "soap:Client",
    );
    assert.throws(
      () => parseSoapResponse("getLastError", soapResponse("closeConnection", "OK")),
      SoapParseError,
    );
    assert.throws(
      () =>
        parseSoapResponse(
          "receiveResponseXML",
          soapResponse("closeConnection", "x").replace(/closeConnection/g, "receiveResponseXML"),
        ),
      SoapParseError,
    );
    assert.throws(() => parseSoapResponse("serverVersion", "<html>502</html>"), SoapParseError);
  });

  void it("a fault is well-formed SOAP", () => {
    const fault = soapFault("x");
    assert.ok(XMLValidator.validate(fault) === true);
    assert.ok(fault.includes("<soap:Fault><faultcode>soap:Client</faultcode><faultstring>x</faultstring>"));
  });
});

void describe("wsdlDocument", () => {
  void it("is well-formed and declares every operation with its SOAPAction", () => {
    const wsdl = wsdlDocument('https://example.test/connector?a=1&b="2"');
    assert.ok(XMLValidator.validate(wsdl) === true);
    assert.ok(wsdl.includes('targetNamespace="http://developer.intuit.com/"'));
    assert.ok(wsdl.includes('location="https://example.test/connector?a=1&amp;b=&quot;2&quot;"'));
    for (const method of SOAP_METHODS) {
      assert.ok(wsdl.includes(`soapAction="http://developer.intuit.com/${method}"`), method);
      assert.ok(wsdl.includes(`<s:element name="${method}Response">`), method);
    }
    assert.ok(wsdl.includes('<s:element name="serverVersion">\n        <s:complexType />'));
    assert.ok(wsdl.includes('name="qbXMLMajorVers" type="s:int"'));
    assert.ok(wsdl.includes('name="authenticateResult" type="tns:ArrayOfString"'));
    assert.ok(wsdl.includes('name="wcTicket"'));
    assert.ok(!wsdl.includes('use="encoded"'));
  });
});
