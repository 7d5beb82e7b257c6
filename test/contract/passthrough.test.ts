import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { findRequestById } from "../../src/store/requests.ts";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { REFERENCE_ROOT, needReference } from "../../src/testing/references.ts";
import { Client, INVALID, assertError, expectStatus, type EndUser, type ListPage } from "./helpers.ts";

/**
 * Passthrough (architecture §5): malformed or schema-invalid XML → 400 PASSTHROUGH_INVALID_XML with
 * `param: "body"`, before anything is queued, so no Request exists for it.
 */
let h: TestApp;
let client: Client;
let endUser: EndUser;

before(async () => {
  h = await buildTestApp(null);
  client = new Client(h.app, h.project.keys.secretLive);
  endUser = await client.createEndUser();
});
after(() => h.close());

const path = (): string => `/v1/end-users/${endUser.id}/passthrough/ledger_desktop`;
const XML = { "content-type": "application/xml" };

async function requestCount(): Promise<number> {
  const page = expectStatus<ListPage<{ id: string }>>(
    await client.request("GET", "/v1/requests?limit=100"),
    200,
  );
  return page.data.length;
}

describe("Passthrough: request schema", () => {
  test("a schema-valid message is queued as a Request (the control for the tests below)", async () => {
    const before = await requestCount();
    const res = await client.request("POST", path(), {
      body: "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>",
      headers: XML,
    });
    // The end user never set up a connection, so the Request is recorded and fails.
    assert.notEqual(res.statusCode, 400, res.body);
    assert.equal(await requestCount(), before + 1, res.body);
  });

  const invalid: [string, string, string][] = [
    [
      "an element out of order",
      "<CustomerQueryRq><ActiveStatus>All</ActiveStatus><MaxReturned>1</MaxReturned></CustomerQueryRq>",
      "`CustomerQueryRq/MaxReturned` is out of order: it must come before `ActiveStatus`.",
    ],
    [
      "a missing required element in a write",
      "<CustomerAddRq><CustomerAdd><CompanyName>Acme</CompanyName></CustomerAdd></CustomerAddRq>",
      "`CustomerAddRq/CustomerAdd/Name` is required.",
    ],
    [
      "an unknown request message",
      "<CustomerFetchRq/>",
      "`CustomerFetchRq` is not a request message the application knows.",
    ],
  ];
  for (const [title, xml, message] of invalid) {
    test(`${title} → 400 PASSTHROUGH_INVALID_XML, and no Request is created`, async () => {
      const before = await requestCount();
      const res = await client.request("POST", path(), { body: xml, headers: XML });
      const error = assertError(res, {
        status: 400,
        code: "PASSTHROUGH_INVALID_XML",
        type: INVALID,
        param: "body",
      });
      assert.equal(error.message, message, res.body);
      assert.equal(await requestCount(), before, "nothing was queued");
    });
  }

  test("the JSON form `{xml}` is checked the same way", async () => {
    const before = await requestCount();
    const res = await client.request("POST", path(), {
      body: { xml: "<CustomerQueryRq><MaxReturned>many</MaxReturned></CustomerQueryRq>" },
    });
    const error = assertError(res, {
      status: 400,
      code: "PASSTHROUGH_INVALID_XML",
      type: INVALID,
      param: "body",
    });
    assert.equal(
      error.message,
      "`CustomerQueryRq/MaxReturned` must be a whole number (got `many`).",
      res.body,
    );
    assert.equal(await requestCount(), before, "nothing was queued");
  });

  test("an idempotent write with a schema-invalid body stores nothing under its key", async () => {
    const key = "schema-invalid-once";
    const bad = await client.request("POST", path(), {
      body: "<CustomerAddRq><CustomerAdd><Nmae>Acme</Nmae></CustomerAdd></CustomerAddRq>",
      headers: { ...XML, "idempotency-key": key },
    });
    assertError(bad, { status: 400, code: "PASSTHROUGH_INVALID_XML", type: INVALID, param: "body" });
    const before = await requestCount();
    const fixed = await client.request("POST", path(), {
      body: "<CustomerAddRq><CustomerAdd><Name>Acme</Name></CustomerAdd></CustomerAddRq>",
      headers: { ...XML, "idempotency-key": key },
    });
    // The corrected body becomes a new Request rather than IDEMPOTENCY_KEY_REUSED.
    assert.notEqual(fixed.statusCode, 400, fixed.body);
    assert.notEqual(
      fixed.json<{ error?: { code: string } }>().error?.code,
      "IDEMPOTENCY_KEY_REUSED",
      fixed.body,
    );
    assert.equal(await requestCount(), before + 1, fixed.body);
  });
});

