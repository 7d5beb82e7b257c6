import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { createProject } from "../../src/tenancy/api-keys.ts";
import { Client, assertError, expectStatus } from "./helpers.ts";

/** Spec: Limits (rate limit per project, all keys together; 429 RATE_LIMITED with Retry-After). */
let h: TestApp;

before(async () => {
  h = await buildTestApp(null, { config: { RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_MS: "60000" } });
});
after(() => h.close());

test("the call after the budget is spent returns 429 RATE_LIMITED with Retry-After, counted across keys", async () => {
  const project = await createProject(h.deps, { name: "Limited" });
  const liveKey = new Client(h.app, project.keys.secretLive);
  const testKey = new Client(h.app, project.keys.secretTest);
  const remaining: string[] = [];
  for (const client of [liveKey, testKey, liveKey]) {
    const res = await client.request("GET", "/v1/end-users");
    expectStatus(res, 200);
    assert.equal(res.headers["ratelimit-limit"], "3", res.body);
    remaining.push(String(res.headers["ratelimit-remaining"]));
  }
  assert.deepEqual(remaining, ["2", "1", "0"]);

  const res = await testKey.request("GET", "/v1/end-users");
  const error = assertError(res, {
    status: 429,
    code: "RATE_LIMITED",
    type: "RATE_LIMIT_ERROR",
    param: null,
    retryable: true,
  });
  assert.match(String(res.headers["retry-after"]), /^[1-9]\d*$/, res.body);
  assert.equal(res.headers["svc-should-retry"], "true");
  assert.equal(res.headers["ratelimit-remaining"], "0");
  assert.ok(error.message.length > 0);
});

test("a rate-limited write creates nothing", async () => {
  const project = await createProject(h.deps, { name: "Limited writes" });
  const client = new Client(h.app, project.keys.secretLive);
  for (let i = 0; i < 3; i++) expectStatus(await client.request("GET", "/v1/end-users"), 200);
  const res = await client.request("POST", "/v1/end-users", {
    body: { companyName: "A", sourceId: "limited" },
  });
  assertError(res, {
    status: 429,
    code: "RATE_LIMITED",
    type: "RATE_LIMIT_ERROR",
    param: null,
    retryable: true,
  });
  const rows = await h.deps.db
    .selectFrom("end_users")
    .select("id")
    .where("project_id", "=", project.project.id)
    .execute();
  assert.deepEqual(rows, []);
});

test("one project's spent budget does not limit another project", async () => {
  const spent = await createProject(h.deps, { name: "Spent" });
  const fresh = await createProject(h.deps, { name: "Fresh" });
  const spentClient = new Client(h.app, spent.keys.secretLive);
  for (let i = 0; i < 3; i++) expectStatus(await spentClient.request("GET", "/v1/end-users"), 200);
  assertError(await spentClient.request("GET", "/v1/end-users"), {
    status: 429,
    code: "RATE_LIMITED",
    type: "RATE_LIMIT_ERROR",
    param: null,
    retryable: true,
  });
  const res = await new Client(h.app, fresh.keys.secretLive).request("GET", "/v1/end-users");
  expectStatus(res, 200);
  assert.equal(res.headers["ratelimit-remaining"], "2", res.body);
});
