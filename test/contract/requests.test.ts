import assert from "node:assert/strict";
import { test } from "node:test";
import { createProject } from "../../src/tenancy/api-keys.ts";
import { bearer, buildTestApp } from "../../src/testing/harness.ts";

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
