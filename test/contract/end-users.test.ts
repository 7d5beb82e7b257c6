import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { createProject } from "../../src/tenancy/api-keys.ts";
import {
  Client,
  ID,
  INVALID,
  UTC_MS,
  assertError,
  expectStatus,
  type EndUser,
  type ListPage,
} from "./helpers.ts";

/** Spec: Platform endpoints (end users), list envelope, platform list limits; architecture §5. */
let h: TestApp;
let client: Client;

before(async () => {
  h = await buildTestApp(null);
  client = new Client(h.app, h.project.keys.secretLive);
});
after(() => h.close());

/** A client on a fresh, empty project (for list tests that count). */
async function emptyProject(): Promise<Client> {
  const project = await createProject(h.deps, { name: "List project" });
  return new Client(h.app, project.keys.secretLive);
}

function assertEndUserShape(user: EndUser, context: string): void {
  assert.deepEqual(
    Object.keys(user).sort(),
    ["companyName", "createdAt", "email", "id", "integrationConnections", "objectType", "sourceId"],
    context,
  );
  assert.match(user.id, ID.endUser, context);
  assert.equal(user.objectType, "end_user", context);
  assert.match(user.createdAt, UTC_MS, context);
  assert.ok(Array.isArray(user.integrationConnections), context);
}

async function connect(endUserId: string): Promise<void> {
  const res = await client.request("POST", "/v1/auth-sessions", {
    body: { publishableKey: h.project.keys.publishableLive, endUserId },
  });
  expectStatus(res, 201);
}

