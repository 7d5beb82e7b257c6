import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createProject } from "../../src/tenancy/api-keys.ts";
import { bearer, buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { Client, INVALID, assertError, expectStatus, type ListPage } from "./helpers.ts";

interface RequestSummary {
  id: string;
  endUserId: string;
  status: string;
}

test("Requests list: newest first, cursor pages, and a cursor is bound to its project", async (t) => {
  const h = await buildTestApp(t);
  const key = h.project.keys.secretLive;
  const created = await h.app.inject({
    method: "POST",
    url: "/v1/end-users",
    headers: bearer(key),
    payload: { companyName: "R", sourceId: "r" },
  });
  const endUserId = created.json<{ id: string }>().id;
  // Without a connection each call is recorded as a failed Request (spec: connectionId null).
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await h.app.inject({
      method: "GET",
      url: "/v1/ledger-desktop/health-check",
      headers: { ...bearer(key), "svc-end-user-id": endUserId },
    });
    assert.equal(res.statusCode, 422, res.body);
    ids.push(String(res.headers["svc-request-id"]));
  }
  const first = await h.app.inject({ method: "GET", url: "/v1/requests?limit=2", headers: bearer(key) });
  const page1 = first.json<{
    data: { id: string; connectionId: string | null }[];
    nextCursor: string;
    hasMore: boolean;
  }>();
  assert.deepEqual(
    page1.data.map((r) => r.id),
    [ids[2], ids[1]],
  );
  assert.equal(page1.hasMore, true);
  const second = await h.app.inject({
    method: "GET",
    url: `/v1/requests?limit=2&cursor=${page1.nextCursor}`,
    headers: bearer(key),
  });
  const page2 = second.json<{ data: { id: string }[]; nextCursor: string | null }>();
  assert.deepEqual(
    page2.data.map((r) => r.id),
    [ids[0]],
  );
  assert.equal(page2.nextCursor, null);

  const other = await createProject(h.deps, { name: "Other" });
  const foreign = await h.app.inject({
    method: "GET",
    url: `/v1/requests?cursor=${page1.nextCursor}`,
    headers: bearer(other.keys.secretLive),
  });
  assert.equal(foreign.statusCode, 400, foreign.body);
  assert.equal(foreign.json<{ error: { code: string; param: string } }>().error.code, "CURSOR_INVALID");
  const hidden = await h.app.inject({
    method: "GET",
    url: `/v1/requests/${ids[0]}`,
    headers: bearer(other.keys.secretLive),
  });
  assert.equal(hidden.statusCode, 404);
  assert.equal(hidden.json<{ error: { code: string } }>().error.code, "RESOURCE_MISSING");
});

