import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { apiRoutes } from "../../src/api/routes/index.ts";
import { resourceByPath } from "../../src/ledger/resources/definitions.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { TypedFactory } from "../../src/testing/typed-factory.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../src/testing/webhook-receiver.ts";
import { bringOnline, callAsEndUser, passthroughPath, READ, stopConnector } from "./helpers.ts";
import { checkEveryAnswer, type OpenApiContract } from "./openapi-contract.ts";
import { SYSTEM_CONFIG, untilDispatchSettled } from "./webhook-helpers.ts";

/**
 * Schemas cannot lie (decision 0020): real responses of every platform route and of a
 * representative set of typed operations — through HTTP, the connector protocol and the simulated
 * application — validate against the committed openapi.json (openapi-contract.ts: declared status
 * and media type, body by ajv in the strict view). Every call the system makes through `sys.call`
 * is checked, the factory's creates included.
 */
let sys: System;
let eu: ConnectedEndUser;
let receiver: WebhookReceiver;
let contract: OpenApiContract;
let factory: TypedFactory;
type Json = Record<string, unknown>;

before(async () => {
  sys = await startSystem(null, SYSTEM_CONFIG);
  receiver = await startWebhookReceiver(null);
  // Every answer of the system is checked against the document before the test reads it.
  contract = checkEveryAnswer(sys);
  eu = await sys.connectEndUser({ companyName: "Contract Co" });
  await bringOnline(sys, eu);
  factory = new TypedFactory((method, path, body) => callAsEndUser(sys, eu, method, path, body));
});
after(async () => {
  await receiver.close();
  await sys.close();
});

async function api(
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  init: { body?: unknown; headers?: Record<string, string>; endUserId?: string; key?: string } = {},
): Promise<{ status: number; body: Json }> {
  const response = await sys.call(method, path, init);
  const text = await response.text();
  return { status: response.status, body: text.startsWith("{") ? (JSON.parse(text) as Json) : { text } };
}

const app = (
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
) => api(method, `/v1/ledger-desktop/${path}`, { endUserId: eu.endUserId, ...init });

function expect(answer: { status: number; body: Json }, status: number, label: string): Json {
  assert.equal(answer.status, status, `${label}: ${JSON.stringify(answer.body).slice(0, 800)}`);
  return answer.body;
}

