import assert from "node:assert/strict";
import { test } from "node:test";
import { ServiceError } from "../errors/service-error.ts";
import { findOperation, routeOf, validateCall } from "./catalogue.ts";
import { checkPlatformId, isSafeRecordId, RECORD_ID_PATTERN } from "./ids.ts";
import { serviceUrl } from "./service.ts";

/**
 * An ID an agent gives the MCP server becomes part of a URL. Whatever it is, the call the service
 * receives must be the route the preview showed (issue 23 row 7, decision 0033).
 */
const APPLICATION_IDS = [
  "80000001-1234567890",
  "1A2B-1234567890",
  "8000000A-1700000000",
  "0-0",
  "a.b",
  "...",
];
const REFUSED = [
  ".",
  "..",
  "a/b",
  "/",
  "a\\b",
  "a?b",
  "?",
  "a#b",
  "#",
  "%2e%2e",
  "a%2Fb",
  "a b",
  " ",
  "a\tb",
  "a\nb",
  "a\u0000b",
  "a\u007fb",
  "a\u0085b",
  "a\u00a0b",
];

test("the application's ID forms pass; dot segments, separators, escapes, whitespace and control characters do not", () => {
  for (const id of APPLICATION_IDS) assert.ok(isSafeRecordId(id), id);
  for (const id of REFUSED) assert.ok(!isSafeRecordId(id), JSON.stringify(id));
  // describe_operation's JSON Schema says the same to the model.
  const pattern = new RegExp(RECORD_ID_PATTERN, "u");
  for (const id of APPLICATION_IDS) assert.match(id, pattern);
  for (const id of REFUSED) assert.doesNotMatch(id, pattern, JSON.stringify(id));
});

test("a refused record ID is INVALID_PARAMETER naming `id`, before the core's validation", () => {
  const operation = findOperation("ledger.customers.update");
  for (const id of REFUSED) {
    assert.throws(
      () => validateCall(operation, { id, body: { revisionNumber: "1" } }),
      (error: unknown) =>
        error instanceof ServiceError && error.code === "INVALID_PARAMETER" && error.param === "id",
      JSON.stringify(id),
    );
  }
});

test("every accepted ID reaches the service as the previewed route: one path segment, unchanged by URL parsing", () => {
  const base = "http://127.0.0.1:8080";
  for (const operationId of [
    "ledger.customers.retrieve",
    "ledger.invoices.void",
    "ledger.customers.delete",
  ]) {
    const operation = findOperation(operationId);
    for (const id of [...APPLICATION_IDS, "x".repeat(36), "é€", "a+b", "a&b=c", "a;b", "a:b", "a@b", "[a]"]) {
      assert.ok(isSafeRecordId(id), id);
      const route = routeOf(operation, { id });
      const url = serviceUrl(base, route);
      assert.equal(`${url.pathname}${url.search}`, route, id);
      const segments = url.pathname.split("/");
      assert.equal(segments.length, operation.http.path.split("/").length, id);
      assert.ok(segments.map(decodeURIComponent).includes(id), `${id} is one segment of ${url.pathname}`);
    }
  }
});

test("the service client refuses a route URL parsing would change, and keeps a base URL's own path", () => {
  for (const route of [
    "/v1/ledger-desktop/customers/..",
    "/v1/ledger-desktop/customers/./void",
    "/v1/a/%2e%2e/b",
    "v1/x",
  ]) {
    assert.throws(
      () => serviceUrl("http://127.0.0.1:8080", route),
      (error: unknown) => error instanceof ServiceError && error.code === "INTERNAL_ERROR",
      route,
    );
  }
  assert.equal(
    serviceUrl("https://host.example/bridge", "/v1/end-users?limit=2").href,
    "https://host.example/bridge/v1/end-users?limit=2",
  );
});

test("platform IDs are exactly prefix and 26 Crockford characters, naming the parameter", () => {
  checkPlatformId("endUser", "eu_01jzx0000000000000000000xx", "endUserId");
  checkPlatformId("request", "req_01jzx0000000000000000000xx", "requestId");
  for (const [kind, value, param] of [
    ["endUser", "..", "endUserId"],
    ["endUser", "eu_01jzx0000000000000000000x/", "endUserId"],
    ["endUser", "req_01jzx0000000000000000000xx", "endUserId"],
    ["request", "req_01jzx0000000000000000000x\n", "requestId"],
    ["request", ".", "requestId"],
    ["request", "req_../../v1/end-users", "requestId"],
  ] as const) {
    assert.throws(
      () => checkPlatformId(kind, value, param),
      (error: unknown) =>
        error instanceof ServiceError && error.code === "INVALID_PARAMETER" && error.param === param,
      JSON.stringify(value),
    );
  }
});
