import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { INVALID, assertError, expectStatus } from "./helpers.ts";

/**
 * Change feed subscriptions (spec: Change feed subscription; issue 9 item 5): create, retrieve,
 * update (omitted fields unchanged), delete, list newest first; `resources` kept alphabetical and
 * checked against the typed resources listed by modification time; `intervalMinutes` bounds.
 */
let h: TestApp;
before(async () => {
  h = await buildTestApp(null);
});
after(() => h.close());

const headers = (): Record<string, string> => ({ authorization: `Bearer ${h.project.keys.secretLive}` });

async function call(method: "GET" | "POST" | "DELETE", url: string, payload?: unknown) {
  return h.app.inject({
    method,
    url,
    headers: headers(),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

interface Subscription {
  id: string;
  objectType: string;
  resources: string[];
  intervalMinutes: number;
  enabled: boolean;
  projectId: string;
  createdAt: string;
  updatedAt: string;
}

describe("Change feed subscriptions", () => {
  test("create keeps resources alphabetical with defaults; retrieve and list show it; update keeps omitted fields", async () => {
    const created = expectStatus<Subscription>(
      await call("POST", "/v1/change-feed-subscriptions", { resources: ["invoices", "customers"] }),
      201,
    );
    assert.match(created.id, /^cfs_/);
    assert.equal(created.objectType, "change_feed_subscription");
    assert.deepEqual(created.resources, ["customers", "invoices"]);
    assert.equal(created.intervalMinutes, 15);
    assert.equal(created.enabled, true);
    assert.equal(created.projectId, h.project.project.id);
    assert.deepEqual(
      expectStatus<Subscription>(await call("GET", `/v1/change-feed-subscriptions/${created.id}`), 200),
      created,
    );
    const later = expectStatus<Subscription>(
      await call("POST", "/v1/change-feed-subscriptions", { resources: ["customers"], intervalMinutes: 60 }),
      201,
    );
    const list = expectStatus<{ data: Subscription[] }>(
      await call("GET", "/v1/change-feed-subscriptions"),
      200,
    );
    assert.deepEqual(
      list.data.slice(0, 2).map((s) => s.id),
      [later.id, created.id],
      "newest first",
    );
    const paused = expectStatus<Subscription>(
      await call("POST", `/v1/change-feed-subscriptions/${created.id}`, { enabled: false }),
      200,
    );
    assert.equal(paused.enabled, false);
    assert.deepEqual(paused.resources, ["customers", "invoices"], "omitted fields are unchanged");
    assert.equal(paused.intervalMinutes, 15);
    const deleted = expectStatus(await call("DELETE", `/v1/change-feed-subscriptions/${created.id}`), 200);
    assert.deepEqual(deleted, { id: created.id, objectType: "change_feed_subscription", deleted: true });
    assertError(await call("GET", `/v1/change-feed-subscriptions/${created.id}`), {
      status: 404,
      code: "RESOURCE_MISSING",
      type: INVALID,
      param: "id",
    });
  });

  const cases: Array<[string, unknown, string]> = [
    [
      "a resource that cannot be listed by modification time",
      { resources: ["customers", "company"] },
      "resources[1]",
    ],
    ["an unknown resource", { resources: ["unicorns"] }, "resources[0]"],
    ["a repeated resource", { resources: ["customers", "customers"] }, "resources[1]"],
    ["no resources", { resources: [] }, "resources"],
    ["an interval of 0", { resources: ["customers"], intervalMinutes: 0 }, "intervalMinutes"],
    ["an interval over a day", { resources: ["customers"], intervalMinutes: 1441 }, "intervalMinutes"],
    ["a fractional interval", { resources: ["customers"], intervalMinutes: 1.5 }, "intervalMinutes"],
  ];
  for (const [name, body, param] of cases) {
    test(`create with ${name} → 400 INVALID_PARAMETER (${param}), nothing created`, async () => {
      const before = expectStatus<{ data: unknown[] }>(
        await call("GET", "/v1/change-feed-subscriptions?limit=100"),
        200,
      );
      assertError(await call("POST", "/v1/change-feed-subscriptions", body), {
        status: 400,
        code: "INVALID_PARAMETER",
        type: INVALID,
        param,
      });
      const now = expectStatus<{ data: unknown[] }>(
        await call("GET", "/v1/change-feed-subscriptions?limit=100"),
        200,
      );
      assert.equal(now.data.length, before.data.length);
    });
  }
});
