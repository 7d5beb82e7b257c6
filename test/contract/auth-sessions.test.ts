import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { createApiKey, createProject, type CreatedProject } from "../../src/tenancy/api-keys.ts";
import { revokeApiKey } from "../../src/store/projects.ts";
import {
  AUTHENTICATION,
  Client,
  ID,
  INVALID,
  PERMISSION,
  UTC_MS,
  assertError,
  expectStatus,
  type EndUser,
} from "./helpers.ts";

/** Spec: POST /v1/auth-sessions (every listed error), Auth session resource, Authentication 2 and 4. */
interface AuthSession {
  id: string;
  objectType: string;
  createdAt: string;
  endUserId: string;
  clientSecret: string;
  authFlowUrl: string;
  expiresAt: string;
  redirectUrl: string | null;
}

let h: TestApp;
let live: Client;
let testKey: Client;
let other: CreatedProject;

before(async () => {
  h = await buildTestApp(null);
  live = new Client(h.app, h.project.keys.secretLive);
  testKey = new Client(h.app, h.project.keys.secretTest);
  other = await createProject(h.deps, { name: "Other project" });
});
after(() => h.close());

const createSession = (client: Client, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  client.request("POST", "/v1/auth-sessions", { body, headers });

/** Rows of the auth session and connection tables, to prove a refused call created nothing. */
async function counts(app: TestApp = h): Promise<{ sessions: number; connections: number }> {
  const sessions = await app.deps.db.selectFrom("auth_sessions").select("id").execute();
  const connections = await app.deps.db.selectFrom("connections").select("id").execute();
  return { sessions: sessions.length, connections: connections.length };
}

async function assertNothingCreated(call: () => Promise<void>, app: TestApp = h): Promise<void> {
  const before = await counts(app);
  await call();
  assert.deepEqual(await counts(app), before, "no auth session or connection was created");
}

describe("Auth sessions: create", () => {
  test("creating an auth session returns 201 with the auth session resource", async () => {
    const user = await live.createEndUser();
    const res = await createSession(live, {
      publishableKey: h.project.keys.publishableLive,
      endUserId: user.id,
    });
    const session = expectStatus<AuthSession>(res, 201);
    assert.deepEqual(
      Object.keys(session).sort(),
      [
        "authFlowUrl",
        "clientSecret",
        "createdAt",
        "endUserId",
        "expiresAt",
        "id",
        "objectType",
        "redirectUrl",
      ],
      res.body,
    );
    assert.match(session.id, ID.authSession, res.body);
    assert.equal(session.objectType, "auth_session");
    assert.match(session.createdAt, UTC_MS);
    assert.equal(session.createdAt, new Date(h.clock.now()).toISOString());
    assert.equal(session.endUserId, user.id);
    assert.ok(session.clientSecret.length >= 16, res.body);
    assert.equal(session.redirectUrl, null);
    const url = new URL(session.authFlowUrl);
    assert.equal(url.searchParams.get("clientSecret"), session.clientSecret, res.body);
    assert.ok(session.authFlowUrl.includes(session.clientSecret), res.body);
  });

  test("expiresAt defaults to createdAt plus 30 minutes", async () => {
    const user = await live.createEndUser();
    const res = await createSession(live, {
      publishableKey: h.project.keys.publishableLive,
      endUserId: user.id,
    });
    const session = expectStatus<AuthSession>(res, 201);
    assert.equal(Date.parse(session.expiresAt) - Date.parse(session.createdAt), 30 * 60_000, res.body);
    assert.match(session.expiresAt, UTC_MS);
  });

  for (const minutes of [15, 10080]) {
    test(`linkExpiryMins ${minutes} sets expiresAt to createdAt plus ${minutes} minutes`, async () => {
      const user = await live.createEndUser();
      const res = await createSession(live, {
        publishableKey: h.project.keys.publishableLive,
        endUserId: user.id,
        linkExpiryMins: minutes,
      });
      const session = expectStatus<AuthSession>(res, 201);
      assert.equal(Date.parse(session.expiresAt) - Date.parse(session.createdAt), minutes * 60_000, res.body);
    });
  }

  test("an https redirectUrl is accepted and returned", async () => {
    const user = await live.createEndUser();
    const redirectUrl = "https://app.example.com/connected?x=1";
    const res = await createSession(live, {
      publishableKey: h.project.keys.publishableLive,
      endUserId: user.id,
      redirectUrl,
    });
    assert.equal(expectStatus<AuthSession>(res, 201).redirectUrl, redirectUrl);
  });

  test("a redirectUrl of exactly 2000 characters is accepted", async () => {
    const user = await live.createEndUser();
    const base = "https://app.example.com/";
    const redirectUrl = base + "a".repeat(2000 - base.length);
    const res = await createSession(live, {
      publishableKey: h.project.keys.publishableLive,
      endUserId: user.id,
      redirectUrl,
    });
    assert.equal(expectStatus<AuthSession>(res, 201).redirectUrl, redirectUrl);
  });

  test("a test key may use an http localhost redirectUrl", async () => {
    const user = await testKey.createEndUser();
    const res = await createSession(testKey, {
      publishableKey: h.project.keys.publishableTest,
      endUserId: user.id,
      redirectUrl: "http://localhost:3000/done",
    });
    assert.equal(expectStatus<AuthSession>(res, 201).redirectUrl, "http://localhost:3000/done");
  });

  test("a live session creates the end user's pending live connection", async () => {
    const user = await live.createEndUser();
    expectStatus(
      await createSession(live, { publishableKey: h.project.keys.publishableLive, endUserId: user.id }),
      201,
    );
    const res = await live.request("GET", `/v1/end-users/${user.id}`);
    const now = expectStatus<EndUser>(res, 200);
    assert.equal(now.integrationConnections.length, 1, res.body);
    const connection = now.integrationConnections[0];
    assert.match(connection?.id ?? "", ID.connection, res.body);
    assert.equal(connection?.objectType, "integration_connection", res.body);
    assert.equal(connection?.integrationSlug, "ledger_desktop", res.body);
    assert.equal(connection?.status, "pending_setup", res.body);
    assert.equal(connection?.isTest, false, res.body);
  });

  test("a test session creates a test connection", async () => {
    const user = await testKey.createEndUser();
    expectStatus(
      await createSession(testKey, { publishableKey: h.project.keys.publishableTest, endUserId: user.id }),
      201,
    );
    const now = expectStatus<EndUser>(await testKey.request("GET", `/v1/end-users/${user.id}`), 200);
    assert.equal(now.integrationConnections[0]?.isTest, true);
    assert.equal(now.integrationConnections[0]?.status, "pending_setup");
  });

  test("each call creates a new auth session on the same connection", async () => {
    const user = await live.createEndUser();
    const body = { publishableKey: h.project.keys.publishableLive, endUserId: user.id };
    const a = expectStatus<AuthSession>(await createSession(live, body), 201);
    const connectionId = expectStatus<EndUser>(await live.request("GET", `/v1/end-users/${user.id}`), 200)
      .integrationConnections[0]?.id;
    const b = expectStatus<AuthSession>(await createSession(live, body), 201);
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.clientSecret, b.clientSecret);
    const after = expectStatus<EndUser>(await live.request("GET", `/v1/end-users/${user.id}`), 200);
    assert.equal(after.integrationConnections.length, 1);
    assert.equal(after.integrationConnections[0]?.id, connectionId);
  });
});

