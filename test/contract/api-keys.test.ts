import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { createApiKey, createProject } from "../../src/tenancy/api-keys.ts";
import {
  AUTHENTICATION,
  Client,
  INVALID,
  PERMISSION,
  UTC_MS,
  assertError,
  expectStatus,
  type ListPage,
} from "./helpers.ts";

/**
 * `/v1/api-keys` (decision 0026): list, create, revoke a project's keys in the caller's mode; the
 * secret appears only in the create response; read-only keys cannot write; no key reaches another
 * project's or mode's keys; a key cannot revoke itself.
 */
interface ApiKey {
  id: string;
  objectType: string;
  createdAt: string;
  projectId: string;
  kind: string;
  mode: string;
  readOnly: boolean;
  hint: string;
  revokedAt: string | null;
  current: boolean;
  secret?: string;
}

const FIELDS = [
  "createdAt",
  "current",
  "hint",
  "id",
  "kind",
  "mode",
  "objectType",
  "projectId",
  "readOnly",
  "revokedAt",
];
const KEY_ID = /^key_[0-9a-hjkmnp-tv-z]{26}$/;

let h: TestApp;
let client: Client;

before(async () => {
  h = await buildTestApp(null);
  client = new Client(h.app, h.project.keys.secretLive);
});
after(async () => h.close());

async function list(c: Client): Promise<ApiKey[]> {
  return expectStatus<ListPage<ApiKey>>(await c.request("GET", "/v1/api-keys?limit=100"), 200).data;
}

test("list: the project's keys in the caller's mode, newest first, never a secret, the caller's own marked", async () => {
  const keys = await list(client);
  // createProject makes a secret and a publishable key per mode: two live keys.
  assert.equal(keys.length, 2);
  for (const key of keys) {
    assert.deepEqual(Object.keys(key).sort(), FIELDS);
    assert.match(key.id, KEY_ID);
    assert.equal(key.objectType, "api_key");
    assert.equal(key.mode, "live");
    assert.equal(key.projectId, h.project.project.id);
    assert.match(key.createdAt, UTC_MS);
    assert.match(key.hint, /^[A-Za-z0-9]{4}$/);
    assert.equal(key.revokedAt, null);
  }
  const own = keys.filter((key) => key.current);
  assert.equal(own.length, 1);
  assert.equal(own[0]?.kind, "secret");
  assert.equal(own[0]?.hint, h.project.keys.secretLive.slice(-4));
  assert.ok(!JSON.stringify(keys).includes(h.project.keys.secretLive), "no secret in the list");
  assert.ok(!JSON.stringify(keys).includes(h.project.keys.publishableLive));
  const sorted = [...keys].sort((a, b) => (a.id < b.id ? 1 : -1));
  assert.deepEqual(
    keys.map((key) => key.id),
    sorted.map((key) => key.id),
  );

  // The test key sees the test keys only.
  const testKeys = await list(new Client(h.app, h.project.keys.secretTest));
  assert.equal(testKeys.length, 2);
  assert.ok(testKeys.every((key) => key.mode === "test"));
});

test("create: a working key in the caller's project and mode, its secret shown once", async () => {
  const created = expectStatus<ApiKey>(
    await client.request("POST", "/v1/api-keys", { body: { kind: "secret", readOnly: true } }),
    201,
  );
  assert.match(created.secret ?? "", /^sk_live_[A-Za-z0-9]{32}$/);
  assert.equal(created.hint, created.secret?.slice(-4));
  assert.equal(created.readOnly, true);
  assert.equal(created.current, false);
  // It works, read-only.
  const readOnly = new Client(h.app, created.secret ?? "");
  expectStatus(await readOnly.request("GET", "/v1/end-users"), 200);
  assertError(
    await readOnly.request("POST", "/v1/end-users", { body: { companyName: "X", sourceId: "x" } }),
    {
      status: 403,
      code: "API_KEY_READ_ONLY",
      type: PERMISSION,
      param: null,
    },
  );
  // Listed without its secret.
  const listed = (await list(client)).find((key) => key.id === created.id);
  assert.ok(listed);
  assert.equal(Object.hasOwn(listed, "secret"), false);

  // Defaults: a full-access secret key; a publishable key in the caller's mode.
  const plain = expectStatus<ApiKey>(await client.request("POST", "/v1/api-keys", { body: {} }), 201);
  assert.match(plain.secret ?? "", /^sk_live_/);
  assert.equal(plain.readOnly, false);
  const testClient = new Client(h.app, h.project.keys.secretTest);
  const publishable = expectStatus<ApiKey>(
    await testClient.request("POST", "/v1/api-keys", { body: { kind: "publishable" } }),
    201,
  );
  assert.match(publishable.secret ?? "", /^pk_test_[A-Za-z0-9]{24}$/);
});

