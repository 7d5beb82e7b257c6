import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { createApiKey, createProject } from "../../src/tenancy/api-keys.ts";
import { Client, INVALID, PERMISSION, UTC_MS, assertError, expectStatus, type ListPage } from "./helpers.ts";

/**
 * Spec: Platform endpoints (webhook endpoints, deliveries), Webhook endpoint and Webhook delivery
 * resources, Limits (webhooks), Events (1 to 7 event types); architecture §5.
 */
interface Endpoint {
  id: string;
  objectType: string;
  createdAt: string;
  projectId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  includeSyncRequests: boolean;
  secretRotatedAt: string | null;
  previousSecretExpiresAt: string | null;
  secret?: string;
}

interface Delivery {
  id: string;
  objectType: string;
  eventId: string;
  eventType: string;
  status: string;
  attemptCount: number;
  endpointId: string;
}

const FIELDS = [
  "createdAt",
  "description",
  "disabledReason",
  "enabled",
  "eventTypes",
  "id",
  "includeSyncRequests",
  "objectType",
  "previousSecretExpiresAt",
  "projectId",
  "secretRotatedAt",
  "url",
];
const URL_OK = "https://hooks.customer.com/ledger";

let h: TestApp;
let client: Client;

before(async () => {
  h = await buildTestApp(null, { config: { WEBHOOK_ENDPOINT_LIMIT: "1000" } });
  client = new Client(h.app, h.project.keys.secretLive);
});
after(() => h.close());

async function create(c: Client, body: Record<string, unknown> = {}): Promise<Endpoint> {
  const res = await c.request("POST", "/v1/webhook-endpoints", {
    body: { url: URL_OK, eventTypes: ["request.*"], ...body },
  });
  return expectStatus<Endpoint>(res, 201);
}

async function count(c: Client): Promise<number> {
  const page = expectStatus<ListPage<Endpoint>>(
    await c.request("GET", "/v1/webhook-endpoints?limit=100"),
    200,
  );
  return page.data.length;
}