describe("Auth sessions: request validation", () => {
  let user: EndUser;
  before(async () => {
    user = await live.createEndUser();
  });
  const valid = () => ({ publishableKey: h.project.keys.publishableLive, endUserId: user.id });

  for (const value of [14, 10081, 30.5, "30"]) {
    test(`linkExpiryMins ${JSON.stringify(value)} returns 400 INVALID_PARAMETER and creates nothing`, async () => {
      await assertNothingCreated(async () => {
        const res = await createSession(live, { ...valid(), linkExpiryMins: value });
        assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "linkExpiryMins" });
      });
    });
  }

  for (const [label, redirectUrl] of [
    ["a relative redirectUrl", "/connected"],
    ["an http redirectUrl that is not localhost", "http://app.example.com/connected"],
    ["an http localhost redirectUrl with a live key", "http://localhost:3000/connected"],
    ["a non-http redirectUrl", "javascript:alert(1)"],
  ] as const) {
    test(`${label} returns 400 INVALID_PARAMETER naming redirectUrl and creates nothing`, async () => {
      await assertNothingCreated(async () => {
        const res = await createSession(live, { ...valid(), redirectUrl });
        assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "redirectUrl" });
      });
    });
  }

  test("a redirectUrl over 2000 characters returns 400 STRING_TOO_LONG naming redirectUrl", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, {
        ...valid(),
        redirectUrl: `https://example.com/${"a".repeat(2000)}`,
      });
      assertError(res, { status: 400, code: "STRING_TOO_LONG", type: INVALID, param: "redirectUrl" });
    });
  });

  // Decision 0039: a string that is no publishable key is an invalid one (spec: Authentication 2).
  for (const malformed of [
    "pk_live_short",
    "sk_live_" + "A".repeat(32),
    "",
    "pk_live_" + "A".repeat(23) + "!",
  ]) {
    test(`a malformed publishableKey (${JSON.stringify(malformed.slice(0, 12))}…) returns 401 PUBLISHABLE_KEY_INVALID naming publishableKey`, async () => {
      await assertNothingCreated(async () => {
        const res = await createSession(live, { ...valid(), publishableKey: malformed });
        assertError(res, {
          status: 401,
          code: "PUBLISHABLE_KEY_INVALID",
          type: AUTHENTICATION,
          param: "publishableKey",
        });
      });
    });
  }

  test("a publishableKey that is not a string returns 400 INVALID_PARAMETER naming publishableKey", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, { ...valid(), publishableKey: 42 });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "publishableKey" });
    });
  });

  test("a missing publishableKey returns 400 INVALID_PARAMETER naming publishableKey", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, { endUserId: user.id });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "publishableKey" });
    });
  });

  test("a malformed endUserId returns 400 INVALID_PARAMETER naming endUserId", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, { ...valid(), endUserId: "customer-7" });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "endUserId" });
    });
  });

  test("an unknown body field returns 400 UNKNOWN_PARAMETER naming it", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, { ...valid(), theme: "dark" });
      assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "theme" });
    });
  });

  test("an unknown Svc- header returns 400 UNKNOWN_HEADER naming it", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, valid(), { "Svc-Foo": "x" });
      assertError(res, { status: 400, code: "UNKNOWN_HEADER", type: INVALID, param: "Svc-Foo" });
    });
  });

  test("a malformed JSON body returns 400 INVALID_JSON", async () => {
    await assertNothingCreated(async () => {
      const res = await live.request("POST", "/v1/auth-sessions", {
        headers: { "content-type": "application/json" },
        body: "{",
      });
      assertError(res, { status: 400, code: "INVALID_JSON", type: INVALID, param: null });
    });
  });

  test("a live secret key with a test publishable key returns 400 INVALID_PARAMETER", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, { ...valid(), publishableKey: h.project.keys.publishableTest });
      assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "publishableKey" });
    });
  });
});