test("create: bad input is refused with a code and a param, and nothing is made", async () => {
  const before = (await list(client)).length;
  const cases: Array<[unknown, string, string]> = [
    [{ kind: "admin" }, "INVALID_PARAMETER", "kind"],
    [{ readOnly: "yes" }, "INVALID_PARAMETER", "readOnly"],
    [{ kind: "publishable", readOnly: true }, "INVALID_PARAMETER", "readOnly"],
    [{ mode: "test" }, "UNKNOWN_PARAMETER", "mode"],
  ];
  for (const [body, code, param] of cases) {
    const error = assertError(await client.request("POST", "/v1/api-keys", { body }), {
      status: 400,
      code,
      type: INVALID,
      param,
    });
    assert.ok(error.message.length > 0);
  }
  assert.equal((await list(client)).length, before);
});

test("revoke: the key stops working at once; revoking again answers it unchanged", async () => {
  const created = expectStatus<ApiKey>(await client.request("POST", "/v1/api-keys", { body: {} }), 201);
  const other = new Client(h.app, created.secret ?? "");
  expectStatus(await other.request("GET", "/v1/end-users"), 200);
  const revoked = expectStatus<ApiKey>(
    await client.request("POST", `/v1/api-keys/${created.id}/revoke`, { body: {} }),
    200,
  );
  assert.match(revoked.revokedAt ?? "", UTC_MS);
  assertError(await other.request("GET", "/v1/end-users"), {
    status: 401,
    code: "API_KEY_INVALID",
    type: AUTHENTICATION,
    param: "Authorization",
  });
  const again = expectStatus<ApiKey>(
    await client.request("POST", `/v1/api-keys/${created.id}/revoke`, { body: {} }),
    200,
  );
  assert.equal(again.revokedAt, revoked.revokedAt);
});

test("revoke: not the calling key, not by a read-only key, not another project's or mode's key", async () => {
  const own = (await list(client)).find((key) => key.current);
  assert.ok(own);
  assertError(await client.request("POST", `/v1/api-keys/${own.id}/revoke`, { body: {} }), {
    status: 403,
    code: "PERMISSION_DENIED",
    type: PERMISSION,
    param: "id",
  });

  const readOnlyKey = await createApiKey(h.deps, h.project.project.id, {
    kind: "secret",
    mode: "live",
    readOnly: true,
  });
  const readOnly = new Client(h.app, readOnlyKey.secret);
  const target = expectStatus<ApiKey>(await client.request("POST", "/v1/api-keys", { body: {} }), 201);
  assertError(await readOnly.request("POST", `/v1/api-keys/${target.id}/revoke`, { body: {} }), {
    status: 403,
    code: "API_KEY_READ_ONLY",
    type: PERMISSION,
    param: null,
  });
  assertError(await readOnly.request("POST", "/v1/api-keys", { body: {} }), {
    status: 403,
    code: "API_KEY_READ_ONLY",
    type: PERMISSION,
    param: null,
  });
  expectStatus(await readOnly.request("GET", "/v1/api-keys"), 200);

  // Another project: its keys are invisible and cannot be revoked from here.
  const stranger = await createProject(h.deps, { name: "Stranger" });
  const strangerClient = new Client(h.app, stranger.keys.secretLive);
  const strangerKeys = await list(strangerClient);
  const ownIds = new Set((await list(client)).map((key) => key.id));
  for (const key of strangerKeys) {
    assert.equal(ownIds.has(key.id), false);
    assertError(await client.request("POST", `/v1/api-keys/${key.id}/revoke`, { body: {} }), {
      status: 404,
      code: "RESOURCE_MISSING",
      type: INVALID,
      param: "id",
    });
  }
  expectStatus(await strangerClient.request("GET", "/v1/end-users"), 200);
  assert.ok(
    (await list(strangerClient)).every((key) => key.revokedAt === null),
    "nothing of theirs revoked",
  );

  // The same project's other mode: invisible to this mode's key.
  const testKeys = await list(new Client(h.app, h.project.keys.secretTest));
  for (const key of testKeys) {
    assertError(await client.request("POST", `/v1/api-keys/${key.id}/revoke`, { body: {} }), {
      status: 404,
      code: "RESOURCE_MISSING",
      type: INVALID,
      param: "id",
    });
  }
});

test("list: pages with a cursor of the caller's list only", async () => {
  const page = expectStatus<ListPage<ApiKey>>(await client.request("GET", "/v1/api-keys?limit=1"), 200);
  assert.equal(page.data.length, 1);
  assert.equal(page.hasMore, true);
  assert.ok(page.nextCursor);
  const next = expectStatus<ListPage<ApiKey>>(
    await client.request("GET", `/v1/api-keys?limit=1&cursor=${encodeURIComponent(page.nextCursor)}`),
    200,
  );
  assert.ok((next.data[0]?.id ?? "") < (page.data[0]?.id ?? ""));
  const foreign = new Client(h.app, h.project.keys.secretTest);
  assertError(await foreign.request("GET", `/v1/api-keys?cursor=${encodeURIComponent(page.nextCursor)}`), {
    status: 400,
    code: "CURSOR_INVALID",
    type: INVALID,
    param: "cursor",
  });
});
