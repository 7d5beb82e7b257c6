import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { handOverDocument } from "../../src/ledger/xml/message-set.ts";
import { findRequestById } from "../../src/store/requests.ts";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { Client, INVALID, assertError, expectStatus, type EndUser } from "./helpers.ts";
import { requestCount } from "./surface.ts";

/**
 * Passthrough XML hardening (issue 6): hostile XML is refused with 400 before anything is queued,
 * and the message handed to the connector is rebuilt from the parsed, validated message, never
 * copied from the caller's bytes.
 */
let h: TestApp;
let client: Client;
let endUser: EndUser;

before(async () => {
  h = await buildTestApp(null, { config: { RATE_LIMIT_MAX: "1000000" } });
  client = new Client(h.app, h.project.keys.secretLive);
  endUser = await client.createEndUser();
});
after(() => h.close());

const path = (): string => `/v1/end-users/${endUser.id}/passthrough/ledger_desktop`;
const QUERY = (inner: string): string => `<CustomerQueryRq>${inner}</CustomerQueryRq>`;
const ADD = (name: string): string =>
  `<CustomerAddRq><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`;

/** Sends the XML both ways (raw body and JSON `{xml}`) and asserts the error and that no Request exists. */
async function refused(
  xml: string,
  code: "PASSTHROUGH_INVALID_XML" | "UNSUPPORTED_CHARACTER",
): Promise<Record<string, unknown>[]> {
  const details: Record<string, unknown>[] = [];
  for (const [param, send] of [
    [
      "body",
      () => client.request("POST", path(), { body: xml, headers: { "content-type": "application/xml" } }),
    ],
    ["xml", () => client.request("POST", path(), { body: { xml } })],
  ] as const) {
    const before = await requestCount(h);
    const res = await send();
    const error = assertError(res, { status: 400, code, type: INVALID, param });
    assert.equal(await requestCount(h), before, `no Request is created: ${res.body}`);
    details.push(error.details);
  }
  return details;
}