describe("Webhook endpoints: create, retrieve, list, update, delete", () => {
  test("create returns 201 with every field and the whsec_ secret, which no read shows again", async () => {
    const res = await client.request("POST", "/v1/webhook-endpoints", {
      body: { url: URL_OK, eventTypes: ["request.succeeded", "connection.*"], description: "Books sync" },
    });
    const endpoint = expectStatus<Endpoint>(res, 201);
    assert.deepEqual(Object.keys(endpoint).sort(), [...FIELDS, "secret"].sort());
    assert.match(endpoint.id, /^whe_[0-9a-hjkmnp-tv-z]{26}$/);
    assert.equal(endpoint.objectType, "webhook_endpoint");
    assert.match(endpoint.createdAt, UTC_MS);
    assert.equal(endpoint.projectId, h.project.project.id);
    assert.equal(endpoint.url, URL_OK);
    assert.equal(endpoint.description, "Books sync");
    assert.deepEqual(endpoint.eventTypes, ["request.succeeded", "connection.*"]);
    assert.equal(endpoint.enabled, true);
    assert.equal(endpoint.disabledReason, null);
    assert.equal(endpoint.includeSyncRequests, false);
    assert.equal(endpoint.secretRotatedAt, null);
    assert.equal(endpoint.previousSecretExpiresAt, null);
    assert.match(endpoint.secret ?? "", /^whsec_[A-Za-z0-9+/]{43}=$/);
    const retrieved = expectStatus<Endpoint>(
      await client.request("GET", `/v1/webhook-endpoints/${endpoint.id}`),
      200,
    );
    assert.deepEqual(Object.keys(retrieved).sort(), FIELDS);
    const { secret: _secret, ...withoutSecret } = endpoint;
    assert.deepEqual(retrieved, withoutSecret);
    const page = expectStatus<ListPage<Endpoint>>(await client.request("GET", "/v1/webhook-endpoints"), 200);
    assert.ok(page.data.every((e) => !("secret" in e)));
    assert.ok(!JSON.stringify(page).includes(endpoint.secret ?? "-"));
  });

  test("the list is newest first with platform cursors", async () => {
    const project = await createProject(h.deps, { name: "Endpoint list" });
    const own = new Client(h.app, project.keys.secretLive);
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await create(own, { description: `#${i}` })).id);
    const first = expectStatus<ListPage<Endpoint>>(
      await own.request("GET", "/v1/webhook-endpoints?limit=2"),
      200,
    );
    assert.equal(first.objectType, "list");
    assert.equal(first.url, "/v1/webhook-endpoints");
    assert.deepEqual(
      first.data.map((e) => e.id),
      [made[2], made[1]],
    );
    assert.equal(first.hasMore, true);
    assert.equal(first.remainingCount, null);
    assert.equal(first.cursorExpiresAt, null);
    const cursor = encodeURIComponent(first.nextCursor ?? "");
    const second = expectStatus<ListPage<Endpoint>>(
      await own.request("GET", `/v1/webhook-endpoints?cursor=${cursor}`),
      200,
    );
    assert.deepEqual(
      second.data.map((e) => e.id),
      [made[0]],
    );
    assert.equal(second.nextCursor, null);
    assertError(await client.request("GET", `/v1/webhook-endpoints?cursor=${cursor}`), {
      status: 400,
      code: "CURSOR_INVALID",
      type: INVALID,
      param: "cursor",
    });
  });

  test("update changes only the fields sent; null clears the description; the URL rules apply again", async () => {
    const endpoint = await create(client, { description: "before", includeSyncRequests: true });
    const res = await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}`, {
      body: { eventTypes: ["request.failed"], description: null },
    });
    const updated = expectStatus<Endpoint>(res, 200);
    const { secret: _secret, ...shown } = endpoint;
    assert.deepEqual(updated, { ...shown, eventTypes: ["request.failed"], description: null });
    const moved = expectStatus<Endpoint>(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}`, {
        body: { url: "https://other.customer.com/in", enabled: false, includeSyncRequests: false },
      }),
      200,
    );
    assert.equal(moved.url, "https://other.customer.com/in");
    assert.equal(moved.enabled, false);
    assert.equal(moved.includeSyncRequests, false);
    assert.deepEqual(moved.eventTypes, ["request.failed"]);
    assertError(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}`, {
        body: { url: "http://10.0.0.1/x" },
      }),
      { status: 400, code: "INVALID_PARAMETER", type: INVALID, param: "url" },
    );
    assertError(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}`, { body: { url: null } }),
      {
        status: 400,
        code: "FIELD_NOT_CLEARABLE",
        type: INVALID,
        param: "url",
      },
    );
    const unchanged = expectStatus<Endpoint>(
      await client.request("GET", `/v1/webhook-endpoints/${endpoint.id}`),
      200,
    );
    assert.equal(unchanged.url, "https://other.customer.com/in", "a refused update changes nothing");
  });

  test("enabling an automatically disabled endpoint clears disabledReason", async () => {
    const endpoint = await create(client);
    await h.deps.db
      .updateTable("webhook_endpoints")
      .set({
        enabled: false,
        disabled_reason: "Every delivery attempt failed for 5 days.",
        failing_since: new Date(0),
      })
      .where("id", "=", endpoint.id)
      .execute();
    const disabled = expectStatus<Endpoint>(
      await client.request("GET", `/v1/webhook-endpoints/${endpoint.id}`),
      200,
    );
    assert.equal(disabled.disabledReason, "Every delivery attempt failed for 5 days.");
    const described = expectStatus<Endpoint>(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}`, { body: { description: "x" } }),
      200,
    );
    assert.equal(
      described.disabledReason,
      "Every delivery attempt failed for 5 days.",
      "other updates keep it",
    );
    const enabled = expectStatus<Endpoint>(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: true } }),
      200,
    );
    assert.equal(enabled.enabled, true);
    assert.equal(enabled.disabledReason, null);
    const row = await h.deps.db
      .selectFrom("webhook_endpoints")
      .select("failing_since")
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.failing_since, null, "the failure streak starts afresh");
  });

  test("delete answers {id, objectType, deleted: true}; the endpoint is gone", async () => {
    const endpoint = await create(client);
    const res = await client.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`);
    assert.deepEqual(expectStatus(res, 200), {
      id: endpoint.id,
      objectType: "webhook_endpoint",
      deleted: true,
    });
    assertError(await client.request("GET", `/v1/webhook-endpoints/${endpoint.id}`), {
      status: 404,
      code: "RESOURCE_MISSING",
      type: INVALID,
      param: "id",
    });
  });

  test("rotate-secret returns a new secret once; the previous one stays valid for 24 hours", async () => {
    const endpoint = await create(client);
    const rotated = expectStatus<Endpoint>(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`),
      200,
    );
    assert.match(rotated.secret ?? "", /^whsec_/);
    assert.notEqual(rotated.secret, endpoint.secret);
    const now = h.clock.now();
    assert.equal(rotated.secretRotatedAt, new Date(now).toISOString());
    assert.equal(rotated.previousSecretExpiresAt, new Date(now + 24 * 3_600_000).toISOString());
    const read = expectStatus<Endpoint>(
      await client.request("GET", `/v1/webhook-endpoints/${endpoint.id}`),
      200,
    );
    assert.equal(read.secret, undefined);
    assert.equal(read.previousSecretExpiresAt, rotated.previousSecretExpiresAt);
  });

  test("an Idempotency-Key replays the create (with its secret) instead of making a second endpoint", async () => {
    const project = await createProject(h.deps, { name: "Idempotent endpoints" });
    const own = new Client(h.app, project.keys.secretLive);
    const send = () =>
      own.request("POST", "/v1/webhook-endpoints", {
        body: { url: URL_OK, eventTypes: ["request.*"] },
        headers: { "idempotency-key": "create-hook-1" },
      });
    const first = expectStatus<Endpoint>(await send(), 201);
    const again = await send();
    assert.deepEqual(expectStatus<Endpoint>(again, 201), first);
    assert.equal(again.headers["idempotent-replayed"], "true");
    assert.equal(await count(own), 1);
  });
});

describe("Webhook endpoints: input rules (nothing is created or changed on error)", () => {
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ["http URL", { url: "http://hooks.customer.com/x" }, "INVALID_PARAMETER", "url"],
    ["IP address", { url: "https://93.184.216.34/x" }, "INVALID_PARAMETER", "url"],
    ["non-default port", { url: "https://hooks.customer.com:8443/x" }, "INVALID_PARAMETER", "url"],
    ["internal name", { url: "https://metadata.google.internal/x" }, "INVALID_PARAMETER", "url"],
    ["localhost without the allowance", { url: "http://localhost:9000/x" }, "INVALID_PARAMETER", "url"],
    ["URL over 2048", { url: `https://hooks.customer.com/${"a".repeat(2030)}` }, "STRING_TOO_LONG", "url"],
    ["missing url", { url: undefined }, "INVALID_PARAMETER", "url"],
    ["no event types", { eventTypes: [] }, "INVALID_PARAMETER", "eventTypes"],
    [
      "8 event types",
      {
        eventTypes: [
          "request.succeeded",
          "request.failed",
          "request.canceled",
          "request.outcome_unknown",
          "request.outcome_resolved",
          "connection.setup_completed",
          "connection.status_changed",
          "change_feed.changes",
        ],
      },
      "INVALID_PARAMETER",
      "eventTypes",
    ],
    [
      "unknown event type",
      { eventTypes: ["request.succeeded", "invoice.paid"] },
      "INVALID_PARAMETER",
      "eventTypes[1]",
    ],
    ["repeated event type", { eventTypes: ["request.*", "request.*"] }, "INVALID_PARAMETER", "eventTypes[1]"],
    ["webhook.test subscription", { eventTypes: ["webhook.test"] }, "INVALID_PARAMETER", "eventTypes[0]"],
    ["catch-all wildcard", { eventTypes: ["*"] }, "INVALID_PARAMETER", "eventTypes[0]"],
    ["description over 500", { description: "d".repeat(501) }, "STRING_TOO_LONG", "description"],
    ["NUL in description", { description: "a\u0000b" }, "UNSUPPORTED_CHARACTER", "description"],
    ["enabled as a string", { enabled: "yes" }, "INVALID_PARAMETER", "enabled"],
    ["unknown field", { secret: "whsec_mine" }, "UNKNOWN_PARAMETER", "secret"],
  ];
  for (const [name, override, code, param] of cases) {
    test(`create: ${name} → ${code} (${param})`, async () => {
      const before = await count(client);
      const res = await client.request("POST", "/v1/webhook-endpoints", {
        body: { url: URL_OK, eventTypes: ["request.*"], ...override },
      });
      assertError(res, { status: 400, code, type: INVALID, param });
      assert.equal(await count(client), before);
    });
  }

  test("1 and 7 event types, the wildcards and description of 500 are accepted", async () => {
    await create(client, { eventTypes: ["connection.*"], description: "d".repeat(500) });
    await create(client, {
      eventTypes: [
        "request.succeeded",
        "request.failed",
        "request.canceled",
        "request.outcome_unknown",
        "request.outcome_resolved",
        "connection.*",
        "change_feed.changes",
      ],
    });
  });

  test("the per-project endpoint cap (both modes together) answers WEBHOOK_ENDPOINT_LIMIT_REACHED", async () => {
    const capped = await buildTestApp(null, { config: { WEBHOOK_ENDPOINT_LIMIT: "2" } });
    try {
      const live = new Client(capped.app, capped.project.keys.secretLive);
      const testMode = new Client(capped.app, capped.project.keys.secretTest);
      await create(live);
      await create(testMode);
      const res = await live.request("POST", "/v1/webhook-endpoints", {
        body: { url: URL_OK, eventTypes: ["request.*"] },
      });
      assertError(res, { status: 422, code: "WEBHOOK_ENDPOINT_LIMIT_REACHED", type: INVALID, param: null });
      assert.match(res.json<{ error: { message: string } }>().error.message, /2 webhook endpoints/);
      assert.equal(await count(live), 1);
      const other = await createProject(capped.deps, { name: "Other" });
      await create(new Client(capped.app, other.keys.secretLive));
    } finally {
      await capped.close();
    }
  });
});