describe("Auth sessions: keys and permissions", () => {
  let user: EndUser;
  before(async () => {
    user = await live.createEndUser();
  });

  test("a missing secret key returns 401 API_KEY_MISSING", async () => {
    const res = await h.app.inject({
      method: "POST",
      url: "/v1/auth-sessions",
      payload: { publishableKey: h.project.keys.publishableLive, endUserId: user.id },
    });
    assertError(res, { status: 401, code: "API_KEY_MISSING", type: AUTHENTICATION, param: "Authorization" });
  });

  test("an invalid secret key returns 401 API_KEY_INVALID", async () => {
    const res = await createSession(new Client(h.app, `sk_live_${"B".repeat(32)}`), {
      publishableKey: h.project.keys.publishableLive,
      endUserId: user.id,
    });
    assertError(res, { status: 401, code: "API_KEY_INVALID", type: AUTHENTICATION, param: "Authorization" });
  });

  test("a well-formed unknown publishable key returns 401 PUBLISHABLE_KEY_INVALID", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, {
        publishableKey: `pk_live_${"A".repeat(24)}`,
        endUserId: user.id,
      });
      assertError(res, {
        status: 401,
        code: "PUBLISHABLE_KEY_INVALID",
        type: AUTHENTICATION,
        param: "publishableKey",
      });
    });
  });

  test("a revoked publishable key returns 401 PUBLISHABLE_KEY_INVALID", async () => {
    const created = await createApiKey(h.deps, h.project.project.id, { kind: "publishable", mode: "live" });
    await revokeApiKey(h.deps.db, h.project.project.id, created.key.id, new Date(h.clock.now()));
    await assertNothingCreated(async () => {
      const res = await createSession(live, { publishableKey: created.secret, endUserId: user.id });
      assertError(res, {
        status: 401,
        code: "PUBLISHABLE_KEY_INVALID",
        type: AUTHENTICATION,
        param: "publishableKey",
      });
    });
  });

  test("another project's publishable key returns 403 PUBLISHABLE_KEY_PROJECT_MISMATCH", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, {
        publishableKey: other.keys.publishableLive,
        endUserId: user.id,
      });
      assertError(res, {
        status: 403,
        code: "PUBLISHABLE_KEY_PROJECT_MISMATCH",
        type: PERMISSION,
        param: "publishableKey",
      });
    });
  });

  test("an unknown endUserId returns 404 RESOURCE_MISSING naming endUserId", async () => {
    await assertNothingCreated(async () => {
      const res = await createSession(live, {
        publishableKey: h.project.keys.publishableLive,
        endUserId: `eu_${"0".repeat(26)}`,
      });
      assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "endUserId" });
    });
  });

  test("another project's end user returns 404 RESOURCE_MISSING naming endUserId", async () => {
    const theirs = await new Client(h.app, other.keys.secretLive).createEndUser();
    await assertNothingCreated(async () => {
      const res = await createSession(live, {
        publishableKey: h.project.keys.publishableLive,
        endUserId: theirs.id,
      });
      assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "endUserId" });
    });
  });

  test("a read-only key returns 403 API_KEY_READ_ONLY and creates nothing", async () => {
    const key = await createApiKey(h.deps, h.project.project.id, {
      kind: "secret",
      mode: "live",
      readOnly: true,
    });
    await assertNothingCreated(async () => {
      const res = await createSession(new Client(h.app, key.secret), {
        publishableKey: h.project.keys.publishableLive,
        endUserId: user.id,
      });
      assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param: null });
    });
  });
});