describe("Passthrough: hostile XML is refused before queueing", () => {
  test("an external entity (DOCTYPE with SYSTEM) → PASSTHROUGH_INVALID_XML", async () => {
    await refused(
      `<!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">]>${ADD("&ext;")}`,
      "PASSTHROUGH_INVALID_XML",
    );
  });

  test("a billion-laughs DOCTYPE → PASSTHROUGH_INVALID_XML", async () => {
    const entities = Array.from(
      { length: 10 },
      (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`,
    ).join("");
    await refused(`<!DOCTYPE x [<!ENTITY l0 "lol">${entities}]>${ADD("&l10;")}`, "PASSTHROUGH_INVALID_XML");
  });

  test("an internal DOCTYPE alone, in any case → PASSTHROUGH_INVALID_XML", async () => {
    await refused(`<!doctype CustomerQueryRq>${QUERY("")}`, "PASSTHROUGH_INVALID_XML");
  });

  test("an undefined entity (an HTML one included) → PASSTHROUGH_INVALID_XML", async () => {
    await refused(ADD("A&nbsp;B"), "PASSTHROUGH_INVALID_XML");
    await refused(ADD("A&undefined;B"), "PASSTHROUGH_INVALID_XML");
  });

  test("a bare ampersand → PASSTHROUGH_INVALID_XML", async () => {
    await refused(ADD("Smith & Sons"), "PASSTHROUGH_INVALID_XML");
  });

  test("&#0; → UNSUPPORTED_CHARACTER with the reference's position and no character", async () => {
    const xml = ADD("A&#0;B");
    for (const details of await refused(xml, "UNSUPPORTED_CHARACTER")) {
      assert.deepEqual(details, {
        codePoint: 0,
        character: null,
        index: xml.indexOf("&#0;"),
        suggestion: null,
      });
    }
  });

  test("a control character, literal or as a reference → UNSUPPORTED_CHARACTER", async () => {
    const literal = ADD("A\u0007B");
    for (const details of await refused(literal, "UNSUPPORTED_CHARACTER")) {
      assert.equal(details.codePoint, 7);
      assert.equal(details.character, null);
      assert.equal(details.index, literal.indexOf("\u0007"));
    }
    for (const details of await refused(ADD("A&#x1B;B"), "UNSUPPORTED_CHARACTER")) {
      assert.equal(details.codePoint, 0x1b);
    }
  });

  test("a character outside Windows-1252 → UNSUPPORTED_CHARACTER with a suggestion", async () => {
    const xml = ADD("Caf\u00e9 \u2011 Bar");
    for (const details of await refused(xml, "UNSUPPORTED_CHARACTER")) {
      assert.equal(details.codePoint, 0x2011);
      assert.equal(details.character, "\u2011");
      assert.equal(details.index, [...xml].indexOf("\u2011"));
      assert.equal(typeof details.suggestion, "string");
    }
    for (const details of await refused(ADD("Smile &#x1F600;"), "UNSUPPORTED_CHARACTER")) {
      assert.equal(details.codePoint, 0x1f600);
      assert.equal(details.suggestion, null);
    }
  });

  test("nesting deeper than the parser allows → PASSTHROUGH_INVALID_XML, not 500", async () => {
    const deep = `${"<CustomerQueryRq>".repeat(5000)}${"</CustomerQueryRq>".repeat(5000)}`;
    await refused(deep, "PASSTHROUGH_INVALID_XML");
  });

  test("a processing instruction after the prolog → PASSTHROUGH_INVALID_XML", async () => {
    await refused(
      `<CustomerQueryRq><?evil x?><MaxReturned>1</MaxReturned></CustomerQueryRq>`,
      "PASSTHROUGH_INVALID_XML",
    );
  });
});

describe("Passthrough: the message sent on is rebuilt from the parsed message", () => {
  test("comments, CDATA, references and the caller's formatting do not reach the connector", async () => {
    const xml = `<?xml version="1.0"?>\n<!-- a comment -->\n<CustomerAddRq requestID="7">
      <CustomerAdd><Name><![CDATA[Fish & Chips]]> &#65;&amp;B</Name><!-- x --></CustomerAdd>
    </CustomerAddRq>`;
    const res = await client.request("POST", path(), {
      body: xml,
      headers: { "content-type": "application/xml", prefer: "respond-async" },
    });
    // The end user has no connection, so the Request is recorded and ends at once.
    const id = String(res.headers["svc-request-id"]);
    const stored = await findRequestById(h.deps.db, id);
    assert.ok(stored?.request_xml, `${res.statusCode} ${res.body}`);
    assert.ok(!stored.request_xml.includes("<!--"), stored.request_xml);
    assert.ok(!stored.request_xml.includes("CDATA"), stored.request_xml);
    assert.ok(
      stored.request_xml.includes(
        `<CustomerAddRq requestID="7"><CustomerAdd><Name>Fish &amp; Chips A&amp;B</Name></CustomerAdd></CustomerAddRq>`,
      ),
      stored.request_xml,
    );
  });

  test("a whole document is rebuilt too: only its messages are kept, in the service's envelope", async () => {
    const xml = `<?xml version="1.0"?><?qbxml version="13.0"?><QBXML><QBXMLMsgsRq onError="continueOnError">${QUERY(
      "<MaxReturned>1</MaxReturned>",
    )}<!-- trailing --></QBXMLMsgsRq></QBXML>`;
    const res = await client.request("POST", path(), { body: { xml } });
    const stored = await findRequestById(h.deps.db, String(res.headers["svc-request-id"]));
    assert.ok(stored?.request_xml, `${res.statusCode} ${res.body}`);
    // The Request keeps the messages and `onError`; the service's envelope is built at hand-over.
    assert.equal(stored.request_xml, "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>");
    assert.equal(stored.request_on_error, "continueOnError");
    assert.match(
      handOverDocument({ onError: "continueOnError", messagesXml: stored.request_xml }, "13.0", null),
      /<QBXMLMsgsRq onError="continueOnError">\n<CustomerQueryRq><MaxReturned>1<\/MaxReturned><\/CustomerQueryRq>\n<\/QBXMLMsgsRq>/,
    );
    expectStatus(await client.request("GET", `/v1/requests/${stored.id}`), 200);
  });
});
