import assert from "node:assert/strict";
import { describe, it } from "node:test";
import iconv from "iconv-lite";
import { charsetOf, decodeSoapBody } from "./body-encoding.ts";
import { parseSoapCall } from "./call-reader.ts";
import { SoapParseError, soapRequest } from "./soap.ts";

// "Café Müller – 5 €": é and ü are one byte in windows-1252 (0xE9, 0xFC), – and € are 0x96 and 0x80.
const NAME = "Café Müller – 5 €";
const call = { method: "authenticate", strUserName: NAME, strPassword: "pässwörd" } as const;

function withDeclaration(encoding: string): string {
  return soapRequest(call).replace('encoding="utf-8"', `encoding="${encoding}"`);
}

void describe("decodeSoapBody", () => {
  void it("decodes windows-1252 declared in the XML prolog", () => {
    const bytes = iconv.encode(withDeclaration("windows-1252"), "win1252");
    assert.notEqual(bytes.length, Buffer.byteLength(withDeclaration("windows-1252")), "single-byte encoding");
    const decoded = decodeSoapBody(bytes, "text/xml");
    assert.equal(decoded.encoding, "windows-1252");
    assert.deepEqual(parseSoapCall(decoded.text), call);
  });

  void it("decodes windows-1252 declared in the Content-Type charset, which wins over the prolog", () => {
    const bytes = iconv.encode(soapRequest(call), "win1252");
    const decoded = decodeSoapBody(bytes, 'text/xml; charset="Windows-1252"');
    assert.deepEqual(parseSoapCall(decoded.text), call);
  });

  void it("accepts UTF-16 with a byte order mark, either order, and UTF-16 named without one", () => {
    const text = withDeclaration("utf-16");
    const little = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, "utf-16le")]);
    const big = Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, "utf-16be")]);
    for (const bytes of [little, big])
      assert.deepEqual(parseSoapCall(decodeSoapBody(bytes, "text/xml").text), call);
    // A byte order mark overrides a charset that says otherwise (RFC 7303 §3).
    assert.deepEqual(parseSoapCall(decodeSoapBody(little, "text/xml; charset=utf-8").text), call);
    const bare = iconv.encode(text, "utf-16le");
    assert.deepEqual(parseSoapCall(decodeSoapBody(bare, "text/xml").text), call);
  });

  void it("decodes UTF-8 by default and strips its byte order mark", () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(soapRequest(call), "utf8")]);
    assert.deepEqual(parseSoapCall(decodeSoapBody(bytes, undefined).text), call);
  });

  void it("refuses bytes that are not valid in the declared encoding, naming it", () => {
    const latin = iconv.encode(soapRequest(call), "win1252");
    assert.throws(() => decodeSoapBody(latin, "text/xml; charset=utf-8"), {
      name: "SoapParseError",
      message: /not valid UTF-8/,
    });
    assert.throws(() => decodeSoapBody(latin, "text/xml"), /not valid UTF-8/);
    // 0x81 is not assigned in windows-1252.
    const unassigned = Buffer.concat([
      iconv.encode(withDeclaration("windows-1252"), "win1252"),
      Buffer.from([0x81]),
    ]);
    assert.throws(() => decodeSoapBody(unassigned, "text/xml"), /not characters in windows-1252/);
    assert.throws(() => decodeSoapBody(Buffer.from([0xff, 0xfe, 0x3c]), "text/xml"), /odd number of bytes/);
    assert.throws(
      () => decodeSoapBody(latin, "text/xml; charset=klingon"),
      (err: unknown) => {
        return (
          err instanceof SoapParseError &&
          err.message.includes('"klingon"') &&
          err.faultCode === "soap:Client"
        );
      },
    );
  });
});

void describe("charsetOf", () => {
  void it("reads quoted and bare charset parameters", () => {
    assert.equal(charsetOf("text/xml; charset=UTF-8"), "utf-8");
    assert.equal(charsetOf('text/xml;charset="windows-1252"; action=x'), "windows-1252");
    assert.equal(charsetOf("text/xml"), null);
    assert.equal(charsetOf(undefined), null);
  });
});
