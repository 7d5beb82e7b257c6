import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, bearer, type TestApp } from "../../src/testing/harness.ts";
import { createApiKey, createProject, revokeKey, type CreatedProject } from "../../src/tenancy/api-keys.ts";
import { revokeApiKey } from "../../src/store/projects.ts";
import {
  AUTHENTICATION,
  Client,
  INVALID,
  PERMISSION,
  assertCommonHeaders,
  assertError,
  expectStatus,
  type EndUser,
} from "./helpers.ts";

/** Spec: Authentication (1, 3) and the non-disclosure rule for other projects' objects. */
let h: TestApp;
let client: Client;
let readOnly: Client;
let other: CreatedProject;

before(async () => {
  h = await buildTestApp(null);
  client = new Client(h.app, h.project.keys.secretLive);
  const key = await createApiKey(h.deps, h.project.project.id, {
    kind: "secret",
    mode: "live",
    readOnly: true,
  });
  readOnly = new Client(h.app, key.secret);
  other = await createProject(h.deps, { name: "Other project" });
});
after(() => h.close());

describe("Authentication: secret keys", () => {
  test("a call without an Authorization header is refused with 401 API_KEY_MISSING", async () => {
    const res = await h.app.inject({ method: "GET", url: "/v1/end-users" });
    assertError(res, { status: 401, code: "API_KEY_MISSING", type: AUTHENTICATION, param: "Authorization" });
  });

  test("a well-formed but unknown secret key is refused with 401 API_KEY_INVALID", async () => {
    const res = await h.app.inject({
      method: "GET",
      url: "/v1/end-users",
      headers: bearer(`sk_live_${"A".repeat(32)}`),
    });
    assertError(res, { status: 401, code: "API_KEY_INVALID", type: AUTHENTICATION, param: "Authorization" });
  });

  test("a malformed secret key is refused with 401 API_KEY_INVALID", async () => {
    const res = await h.app.inject({ method: "GET", url: "/v1/end-users", headers: bearer("sk_live_nope") });
    assertError(res, { status: 401, code: "API_KEY_INVALID", type: AUTHENTICATION, param: "Authorization" });
  });

  test("an Authorization header that is not a Bearer key is refused with 401 API_KEY_INVALID", async () => {
    const res = await h.app.inject({
      method: "GET",
      url: "/v1/end-users",
      headers: { authorization: "Basic dXNlcjpwYXNz" },
    });
    assertError(res, { status: 401, code: "API_KEY_INVALID", type: AUTHENTICATION, param: "Authorization" });
  });

  test("a publishable key cannot be used as a Bearer secret key", async () => {
    const res = await h.app.inject({
      method: "GET",
      url: "/v1/end-users",
      headers: bearer(h.project.keys.publishableLive),
    });
    assertError(res, { status: 401, code: "API_KEY_INVALID", type: AUTHENTICATION, param: "Authorization" });
  });

  test("a revoked secret key is refused with 401 API_KEY_INVALID", async () => {
    const created = await createApiKey(h.deps, h.project.project.id, { kind: "secret", mode: "live" });
    const before = await h.app.inject({
      method: "GET",
      url: "/v1/end-users",
      headers: bearer(created.secret),
    });
    expectStatus(before, 200);
    // Revoked through the service: refused with the very next call, although the key was just used.
    assert.ok(await revokeKey(h.deps, h.project.project.id, created.key.id));
    const res = await h.app.inject({ method: "GET", url: "/v1/end-users", headers: bearer(created.secret) });
    assertError(res, { status: 401, code: "API_KEY_INVALID", type: AUTHENTICATION, param: "Authorization" });
    assert.equal(await revokeKey(h.deps, h.project.project.id, created.key.id), false, "revoked once");
  });

  test("a key revoked behind the service's back works at most API_KEY_CACHE_MS longer (decision 0013)", async () => {
    const clock = h.fakeClock;
    assert.ok(clock);
    const lifetime = h.deps.config.API_KEY_CACHE_MS;
    assert.equal(lifetime, 5000, "the default lifetime");
    const created = await createApiKey(h.deps, h.project.project.id, { kind: "secret", mode: "live" });
    const call = () => h.app.inject({ method: "GET", url: "/v1/end-users", headers: bearer(created.secret) });
    expectStatus(await call(), 200);
    // Another writer (a database administrator, say) revokes it without telling the service.
    assert.ok(await revokeApiKey(h.deps.db, h.project.project.id, created.key.id, new Date(clock.now())));
    await clock.advance(lifetime - 1);
    expectStatus(await call(), 200);
    await clock.advance(1);
    assertError(await call(), {
      status: 401,
      code: "API_KEY_INVALID",
      type: AUTHENTICATION,
      param: "Authorization",
    });
  });

  test("authentication is checked before the body is parsed", async () => {
    const res = await h.app.inject({
      method: "POST",
      url: "/v1/end-users",
      headers: { "content-type": "application/json" },
      payload: "{not json",
    });
    assertError(res, { status: 401, code: "API_KEY_MISSING", type: AUTHENTICATION, param: "Authorization" });
  });

  test("a test secret key does not see the project's live end users, and a live key not its test ones", async () => {
    const test = new Client(h.app, h.project.keys.secretTest);
    const live = await client.createEndUser();
    const mine = await test.createEndUser();
    const hidden = await test.request("GET", `/v1/end-users/${live.id}`);
    assertError(hidden, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
    const reverse = await client.request("GET", `/v1/end-users/${mine.id}`);
    assertError(reverse, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
    assert.equal(
      expectStatus<EndUser>(await test.request("GET", `/v1/end-users/${mine.id}`), 200).id,
      mine.id,
    );
  });
});

describe("Authentication: read-only keys", () => {
  test("a read-only key can list and retrieve end users", async () => {
    const created = await client.createEndUser();
    const list = expectStatus<{ data: EndUser[] }>(await readOnly.request("GET", "/v1/end-users"), 200);
    assert.ok(list.data.some((u) => u.id === created.id));
    const one = expectStatus<EndUser>(await readOnly.request("GET", `/v1/end-users/${created.id}`), 200);
    assert.equal(one.id, created.id);
  });

  test("a read-only key cannot create an end user (403 API_KEY_READ_ONLY) and nothing is created", async () => {
    const before = await client.endUserIds();
    const res = await readOnly.request("POST", "/v1/end-users", {
      body: { companyName: "Read only", sourceId: "read-only-create" },
    });
    assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param: null });
    assert.deepEqual(await client.endUserIds(), before);
  });

  test("a read-only key cannot update an end user and the end user stays unchanged", async () => {
    const created = await client.createEndUser({ companyName: "Unchanged" });
    const res = await readOnly.request("POST", `/v1/end-users/${created.id}`, {
      body: { companyName: "Changed" },
    });
    assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param: null });
    const now = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${created.id}`), 200);
    assert.equal(now.companyName, "Unchanged");
  });

  test("a read-only key cannot delete an end user and the end user still exists", async () => {
    const created = await client.createEndUser();
    const res = await readOnly.request("DELETE", `/v1/end-users/${created.id}`);
    assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param: null });
    expectStatus(await client.request("GET", `/v1/end-users/${created.id}`), 200);
  });

  test("a read-only key cannot reset an end user's company file", async () => {
    const created = await client.createEndUser();
    const res = await readOnly.request("POST", `/v1/end-users/${created.id}/reset-company-file`, {
      body: {},
    });
    assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param: null });
  });
});

describe("Authentication: another project's objects", () => {
  const foreign = () => new Client(h.app, other.keys.secretLive);

  test("retrieving another project's end user returns 404 RESOURCE_MISSING", async () => {
    const created = await client.createEndUser();
    const res = await foreign().request("GET", `/v1/end-users/${created.id}`);
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });

  test("updating another project's end user returns 404 and changes nothing", async () => {
    const created = await client.createEndUser({ companyName: "Mine" });
    const res = await foreign().request("POST", `/v1/end-users/${created.id}`, {
      body: { companyName: "Theirs" },
    });
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
    const now = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${created.id}`), 200);
    assert.equal(now.companyName, "Mine");
  });

  test("deleting another project's end user returns 404 and the end user still exists", async () => {
    const created = await client.createEndUser();
    const res = await foreign().request("DELETE", `/v1/end-users/${created.id}`);
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
    expectStatus(await client.request("GET", `/v1/end-users/${created.id}`), 200);
  });

  test("resetting another project's end user's company file returns 404", async () => {
    const created = await client.createEndUser();
    const res = await foreign().request("POST", `/v1/end-users/${created.id}/reset-company-file`, {
      body: {},
    });
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });

  test("another project's list does not show this project's end users", async () => {
    const created = await client.createEndUser();
    assert.ok(!(await foreign().endUserIds()).includes(created.id));
  });
});

describe("Authentication: response headers", () => {
  test("a successful response carries Svc-Request-Id and RateLimit-* headers", async () => {
    const res = await client.request("GET", "/v1/end-users");
    expectStatus(res, 200);
    assertCommonHeaders(res);
  });

  test("a 401 response carries Svc-Request-Id and RateLimit-* headers", async () => {
    const res = await h.app.inject({ method: "GET", url: "/v1/end-users" });
    assertCommonHeaders(res);
  });

  test("an unknown route without a key returns 404 RESOURCE_MISSING with the common headers", async () => {
    const res = await h.app.inject({ method: "GET", url: "/v1/no-such-thing" });
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: null });
    assertCommonHeaders(res);
  });

  test("an unknown route with a key returns 404 RESOURCE_MISSING with the common headers", async () => {
    const res = await client.request("POST", "/v1/no-such-thing", { body: {} });
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: null });
    assertCommonHeaders(res);
  });

  test("each response has its own Svc-Request-Id", async () => {
    const a = await client.request("GET", "/v1/end-users");
    const b = await client.request("GET", "/v1/end-users");
    assert.notEqual(a.headers["svc-request-id"], b.headers["svc-request-id"]);
  });
});
