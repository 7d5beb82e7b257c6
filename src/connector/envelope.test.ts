import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSoapCall } from "./call-reader.ts";
import { SoapParseError, soapRequest } from "./soap.ts";

const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const CONNECTOR = "http://developer.intuit.com/";

function envelope(body: string, { soap = SOAP11, header = "" } = {}): string {
  return `<?xml version="1.0"?><s:Envelope xmlns:s="${soap}">${header}<s:Body>${body}</s:Body></s:Envelope>`;
}

function faultOf(body: string): { code: string; message: string } {
  try {
    parseSoapCall(body);
  } catch (err) {
    assert.ok(err instanceof SoapParseError, String(err));
    return { code: err.faultCode, message: err.message };
  }
  assert.fail("parsed without a fault");
}

void describe("parseSoapCall namespaces", () => {
  void it("reads the operation by namespace, whatever the prefixes", () => {
    const body = envelope(`<c:getLastError xmlns:c="${CONNECTOR}"><c:ticket>t1</c:ticket></c:getLastError>`);
    assert.deepEqual(parseSoapCall(body), { method: "getLastError", ticket: "t1" });
    const defaulted = envelope(`<getLastError xmlns="${CONNECTOR}"><ticket>t2</ticket></getLastError>`);
    assert.deepEqual(parseSoapCall(defaulted), { method: "getLastError", ticket: "t2" });
  });

  void it("faults an operation in no namespace or another namespace, naming both", () => {
    const missing = faultOf(envelope("<getLastError><ticket>t</ticket></getLastError>"));
    assert.equal(missing.code, "soap:Client");
    assert.match(
      missing.message,
      /<getLastError> must be in the namespace http:\/\/developer\.intuit\.com\/ \(found no namespace\)/,
    );
    const other = faultOf(
      envelope('<getLastError xmlns="http://example.test/ws"><ticket>t</ticket></getLastError>'),
    );
    assert.match(other.message, /found http:\/\/example\.test\/ws/);
  });

  void it("faults a parameter outside the connector namespace instead of ignoring it", () => {
    const body = envelope(`<c:getLastError xmlns:c="${CONNECTOR}"><ticket>t</ticket></c:getLastError>`);
    assert.match(faultOf(body).message, /parameter <ticket> of getLastError must be in the namespace/);
  });

  void it("faults an undeclared prefix, an unknown method and a repeated parameter", () => {
    assert.match(faultOf(envelope("<x:getLastError />")).message, /prefix "x" .* is not declared/);
    assert.match(
      faultOf(envelope(`<dropTables xmlns="${CONNECTOR}" />`)).message,
      /Unknown method dropTables/,
    );
    const twice = envelope(
      `<getLastError xmlns="${CONNECTOR}"><ticket>a</ticket><ticket>b</ticket></getLastError>`,
    );
    assert.match(faultOf(twice).message, /More than one <ticket>/);
  });

  void it("answers a SOAP 1.2 envelope with a VersionMismatch fault naming SOAP 1.2", () => {
    const fault = faultOf(envelope(`<getLastError xmlns="${CONNECTOR}" />`, { soap: SOAP12 }));
    assert.equal(fault.code, "soap:VersionMismatch");
    assert.match(fault.message, /SOAP 1\.2 envelope/);
    const unknown = faultOf(envelope(`<getLastError xmlns="${CONNECTOR}" />`, { soap: "urn:not-soap" }));
    assert.equal(unknown.code, "soap:VersionMismatch");
    assert.equal(
      faultOf(`<Envelope><Body><getLastError xmlns="${CONNECTOR}"/></Body></Envelope>`).code,
      "soap:VersionMismatch",
    );
  });

  void it("faults a header entry that must be understood, and ignores one that need not be", () => {
    const header = (flag: string): string =>
      `<s:Header><h:Trace xmlns:h="urn:h" s:mustUnderstand="${flag}">x</h:Trace></s:Header>`;
    const call = `<getLastError xmlns="${CONNECTOR}"><ticket>t</ticket></getLastError>`;
    const fault = faultOf(envelope(call, { header: header("1") }));
    assert.equal(fault.code, "soap:MustUnderstand");
    assert.match(fault.message, /<Trace>/);
    assert.deepEqual(parseSoapCall(envelope(call, { header: header("0") })), {
      method: "getLastError",
      ticket: "t",
    });
  });

  void it("still reads the connector's own envelopes", () => {
    const wire = soapRequest({
      method: "receiveResponseXML",
      ticket: "t",
      response: "<a/>",
      hresult: "",
      message: "",
    });
    assert.deepEqual(parseSoapCall(wire), {
      method: "receiveResponseXML",
      ticket: "t",
      response: "<a/>",
      hresult: "",
      message: "",
    });
    const nil = wire.replace(
      "<hresult />",
      '<hresult xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true" />',
    );
    assert.equal((parseSoapCall(nil) as { hresult: string }).hresult, "");
  });
});
