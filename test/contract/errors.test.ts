import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, bearer, type TestApp } from "../../src/testing/harness.ts";
import { catalogue, type ErrorCode } from "../../src/errors/catalogue.ts";
import { Client, INVALID, assertError, expectStatus, type EndUser } from "./helpers.ts";

/** Spec: Errors (the error body, `Svc-Should-Retry`, docs addresses) and Conventions (clearable fields). */
let h: TestApp;
let client: Client;

before(async () => {
  h = await buildTestApp(null);
  client = new Client(h.app, h.project.keys.secretLive);
});
after(() => h.close());

describe("Errors: the error body", () => {
  test("an error body carries exactly the spec's fields, taken from the catalogue entry", async () => {
    const res = await client.request("GET", "/v1/end-users?limit=0");
    const error = assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "limit" });
    assert.deepEqual(
      Object.keys(error).sort(),
      [
        "cause",
        "code",
        "details",
        "docsUrl",
        "fixes",
        "httpStatusCode",
        "integrationCode",
        "message",
        "outcome",
        "param",
        "requestId",
        "retryable",
        "type",
        "userFacingMessage",
      ],
      res.body,
    );
    const entry = catalogue[error.code as ErrorCode];
    assert.deepEqual(error.fixes, entry.fixes, res.body);
    assert.equal(error.userFacingMessage, entry.userFacingMessage, res.body);
    assert.equal(error.integrationCode, null, res.body);
    assert.deepEqual(error.details, {}, res.body);
  });

  test("docsUrl points at the code's entry in the served error reference", async () => {
    const res = await client.request("GET", "/v1/end-users?limit=0");
    const error = assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "limit" });
    const url = new URL(error.docsUrl);
    assert.equal(url.origin, new URL(h.deps.config.publicUrl).origin, error.docsUrl);
    assert.equal(url.hash, "#invalid-parameter", error.docsUrl);
    const page = await h.app.inject({ method: "GET", url: url.pathname });
    assert.equal(page.statusCode, 200, `${error.docsUrl} is served: ${page.body.slice(0, 300)}`);
    assert.ok(page.body.includes('id="invalid-parameter"'), "the page has the code's anchor");
  });

  test("the error message never echoes the presented secret key", async () => {
    const presented = `sk_live_${"Z".repeat(32)}`;
    const res = await h.app.inject({ method: "GET", url: "/v1/end-users", headers: bearer(presented) });
    assertError(res, {
      status: 401,
      code: "API_KEY_INVALID",
      type: "AUTHENTICATION_ERROR",
      param: "Authorization",
    });
    assert.ok(!res.body.includes(presented), res.body);
  });

  test("a request-validation error is not retryable and says so in Svc-Should-Retry and X-Should-Retry", async () => {
    const res = await client.request("POST", "/v1/end-users", {
      body: { companyName: "A", sourceId: "a", x: 1 },
    });
    const error = assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "x" });
    assert.equal(error.retryable, false);
    assert.equal(res.headers["svc-should-retry"], "false");
    assert.equal(res.headers["x-should-retry"], "false");
    assert.equal(res.headers["retry-after"], undefined);
  });
});

describe("Conventions: clearable fields", () => {
  test("null for a field that is not clearable returns 400 FIELD_NOT_CLEARABLE and changes nothing", async () => {
    const created = await client.createEndUser({ companyName: "Kept" });
    const res = await client.request("POST", `/v1/end-users/${created.id}`, { body: { companyName: null } });
    assertError(res, { status: 400, code: "FIELD_NOT_CLEARABLE", type: INVALID, param: "companyName" });
    const now = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${created.id}`), 200);
    assert.deepEqual(now, created);
  });

  test("null for sourceId on update returns 400 FIELD_NOT_CLEARABLE naming sourceId", async () => {
    const created = await client.createEndUser();
    const res = await client.request("POST", `/v1/end-users/${created.id}`, { body: { sourceId: null } });
    assertError(res, { status: 400, code: "FIELD_NOT_CLEARABLE", type: INVALID, param: "sourceId" });
  });

  test("null for a clearable field (email) clears it", async () => {
    const created = await client.createEndUser({ email: "x@example.com" });
    const res = await client.request("POST", `/v1/end-users/${created.id}`, { body: { email: null } });
    assert.equal(expectStatus<EndUser>(res, 200).email, null);
  });

  test("null for linkExpiryMins on an auth session returns 400 FIELD_NOT_CLEARABLE", async () => {
    const created = await client.createEndUser();
    const res = await client.request("POST", "/v1/auth-sessions", {
      body: { publishableKey: h.project.keys.publishableLive, endUserId: created.id, linkExpiryMins: null },
    });
    assertError(res, { status: 400, code: "FIELD_NOT_CLEARABLE", type: INVALID, param: "linkExpiryMins" });
  });
});

describe("Errors: internal errors", () => {
  test("an unexpected failure returns 500 INTERNAL_ERROR, retryable, without internal details", async (t) => {
    // A failure that is not the store being away (that is 503 SERVICE_UNAVAILABLE, decision 0019).
    let failing = false;
    const broken = await buildTestApp(null, {
      gate: () => {
        if (failing) throw new Error("an unexpected bug");
      },
    });
    t.after(() => broken.close().catch(() => undefined));
    failing = true;
    const res = await broken.app.inject({
      method: "GET",
      url: "/v1/end-users",
      headers: bearer(broken.project.keys.secretLive),
    });
    const error = assertError(res, {
      status: 500,
      code: "INTERNAL_ERROR",
      type: "INTERNAL_ERROR",
      param: null,
      retryable: true,
      outcome: "unknown",
    });
    assert.equal(error.message, catalogue.INTERNAL_ERROR.message, res.body);
    assert.equal(res.headers["retry-after"], undefined);
  });

  test("an unexpected failure on a write may have been applied: retryable false in the body and both headers", async (t) => {
    // Spec: Errors, "a write with outcome unknown or pending is never resent" (decision 0045): a
    // client that sends no Idempotency-Key and obeys X-Should-Retry must not send it again.
    let failing = false;
    const broken = await buildTestApp(null, {
      gate: () => {
        if (failing) throw new Error("an unexpected bug");
      },
    });
    t.after(() => broken.close().catch(() => undefined));
    failing = true;
    const res = await broken.app.inject({
      method: "POST",
      url: "/v1/end-users",
      headers: { ...bearer(broken.project.keys.secretLive), "content-type": "application/json" },
      payload: { companyName: "Maybe Created" },
    });
    assertError(res, {
      status: 500,
      code: "INTERNAL_ERROR",
      type: "INTERNAL_ERROR",
      param: null,
      retryable: false,
      outcome: "unknown",
    });
    assert.equal(res.headers["x-should-retry"], "false");
  });
});