describe("Webhook endpoints: scoping by project and key mode, read-only keys", () => {
  let endpoint: Endpoint;
  let delivery: Delivery;
  before(async () => {
    endpoint = await create(client);
    delivery = expectStatus<Delivery>(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`),
      200,
    );
  });

  const operations = (): Array<[string, "GET" | "POST" | "DELETE", string, unknown]> => [
    ["retrieve", "GET", `/v1/webhook-endpoints/${endpoint.id}`, undefined],
    ["update", "POST", `/v1/webhook-endpoints/${endpoint.id}`, { description: "hijacked" }],
    ["rotate", "POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, undefined],
    ["test", "POST", `/v1/webhook-endpoints/${endpoint.id}/test`, undefined],
    ["deliveries", "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`, undefined],
    ["resend", "POST", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/resend`, undefined],
    ["delete", "DELETE", `/v1/webhook-endpoints/${endpoint.id}`, undefined],
  ];

  async function assertMissingFor(other: Client): Promise<void> {
    for (const [name, method, url, body] of operations()) {
      const res: LightMyRequestResponse = await other.request(
        method,
        url,
        body === undefined ? {} : { body },
      );
      assertError(res, { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "id" });
      assert.ok(!res.body.includes(endpoint.url), name);
    }
    const page = expectStatus<ListPage<Endpoint>>(
      await other.request("GET", "/v1/webhook-endpoints?limit=100"),
      200,
    );
    assert.ok(!page.data.some((e) => e.id === endpoint.id));
  }

  test("another project's endpoint does not exist (404 on every operation, absent from the list)", async () => {
    const other = await createProject(h.deps, { name: "Intruder" });
    await assertMissingFor(new Client(h.app, other.keys.secretLive));
  });

  test("the other key mode's endpoint does not exist (a test key cannot see or change a live endpoint)", async () => {
    await assertMissingFor(new Client(h.app, h.project.keys.secretTest));
    const still = expectStatus<Endpoint>(
      await client.request("GET", `/v1/webhook-endpoints/${endpoint.id}`),
      200,
    );
    assert.equal(still.description, null);
  });

  test("a read-only key may read but not write", async () => {
    const readOnly = await createApiKey(h.deps, h.project.project.id, {
      kind: "secret",
      mode: "live",
      readOnly: true,
    });
    const ro = new Client(h.app, readOnly.secret);
    for (const [name, method, url, body] of operations()) {
      const res = await ro.request(method, url, body === undefined ? {} : { body });
      if (method === "GET") expectStatus(res, 200);
      else assertError(res, { status: 403, code: "API_KEY_READ_ONLY", type: PERMISSION, param: null });
      assert.ok(res.statusCode === 200 || method !== "GET", name);
    }
    assertError(
      await ro.request("POST", "/v1/webhook-endpoints", { body: { url: URL_OK, eventTypes: ["request.*"] } }),
      {
        status: 403,
        code: "API_KEY_READ_ONLY",
        type: PERMISSION,
        param: null,
      },
    );
  });
});

describe("Webhook deliveries: list and resend", () => {
  test("deliveries are listed newest first, filtered by status, with cursors bound to the filter", async () => {
    const endpoint = await create(client);
    const made: Delivery[] = [];
    for (let i = 0; i < 3; i++)
      made.push(
        expectStatus<Delivery>(
          await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`),
          200,
        ),
      );
    await h.deps.db
      .updateTable("webhook_deliveries")
      .set({ status: "failed", next_attempt_at: null })
      .where("id", "=", made[1]?.id ?? "")
      .execute();
    const base = `/v1/webhook-endpoints/${endpoint.id}/deliveries`;
    const all = expectStatus<ListPage<Delivery>>(await client.request("GET", base), 200);
    assert.equal(all.url, base);
    assert.deepEqual(
      all.data.map((d) => d.id),
      made.map((d) => d.id).reverse(),
    );
    assert.ok(all.data.every((d) => d.objectType === "webhook_delivery" && d.endpointId === endpoint.id));
    const pending = expectStatus<ListPage<Delivery>>(
      await client.request("GET", `${base}?status=pending&limit=1`),
      200,
    );
    assert.deepEqual(
      pending.data.map((d) => d.id),
      [made[2]?.id],
    );
    const cursor = encodeURIComponent(pending.nextCursor ?? "");
    const next = expectStatus<ListPage<Delivery>>(
      await client.request("GET", `${base}?cursor=${cursor}`),
      200,
    );
    assert.deepEqual(
      next.data.map((d) => d.id),
      [made[0]?.id],
      "the cursor keeps the status filter",
    );
    assertError(await client.request("GET", `${base}?cursor=${cursor}&status=failed`), {
      status: 400,
      code: "CURSOR_PARAMS_MISMATCH",
      type: INVALID,
      param: "cursor",
    });
    const failed = expectStatus<ListPage<Delivery>>(
      await client.request("GET", `${base}?status=failed`),
      200,
    );
    assert.deepEqual(
      failed.data.map((d) => d.id),
      [made[1]?.id],
    );
    assertError(await client.request("GET", `${base}?status=lost`), {
      status: 400,
      code: "INVALID_PARAMETER",
      type: INVALID,
      param: "status",
    });
    assertError(await client.request("GET", `${base}?limit=101`), {
      status: 400,
      code: "INVALID_PARAMETER",
      type: INVALID,
      param: "limit",
    });
  });

  test("resend creates a new pending delivery of the same event; an unknown delivery is 404", async () => {
    const endpoint = await create(client);
    const original = expectStatus<Delivery>(
      await client.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`),
      200,
    );
    const res = await client.request(
      "POST",
      `/v1/webhook-endpoints/${endpoint.id}/deliveries/${original.id}/resend`,
    );
    const resent = expectStatus<Delivery>(res, 200);
    assert.notEqual(resent.id, original.id);
    assert.equal(resent.eventId, original.eventId, "same webhook-id");
    assert.equal(resent.eventType, "webhook.test");
    assert.equal(resent.status, "pending");
    assert.equal(resent.attemptCount, 0);
    const other = await create(client);
    assertError(
      await client.request("POST", `/v1/webhook-endpoints/${other.id}/deliveries/${original.id}/resend`),
      { status: 404, code: "RESOURCE_MISSING", type: INVALID, param: "deliveryId" },
    );
  });
});