describe("platform routes answer as openapi.json says", () => {
  test("end users, auth sessions and their errors", async () => {
    const created = expect(
      await api("POST", "/v1/end-users", {
        body: { companyName: "Schema Co", sourceId: "schema-1", email: null },
      }),
      201,
      "create",
    );
    const id = String(created.id);
    expect(await api("GET", "/v1/end-users?limit=2"), 200, "list");
    expect(await api("GET", `/v1/end-users/${id}`), 200, "retrieve");
    expect(await api("GET", `/v1/end-users/${eu.endUserId}`), 200, "retrieve a connected one");
    const history = expect(
      await api("GET", `/v1/end-users/${eu.endUserId}/connection-history`),
      200,
      "connection history",
    );
    assert.ok((history.changes as unknown[]).length > 0, "a connected end user has a history");
    // The mirror's settings (issue 26): set, read, and turned off again.
    const mirror = expect(
      await api("PUT", `/v1/end-users/${id}/mirror`, { body: { resources: ["classes"] } }),
      200,
      "mirror set",
    );
    assert.deepEqual(
      (mirror.resources as Json[]).map((g) => g.resource),
      ["classes"],
    );
    expect(await api("GET", `/v1/end-users/${id}/mirror`), 200, "mirror read");
    expect(await api("PUT", `/v1/end-users/${id}/mirror`, { body: { resources: [] } }), 200, "mirror off");
    expect(await api("POST", `/v1/end-users/${id}`, { body: { email: "ops@example.com" } }), 200, "update");
    const session = expect(
      await api("POST", "/v1/auth-sessions", {
        body: {
          publishableKey: sys.project.keys.publishableLive,
          endUserId: id,
          redirectUrl: "https://example.com/back",
        },
      }),
      201,
      "auth session",
    );
    assert.match(String(session.authFlowUrl), /^http/);
    // Set up but never connected: nothing to forget, the end user is answered as it is.
    expect(
      await api("POST", `/v1/end-users/${id}/reset-company-file`, { body: { mode: "identity" } }),
      200,
      "reset",
    );
    expect(await api("GET", "/v1/end-users/eu_00000000000000000000000000"), 404, "missing");
    expect(await api("GET", "/v1/end-users?limit=0"), 400, "bad limit");
    expect(await api("GET", "/v1/end-users", { key: "sk_live_nope" }), 401, "bad key");
    expect(await api("DELETE", `/v1/end-users/${id}`), 200, "delete");
  });

  test("API keys: list, create, revoke", async () => {
    expect(await api("GET", "/v1/api-keys"), 200, "list");
    const created = expect(
      await api("POST", "/v1/api-keys", { body: { kind: "secret", readOnly: true } }),
      201,
      "create",
    );
    expect(await api("POST", `/v1/api-keys/${String(created.id)}/revoke`, { body: {} }), 200, "revoke");
  });

  test("webhook endpoints and deliveries", async () => {
    const created = expect(
      await api("POST", "/v1/webhook-endpoints", {
        body: { url: receiver.url, eventTypes: ["request.*"], description: "Contract" },
      }),
      201,
      "create",
    );
    const id = String(created.id);
    expect(await api("GET", "/v1/webhook-endpoints"), 200, "list");
    expect(await api("GET", `/v1/webhook-endpoints/${id}`), 200, "retrieve");
    expect(
      await api("POST", `/v1/webhook-endpoints/${id}`, {
        body: { includeSyncRequests: true, description: null },
      }),
      200,
      "update",
    );
    expect(await api("POST", `/v1/webhook-endpoints/${id}/rotate-secret`), 200, "rotate");
    const delivery = expect(await api("POST", `/v1/webhook-endpoints/${id}/test`), 200, "test");
    await receiver.waitFor("the test event", (received) => received.length >= 1);
    await untilDispatchSettled(sys.deps, sys.dispatcher ?? assert.fail("dispatcher"));
    const list = expect(
      await api("GET", `/v1/webhook-endpoints/${id}/deliveries?status=succeeded`),
      200,
      "deliveries",
    );
    const attempts = (list.data as Json[])[0]?.attempts as Json[] | undefined;
    assert.ok(attempts && attempts.length > 0, "the delivery shows its attempt");
    expect(
      await api("POST", `/v1/webhook-endpoints/${id}/deliveries/${String(delivery.id)}/resend`),
      200,
      "resend",
    );
    expect(
      await api("POST", "/v1/webhook-endpoints", { body: { url: receiver.url, eventTypes: [] } }),
      400,
      "bad",
    );
    expect(await api("DELETE", `/v1/webhook-endpoints/${id}`), 200, "delete");
    expect(await api("GET", `/v1/webhook-endpoints/${id}`), 404, "deleted");
  });

  test("change feed subscriptions", async () => {
    const created = expect(
      await api("POST", "/v1/change-feed-subscriptions", { body: { resources: ["customers", "invoices"] } }),
      201,
      "create",
    );
    const id = String(created.id);
    expect(await api("GET", "/v1/change-feed-subscriptions?limit=1"), 200, "list");
    expect(await api("GET", `/v1/change-feed-subscriptions/${id}`), 200, "retrieve");
    expect(
      await api("POST", `/v1/change-feed-subscriptions/${id}`, {
        body: { enabled: false, intervalMinutes: 30 },
      }),
      200,
      "update",
    );
    expect(await api("DELETE", `/v1/change-feed-subscriptions/${id}`), 200, "delete");
  });

  test("passthrough (JSON and XML), health check, requests and the async Request", async () => {
    expect(
      await api("POST", passthroughPath(eu.endUserId), { body: { xml: READ } }),
      200,
      "passthrough JSON",
    );
    const xml = await api("POST", passthroughPath(eu.endUserId), { body: READ });
    assert.equal(xml.status, 200, JSON.stringify(xml.body).slice(0, 300));
    expect(await app("GET", "health-check"), 200, "health check");
    const queued = expect(
      await app("GET", "customers?limit=2", { headers: { prefer: "respond-async" } }),
      202,
      "async list",
    );
    const done = expect(
      await api("GET", `/v1/requests/${String(queued.id)}?waitSeconds=30`),
      200,
      "the async request, settled",
    );
    assert.equal(done.status, "succeeded", JSON.stringify(done).slice(0, 500));
    const messages = expect(await api("GET", `/v1/requests/${String(queued.id)}/messages`), 200, "messages");
    assert.ok((messages.answer as { xml: string | null }).xml, "an answered Request shows its answer");
    expect(await api("GET", `/v1/requests?endUserId=${eu.endUserId}&limit=5`), 200, "requests list");
    // A sent request cannot be canceled.
    expect(await api("POST", `/v1/requests/${String(queued.id)}/cancel`), 409, "not cancelable");
  });
});

