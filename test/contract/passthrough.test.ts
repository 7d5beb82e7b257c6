import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
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