describe("End users: create, retrieve, update, delete", () => {
  test("creating an end user returns 201 with the end user resource", async () => {
    const res = await client.request("POST", "/v1/end-users", {
      body: { companyName: "Acme Ltd", sourceId: "crm-1", email: "books@acme.example" },
    });
    const user = expectStatus<EndUser>(res, 201);
    assertEndUserShape(user, res.body);
    assert.equal(user.companyName, "Acme Ltd");
    assert.equal(user.sourceId, "crm-1");
    assert.equal(user.email, "books@acme.example");
    assert.deepEqual(user.integrationConnections, []);
    assert.equal(user.createdAt, new Date(h.clock.now()).toISOString());
  });

  test("email is optional and null when omitted", async () => {
    const user = await client.createEndUser({ email: undefined });
    assert.equal(user.email, null);
  });

  test("retrieving an end user returns the same resource as the create", async () => {
    const created = await client.createEndUser();
    const res = await client.request("GET", `/v1/end-users/${created.id}`);
    assert.deepEqual(expectStatus<EndUser>(res, 200), created);
  });

  test("retrieving an unknown end user returns 404 RESOURCE_MISSING", async () => {
    const res = await client.request("GET", `/v1/end-users/eu_${"0".repeat(26)}`);
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });

  test("retrieving a malformed end user ID returns 404 RESOURCE_MISSING", async () => {
    const res = await client.request("GET", "/v1/end-users/not-an-id");
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });

  test("a duplicate sourceId on create returns 400 INVALID_PARAMETER naming sourceId and creates nothing", async () => {
    await client.createEndUser({ sourceId: "dup-create" });
    const before = await client.endUserIds();
    const res = await client.request("POST", "/v1/end-users", {
      body: { companyName: "Second", sourceId: "dup-create" },
    });
    assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "sourceId" });
    assert.deepEqual(await client.endUserIds(), before);
  });

  test("the same sourceId may be used in another project", async () => {
    await client.createEndUser({ sourceId: "shared-source" });
    const other = await emptyProject();
    await other.createEndUser({ sourceId: "shared-source" });
  });

  test("updating an end user changes only the fields sent", async () => {
    const created = await client.createEndUser({ companyName: "Old", email: "old@example.com" });
    const res = await client.request("POST", `/v1/end-users/${created.id}`, { body: { companyName: "New" } });
    const updated = expectStatus<EndUser>(res, 200);
    assert.deepEqual(updated, { ...created, companyName: "New" });
  });

  test("updating sourceId and email changes them, and email can be cleared with null", async () => {
    const created = await client.createEndUser({ email: "a@example.com" });
    const renamed = expectStatus<EndUser>(
      await client.request("POST", `/v1/end-users/${created.id}`, {
        body: { sourceId: `${created.sourceId}-renamed`, email: "b@example.com" },
      }),
      200,
    );
    assert.equal(renamed.sourceId, `${created.sourceId}-renamed`);
    assert.equal(renamed.email, "b@example.com");
    const cleared = expectStatus<EndUser>(
      await client.request("POST", `/v1/end-users/${created.id}`, { body: { email: null } }),
      200,
    );
    assert.equal(cleared.email, null);
  });

  test("an empty update returns the end user unchanged", async () => {
    const created = await client.createEndUser();
    const res = await client.request("POST", `/v1/end-users/${created.id}`, { body: {} });
    assert.deepEqual(expectStatus<EndUser>(res, 200), created);
  });

  test("updating to its own sourceId is allowed", async () => {
    const created = await client.createEndUser();
    const res = await client.request("POST", `/v1/end-users/${created.id}`, {
      body: { sourceId: created.sourceId },
    });
    assert.deepEqual(expectStatus<EndUser>(res, 200), created);
  });

  test("updating to another end user's sourceId returns 400 INVALID_PARAMETER and changes nothing", async () => {
    const first = await client.createEndUser({ sourceId: "dup-update-1" });
    const second = await client.createEndUser({ sourceId: "dup-update-2" });
    const res = await client.request("POST", `/v1/end-users/${second.id}`, {
      body: { sourceId: first.sourceId, companyName: "Changed" },
    });
    assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "sourceId" });
    const now = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${second.id}`), 200);
    assert.deepEqual(now, second);
  });

  test("updating an unknown end user returns 404 RESOURCE_MISSING", async () => {
    const res = await client.request("POST", `/v1/end-users/eu_${"0".repeat(26)}`, {
      body: { companyName: "X" },
    });
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });

  test("deleting an end user returns {id, objectType, deleted:true} and it is gone", async () => {
    const created = await client.createEndUser();
    const res = await client.request("DELETE", `/v1/end-users/${created.id}`);
    assert.deepEqual(expectStatus(res, 200), { id: created.id, objectType: "end_user", deleted: true });
    const after = await client.request("GET", `/v1/end-users/${created.id}`);
    assertError(after, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
    assert.ok(!(await client.endUserIds()).includes(created.id));
  });

  test("deleting an end user twice returns 404 RESOURCE_MISSING the second time", async () => {
    const created = await client.createEndUser();
    expectStatus(await client.request("DELETE", `/v1/end-users/${created.id}`), 200);
    const res = await client.request("DELETE", `/v1/end-users/${created.id}`);
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });

  test("deleting an end user with a connection removes it too", async () => {
    const created = await client.createEndUser();
    await connect(created.id);
    expectStatus(await client.request("DELETE", `/v1/end-users/${created.id}`), 200);
    const res = await client.request("GET", `/v1/end-users/${created.id}`);
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });

  test("a deleted end user's sourceId can be used again", async () => {
    const created = await client.createEndUser({ sourceId: "recycled" });
    expectStatus(await client.request("DELETE", `/v1/end-users/${created.id}`), 200);
    const again = await client.createEndUser({ sourceId: "recycled" });
    assert.notEqual(again.id, created.id);
  });

  test("a delete with an unknown body field returns 400 UNKNOWN_PARAMETER and deletes nothing", async () => {
    const created = await client.createEndUser();
    const res = await client.request("DELETE", `/v1/end-users/${created.id}`, { body: { force: true } });
    assertError(res, { status: 400, code: "UNKNOWN_PARAMETER", type: INVALID, param: "force" });
    expectStatus(await client.request("GET", `/v1/end-users/${created.id}`), 200);
  });
});

describe("End users: reset-company-file", () => {
  test("without a connection it returns 422 INTEGRATION_CONNECTION_NOT_SET_UP", async () => {
    const created = await client.createEndUser();
    const res = await client.request("POST", `/v1/end-users/${created.id}/reset-company-file`, { body: {} });
    assertError(res, {
      status: 422,
      code: "INTEGRATION_CONNECTION_NOT_SET_UP",
      type: "INTEGRATION_CONNECTION_ERROR",
      param: null,
    });
  });

  test("with a connection it returns 200 and the end user with its connection", async () => {
    const created = await client.createEndUser();
    await connect(created.id);
    for (const mode of ["path", "identity"]) {
      const res = await client.request("POST", `/v1/end-users/${created.id}/reset-company-file`, {
        body: { mode },
      });
      const user = expectStatus<EndUser>(res, 200);
      assertEndUserShape(user, res.body);
      assert.equal(user.integrationConnections.length, 1, res.body);
      assert.equal(user.integrationConnections[0]?.status, "pending_setup", res.body);
    }
  });

  test("without a body it defaults to mode path", async () => {
    const created = await client.createEndUser();
    await connect(created.id);
    const res = await client.request("POST", `/v1/end-users/${created.id}/reset-company-file`);
    expectStatus(res, 200);
  });

  test("an unknown mode returns 400 INVALID_PARAMETER naming mode", async () => {
    const created = await client.createEndUser();
    await connect(created.id);
    const res = await client.request("POST", `/v1/end-users/${created.id}/reset-company-file`, {
      body: { mode: "everything" },
    });
    assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "mode" });
  });

  test("an unknown end user returns 404 RESOURCE_MISSING", async () => {
    const res = await client.request("POST", `/v1/end-users/eu_${"0".repeat(26)}/reset-company-file`, {
      body: {},
    });
    assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
  });
});

describe("End users: list", () => {
  test("an empty project lists no end users in a complete envelope", async () => {
    const empty = await emptyProject();
    const res = await empty.request("GET", "/v1/end-users");
    assert.deepEqual(expectStatus(res, 200), {
      objectType: "list",
      url: "/v1/end-users",
      data: [],
      nextCursor: null,
      hasMore: false,
      remainingCount: null,
      cursorExpiresAt: null,
    });
  });

  test("the list is newest first, defaults to 50, and pages by cursor without duplicates or omissions", async () => {
    const lister = await emptyProject();
    const created: string[] = [];
    for (let i = 0; i < 57; i++) created.push((await lister.createEndUser()).id);
    const newestFirst = [...created].reverse();

    const first = expectStatus<ListPage<EndUser>>(await lister.request("GET", "/v1/end-users"), 200);
    assert.equal(first.objectType, "list");
    assert.equal(first.url, "/v1/end-users");
    assert.equal(first.data.length, 50);
    assert.equal(first.hasMore, true);
    assert.equal(typeof first.nextCursor, "string");
    assert.equal(first.remainingCount, null);
    assert.equal(first.cursorExpiresAt, null);
    assert.deepEqual(
      first.data.map((u) => u.id),
      newestFirst.slice(0, 50),
    );

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = cursor
        ? `/v1/end-users?limit=20&cursor=${encodeURIComponent(cursor)}`
        : "/v1/end-users?limit=20";
      const page = expectStatus<ListPage<EndUser>>(await lister.request("GET", url), 200);
      pages += 1;
      assert.equal(page.hasMore, page.nextCursor !== null, JSON.stringify(page));
      for (const user of page.data) assertEndUserShape(user, JSON.stringify(user));
      seen.push(...page.data.map((u) => u.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    assert.equal(pages, 3);
    assert.deepEqual(seen, newestFirst);
  });

  test("a page that ends exactly at the last end user has no next cursor", async () => {
    const lister = await emptyProject();
    for (let i = 0; i < 3; i++) await lister.createEndUser();
    const page = expectStatus<ListPage<EndUser>>(await lister.request("GET", "/v1/end-users?limit=3"), 200);
    assert.equal(page.data.length, 3);
    assert.equal(page.hasMore, false);
    assert.equal(page.nextCursor, null);
  });

  test("limit=1 returns one end user per page", async () => {
    const lister = await emptyProject();
    const a = await lister.createEndUser();
    const b = await lister.createEndUser();
    const first = expectStatus<ListPage<EndUser>>(await lister.request("GET", "/v1/end-users?limit=1"), 200);
    assert.deepEqual(
      first.data.map((u) => u.id),
      [b.id],
    );
    const second = expectStatus<ListPage<EndUser>>(
      await lister.request(
        "GET",
        `/v1/end-users?limit=1&cursor=${encodeURIComponent(first.nextCursor ?? "")}`,
      ),
      200,
    );
    assert.deepEqual(
      second.data.map((u) => u.id),
      [a.id],
    );
    assert.equal(second.nextCursor, null);
  });

  test("a malformed cursor returns 400 CURSOR_INVALID", async () => {
    const res = await client.request("GET", "/v1/end-users?cursor=not-a-cursor");
    assertError(res, { status: 400, code: "CURSOR_INVALID", type: INVALID, param: "cursor" });
  });

  test("a cursor of another list returns 400 CURSOR_INVALID", async () => {
    const foreign = Buffer.from(JSON.stringify({ l: "requests", a: `req_${"0".repeat(26)}` })).toString(
      "base64url",
    );
    const res = await client.request("GET", `/v1/end-users?cursor=${foreign}`);
    assertError(res, { status: 400, code: "CURSOR_INVALID", type: INVALID, param: "cursor" });
  });

  test("a cursor of another project's end user list returns 400 CURSOR_INVALID", async () => {
    const theirs = await emptyProject();
    for (let i = 0; i < 2; i++) await theirs.createEndUser();
    const page = expectStatus<ListPage<EndUser>>(await theirs.request("GET", "/v1/end-users?limit=1"), 200);
    assert.ok(page.nextCursor, JSON.stringify(page));
    const res = await client.request("GET", `/v1/end-users?cursor=${encodeURIComponent(page.nextCursor)}`);
    assertError(res, { status: 400, code: "CURSOR_INVALID", type: INVALID, param: "cursor" });
  });

  test("a cursor over 200 characters returns 400 INVALID_PARAMETER naming cursor", async () => {
    const res = await client.request("GET", `/v1/end-users?cursor=${"a".repeat(201)}`);
    assertError(res, { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "cursor" });
  });

  test("the list shows an end user's connection like retrieve does", async () => {
    const user = await client.createEndUser();
    await connect(user.id);
    const one = expectStatus<EndUser>(await client.request("GET", `/v1/end-users/${user.id}`), 200);
    const page = expectStatus<ListPage<EndUser>>(await client.request("GET", "/v1/end-users?limit=1"), 200);
    assert.deepEqual(page.data[0], one);
    assert.equal(one.integrationConnections.length, 1);
  });
});