describe("typed operations answer as openapi.json says", () => {
  test("create, retrieve, list, update, delete, void, a report and the errors", async () => {
    const customers = resourceByPath("customers") ?? assert.fail();
    const customer = await factory.create(customers);
    const id = encodeURIComponent(String(customer.id));
    expect(await app("GET", `customers/${id}`), 200, "retrieve");
    expect(await app("GET", "customers?limit=2&nameContains=a"), 200, "list");
    const updated = expect(
      await app("POST", `customers/${id}`, {
        body: { revisionNumber: customer.revisionNumber, companyName: "Renamed Co" },
      }),
      200,
      "update",
    );
    expect(
      await app("POST", `customers/${id}`, {
        body: { revisionNumber: customer.revisionNumber, companyName: "Stale" },
      }),
      409,
      "stale revision",
    );
    const invoice = await factory.create(resourceByPath("invoices") ?? assert.fail());
    expect(await app("POST", `invoices/${encodeURIComponent(String(invoice.id))}/void`), 200, "void");
    expect(await app("GET", "reports/general-summary?reportType=profit_and_loss_standard"), 200, "report");
    expect(await app("GET", "customers/8000-0000000000"), 404, "unknown record");
    expect(await app("GET", "customers?limit=1000"), 400, "bad limit");
    expect(await app("POST", "sales-tax-payment-checks/1-1/void"), 422, "unsupported");
    const other = await factory.create(customers);
    expect(
      await app("DELETE", `customers/${encodeURIComponent(String(other.id))}?confirm=true`),
      200,
      "delete",
    );
    assert.equal(updated.id, customer.id);
  });

  test("every report answers a report record", async () => {
    const reports = Object.entries(contract.document.paths).filter(([path]) => path.includes("/reports/"));
    assert.equal(reports.length, 10);
    for (const [path, methods] of reports) {
      // Each required parameter takes its first value (an enumeration's, an array's item's) or its minimum.
      const parameters = (
        methods.get as unknown as {
          parameters: { name: string; required: boolean; in: string; schema: Json }[];
        }
      ).parameters;
      const query = parameters
        .filter((p) => p.required && p.in === "query")
        .map((p) => {
          const schema = (p.schema.items as Json | undefined) ?? p.schema;
          const value =
            (schema.enum as (string | number)[] | undefined)?.[0] ??
            (schema.minimum as number | undefined) ??
            2026;
          return `${p.name}=${encodeURIComponent(value)}`;
        })
        .join("&");
      const answer = await api("GET", `${path}?${query}`, { endUserId: eu.endUserId });
      expect(answer, 200, `${path}?${query}`);
      assert.equal(answer.body.objectType, "ledger_report");
    }
  });

  test("batch: members typed by their operation, an error member included", async () => {
    const answer = expect(
      await app("POST", "batch", {
        body: {
          onError: "continueOnError",
          requests: [
            { operationId: "ledger.customers.create", body: { name: "Batch Contract Co" } },
            { operationId: "ledger.customers.list", query: { limit: 2 } },
            { operationId: "ledger.customers.retrieve", pathParams: { id: "8000-0000000001" } },
            { operationId: "ledger.accounts.list", query: { limit: 1 } },
          ],
        },
      }),
      200,
      "batch",
    );
    const statuses = (answer.results as Json[]).map((member) => member.status);
    assert.deepEqual(statuses, ["succeeded", "succeeded", "failed", "succeeded"]);
  });

  test("a waiting request shows its diagnosis; canceling it answers the Request", async () => {
    await stopConnector(sys, eu);
    const queued = expect(
      await api("POST", passthroughPath(eu.endUserId), { body: READ, headers: { prefer: "respond-async" } }),
      202,
      "queued",
    );
    const waiting = expect(await api("GET", `/v1/requests/${String(queued.id)}`), 200, "waiting");
    assert.ok(waiting.diagnosis, "a waiting request has a diagnosis");
    assert.ok(waiting.waitingReason, "and a waiting reason");
    const canceled = expect(await api("POST", `/v1/requests/${String(queued.id)}/cancel`), 200, "cancel");
    assert.equal(canceled.status, "canceled");
    expect(await api("GET", `/v1/requests/${String(queued.id)}/messages`), 200, "messages");
  });
});

test("every platform route and the chosen typed operations were checked with a success", () => {
  const platform = apiRoutes
    .filter((route) => !route.operationId.startsWith("ledger.") || route.operationId === "ledger.healthCheck")
    .map((route) => `${route.operationId} ${route.response.status}`);
  const typed = [
    "ledger.customers.create 201",
    "ledger.customers.retrieve 200",
    "ledger.customers.list 200",
    "ledger.customers.list 202",
    "ledger.customers.update 200",
    "ledger.customers.update 409",
    "ledger.customers.delete 200",
    "ledger.invoices.void 200",
    "ledger.reports.generalSummary 200",
    "ledger.reports.payrollSummary 200",
    "ledger.reports.aging 200",
    "ledger.batch 200",
    "ledger.salesTaxPaymentChecks.void 422",
    "requests.cancel 409",
    "endUsers.passthrough 202",
  ];
  const missing = [...platform, ...typed].filter((label) => !contract.seen.has(label));
  assert.deepEqual(missing, [], `checked: ${[...contract.seen].sort().join(", ")}`);
});