/**
 * The prolog (issue 25, item 5): XML allows comments, white space and processing instructions before
 * the root element (XML 1.0 §2.8), and the application's own sample request files put a block of
 * comments between the XML declaration and `<?qbxml …?>`. Such a document is read like any other;
 * what must be refused still is (a DOCTYPE, another processing instruction, a misplaced declaration).
 */
describe("Passthrough: the prolog of a whole document", () => {
  /** A document shaped like the samples: comments first, then the version, the messages, a trailer. */
  const document = (prolog: string): string =>
    `${prolog}<QBXML>\n  <QBXMLMsgsRq onError="continueOnError">\n    <CustomerQueryRq requestID="2" />\n  </QBXMLMsgsRq>\n</QBXML>\n<!-- ==== -->\n`;
  const COMMENTS = "<!-- ================ -->\n<!-- Summary: a query -->\n<!-- ================ -->\n";

  async function accepted(xml: string): Promise<void> {
    const before = await requestCount();
    const res = await client.request("POST", path(), { body: xml, headers: XML });
    // The end user never set up a connection: the Request is recorded and fails, but is not refused.
    assert.notEqual(res.statusCode, 400, res.body);
    assert.equal(await requestCount(), before + 1, res.body);
    const stored = await findRequestById(h.deps.db, String(res.headers["svc-request-id"]));
    assert.equal(stored?.request_xml, '<CustomerQueryRq requestID="2" />', res.body);
    assert.equal(stored.request_on_error, "continueOnError");
  }

  test("comments before `<?qbxml …?>`, with or without the XML declaration, are accepted", async () => {
    await accepted(document(`<?xml version="1.0"?>\n${COMMENTS}<?qbxml version="2.0"?>\n`));
    await accepted(document(`${COMMENTS}<?qbxml version="16.0"?>\n`));
    await accepted(document(`<?xml version="1.0"?>\n${COMMENTS}`));
  });

  const refusedProlog: [string, string][] = [
    [
      "a DOCTYPE after a comment",
      `<!-- c -->\n<!DOCTYPE QBXML [<!ENTITY x "y">]>\n<?qbxml version="16.0"?>\n`,
    ],
    ["another processing instruction after a comment", `<!-- c -->\n<?evil x?>\n<?qbxml version="16.0"?>\n`],
    ["the XML declaration after a comment", `<!-- c -->\n<?xml version="1.0"?>\n<?qbxml version="16.0"?>\n`],
    ["two version instructions", `<?qbxml version="16.0"?>\n<!-- c -->\n<?qbxml version="13.0"?>\n`],
    ["a comment that is not well formed", `<!-- a -- b -->\n<?qbxml version="16.0"?>\n`],
  ];
  for (const [title, prolog] of refusedProlog) {
    test(`${title} → 400 PASSTHROUGH_INVALID_XML, and no Request is created`, async () => {
      const before = await requestCount();
      const res = await client.request("POST", path(), { body: document(prolog), headers: XML });
      assertError(res, { status: 400, code: "PASSTHROUGH_INVALID_XML", type: INVALID, param: "body" });
      assert.equal(await requestCount(), before, "nothing was queued");
    });
  }

  test("the application's own sample request files are accepted as they are written", async (t) => {
    const folder = join(REFERENCE_ROOT, "qbxml-samples", "requests");
    if (needReference(t, { what: "the application's sample request files", path: folder }) === null) return;
    const files = existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith(".xml")) : [];
    let sent = 0;
    for (const file of files) {
      const xml = readFileSync(join(folder, file), "utf8");
      // Samples of write recovery set message-set IDs, which the service owns: refused by design.
      if (/\b(?:new|old)MessageSetID\b/.test(xml)) continue;
      assert.match(xml, /^(?:<\?xml[^>]*>\s*)?<!--/, `${file} starts with a comment`);
      const before = await requestCount();
      const res = await client.request("POST", path(), { body: xml, headers: XML });
      assert.notEqual(res.statusCode, 400, `${file}: ${res.body}`);
      assert.equal(await requestCount(), before + 1, `${file}: ${res.body}`);
      sent++;
    }
    assert.ok(sent > 0, `no sample request without message-set IDs in ${folder}`);
  });
});