describe("Requests list: a cursor is bound to the filters of its first page", () => {
  let h: TestApp;
  let client: Client;
  let alice: string;
  let bob: string;

  /** Records `count` failed health checks for an end user (no connection: recorded, then failed). */
  async function failedCalls(endUserId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await client.request("GET", "/v1/ledger-desktop/health-check", {
        headers: { "svc-end-user-id": endUserId },
      });
      assert.equal(res.statusCode, 422, res.body);
    }
  }

  async function page(url: string): Promise<ListPage<RequestSummary>> {
    return expectStatus<ListPage<RequestSummary>>(await client.request("GET", url), 200);
  }

  before(async () => {
    h = await buildTestApp(null);
    client = new Client(h.app, h.project.keys.secretLive);
    alice = (await client.createEndUser()).id;
    bob = (await client.createEndUser()).id;
    await failedCalls(alice, 3);
    await failedCalls(bob, 2);
  });
  after(() => h.close());

  test("the same filters continue the list, in any parameter order", async () => {
    const first = await page(`/v1/requests?endUserId=${alice}&status=failed&limit=2`);
    assert.equal(first.data.length, 2);
    assert.ok(first.nextCursor, JSON.stringify(first));
    const second = await page(
      `/v1/requests?status=failed&cursor=${encodeURIComponent(first.nextCursor)}&endUserId=${alice}&limit=2`,
    );
    assert.equal(second.data.length, 1);
    assert.equal(second.nextCursor, null);
    const seen = [...first.data, ...second.data];
    assert.equal(new Set(seen.map((r) => r.id)).size, 3);
    assert.ok(
      seen.every((r) => r.endUserId === alice),
      JSON.stringify(seen),
    );
  });

  test("limit may change between pages", async () => {
    const first = await page(`/v1/requests?endUserId=${alice}&limit=1`);
    assert.ok(first.nextCursor, JSON.stringify(first));
    const rest = await page(
      `/v1/requests?endUserId=${alice}&limit=100&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    assert.equal(rest.data.length, 2);
    assert.ok(rest.data.every((r) => r.endUserId === alice && r.id < (first.data[0]?.id ?? "")));
    const unfiltered = await page("/v1/requests?limit=2");
    assert.ok(unfiltered.nextCursor, JSON.stringify(unfiltered));
    const next = await page(`/v1/requests?limit=3&cursor=${encodeURIComponent(unfiltered.nextCursor)}`);
    assert.equal(next.data.length, 3);
  });

  test("a changed filter returns 400 CURSOR_PARAMS_MISMATCH naming cursor", async () => {
    const first = await page(`/v1/requests?endUserId=${alice}&limit=1`);
    assert.ok(first.nextCursor, JSON.stringify(first));
    const res = await client.request(
      "GET",
      `/v1/requests?endUserId=${bob}&limit=1&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    assertError(res, { status: 400, code: "CURSOR_PARAMS_MISMATCH", type: INVALID, param: "cursor" });
  });

  test("an added filter returns 400 CURSOR_PARAMS_MISMATCH", async () => {
    const first = await page("/v1/requests?limit=1");
    assert.ok(first.nextCursor, JSON.stringify(first));
    const res = await client.request(
      "GET",
      `/v1/requests?status=failed&limit=1&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    assertError(res, { status: 400, code: "CURSOR_PARAMS_MISMATCH", type: INVALID, param: "cursor" });
  });

  test("a dropped filter returns 400 CURSOR_PARAMS_MISMATCH", async () => {
    const first = await page(`/v1/requests?endUserId=${alice}&status=failed&limit=1`);
    assert.ok(first.nextCursor, JSON.stringify(first));
    const res = await client.request(
      "GET",
      `/v1/requests?endUserId=${alice}&limit=1&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    assertError(res, { status: 400, code: "CURSOR_PARAMS_MISMATCH", type: INVALID, param: "cursor" });
  });

  test("the cursor alone (optionally with a new limit) continues the filtered list", async () => {
    const first = await page(`/v1/requests?endUserId=${alice}&status=failed&limit=1`);
    assert.ok(first.nextCursor, JSON.stringify(first));
    const second = await page(`/v1/requests?cursor=${encodeURIComponent(first.nextCursor)}`);
    assert.equal(second.data.length, 2, "the cursor keeps the first page's filters (alice has 3)");
    assert.ok(second.data.every((r) => r.endUserId === alice && r.status === "failed"));
    assert.equal(second.nextCursor, null);
    const shorter = await page(`/v1/requests?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`);
    assert.equal(shorter.data.length, 1);
    assert.ok(shorter.nextCursor, JSON.stringify(shorter));
    const last = await page(`/v1/requests?cursor=${encodeURIComponent(shorter.nextCursor)}`);
    assert.deepEqual(
      [...first.data, ...shorter.data, ...last.data].map((r) => r.endUserId),
      [alice, alice, alice],
    );
  });

  test("a tampered cursor carrying an invalid filter is CURSOR_INVALID", async () => {
    const forged = Buffer.from(
      JSON.stringify({
        l: `requests:${h.project.project.id}`,
        a: "req_zzzzzzzzzzzzzzzzzzzzzzzzzz",
        f: { status: "nope" },
      }),
    ).toString("base64url");
    const res = await client.request("GET", `/v1/requests?cursor=${forged}`);
    assertError(res, { status: 400, code: "CURSOR_INVALID", type: INVALID, param: "cursor" });
  });

  test("a changed date filter returns 400 CURSOR_PARAMS_MISMATCH", async () => {
    const since = "2000-01-01";
    const first = await page(`/v1/requests?createdAfter=${since}&limit=1`);
    assert.ok(first.nextCursor, JSON.stringify(first));
    const cursor = encodeURIComponent(first.nextCursor);
    const same = await page(`/v1/requests?createdAfter=${since}&limit=1&cursor=${cursor}`);
    assert.equal(same.data.length, 1);
    const res = await client.request("GET", `/v1/requests?createdAfter=2000-01-02&limit=1&cursor=${cursor}`);
    assertError(res, { status: 400, code: "CURSOR_PARAMS_MISMATCH", type: INVALID, param: "cursor" });
  });

  test("a foreign cursor stays CURSOR_INVALID whatever the filters", async (t) => {
    const other = await buildTestApp(t);
    const theirs = new Client(other.app, other.project.keys.secretLive);
    const user = (await theirs.createEndUser()).id;
    for (let i = 0; i < 2; i++)
      await theirs.request("GET", "/v1/ledger-desktop/health-check", {
        headers: { "svc-end-user-id": user },
      });
    const first = expectStatus<ListPage<RequestSummary>>(
      await theirs.request("GET", "/v1/requests?limit=1"),
      200,
    );
    assert.ok(first.nextCursor, JSON.stringify(first));
    const res = await client.request(
      "GET",
      `/v1/requests?status=failed&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    assertError(res, { status: 400, code: "CURSOR_INVALID", type: INVALID, param: "cursor" });
  });
});