describe("Auth sessions: Idempotency-Key", () => {
  let user: EndUser;
  before(async () => {
    user = await live.createEndUser();
  });
  const body = () => ({ publishableKey: h.project.keys.publishableLive, endUserId: user.id });

  for (const [label, key] of [
    ["empty", ""],
    ["256-character", "k".repeat(256)],
    ["non-ASCII", "schlüssel"],
  ] as const) {
    test(`an ${label} Idempotency-Key returns 400 IDEMPOTENCY_KEY_INVALID and creates nothing`, async () => {
      await assertNothingCreated(async () => {
        const res = await createSession(live, body(), { "idempotency-key": key });
        assertError(res, {
          status: 400,
          code: "IDEMPOTENCY_KEY_INVALID",
          type: INVALID,
          param: "Idempotency-Key",
        });
      });
    });
  }

  test("the same key and body replay the first response, with one auth session stored", async () => {
    const before = await counts();
    const first = await createSession(live, body(), { "idempotency-key": "as-replay" });
    const session = expectStatus<AuthSession>(first, 201);
    const second = await createSession(live, body(), { "idempotency-key": "as-replay" });
    assert.deepEqual(expectStatus<AuthSession>(second, 201), session);
    assert.equal(second.headers["idempotent-replayed"], "true");
    const after = await counts();
    assert.equal(after.sessions, before.sessions + 1);
  });

  test("the same key with another body returns 422 IDEMPOTENCY_KEY_REUSED and creates nothing", async () => {
    expectStatus(await createSession(live, body(), { "idempotency-key": "as-reuse" }), 201);
    await assertNothingCreated(async () => {
      const res = await createSession(
        live,
        { ...body(), linkExpiryMins: 60 },
        { "idempotency-key": "as-reuse" },
      );
      assertError(res, {
        status: 422,
        code: "IDEMPOTENCY_KEY_REUSED",
        type: INVALID,
        param: "Idempotency-Key",
      });
    });
  });
});

describe("Auth sessions: test company file cap", () => {
  let capped: TestApp;
  let client: Client;
  before(async () => {
    capped = await buildTestApp(null, { config: { TEST_COMPANY_FILE_LIMIT: "1" } });
    client = new Client(capped.app, capped.project.keys.secretTest);
  });
  after(() => capped.close());

  test("a test session beyond the cap returns 403 TEST_COMPANY_FILE_LIMIT_REACHED and creates nothing", async () => {
    const first = await client.createEndUser();
    const second = await client.createEndUser();
    const publishableKey = capped.project.keys.publishableTest;
    expectStatus(await createSession(client, { publishableKey, endUserId: first.id }), 201);
    await assertNothingCreated(async () => {
      const res = await createSession(client, { publishableKey, endUserId: second.id });
      assertError(res, {
        status: 403,
        code: "TEST_COMPANY_FILE_LIMIT_REACHED",
        type: PERMISSION,
        param: null,
      });
    }, capped);
    const now = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${second.id}`), 200);
    assert.deepEqual(now.integrationConnections, []);
  });

  test("an end user that already has the test connection can get a new session at the cap", async () => {
    const [existing] = await capped.deps.db.selectFrom("connections").select("end_user_id").execute();
    assert.ok(existing, "the previous test created a test connection");
    const res = await createSession(client, {
      publishableKey: capped.project.keys.publishableTest,
      endUserId: existing.end_user_id,
    });
    expectStatus(res, 201);
  });

  test("live connections do not count against the test cap", async () => {
    const liveClient = new Client(capped.app, capped.project.keys.secretLive);
    const user = await liveClient.createEndUser();
    const res = await createSession(liveClient, {
      publishableKey: capped.project.keys.publishableLive,
      endUserId: user.id,
    });
    expectStatus(res, 201);
  });
});
