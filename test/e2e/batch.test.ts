import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { createApiKey } from "../../src/tenancy/api-keys.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { TypedFactory } from "../../src/testing/typed-factory.ts";
import { resourceByPath } from "../../src/ledger/resources/definitions.ts";
import {
  countRequests,
  E2E_CONFIG,
  bringOnline,
  callAsEndUser,
  eventually,
  json,
  type RequestResource,
} from "./helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";

/**
 * Batch through HTTP, the SOAP protocol and the simulated application (spec "POST /v1/{ledger}/batch",
 * decision 0014): one message set in one round trip, stopOnError and continueOnError, every member
 * validated before anything is queued, read-only keys, and a lost answer recovered as a whole.
 */
let sys: System;
let eu: ConnectedEndUser;
let factory: TypedFactory;
type Json = Record<string, unknown>;

/** Every request document the simulated application processed, in order. */
const documents: string[] = [];

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  checkEveryAnswer(sys);
  watchApplication(sys, (xml) => void documents.push(xml));
  eu = await sys.connectEndUser({ companyName: "Batch Co" });
  await bringOnline(sys, eu);
  factory = new TypedFactory((method, path, body) => callAsEndUser(sys, eu, method, path, body));
});
after(() => sys.close());

async function batch(body: unknown, headers: Record<string, string> = {}, key?: string) {
  const response = await sys.call("POST", "/v1/ledger-desktop/batch", {
    endUserId: eu.endUserId,
    body,
    headers,
    ...(key ? { key } : {}),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const requestCount = (): Promise<number> => countRequests(sys);

const results = (body: Json): Json[] => body.results as Json[];
const file = () => sys.ledger.companyFile(eu.companyFilePath);
/** Whether the company file holds a customer of that name. */
const hasCustomer = (name: string): boolean =>
  file()
    .recordsOf("Customer")
    .some((r) => r.fields.some((f) => f.name === "Name" && f.text === name));

describe("batch", () => {
  test("25 mixed members run as one message set in one round trip, in order", async () => {
    const customer = await factory.create(resourceByPath("customers") ?? assert.fail());
    const requests: Json[] = [];
    for (let i = 0; i < 12; i++) {
      requests.push({ operationId: "ledger.customers.create", body: { name: `Batch member ${i}` } });
    }
    for (let i = 0; i < 12; i++) {
      requests.push({ operationId: "ledger.customers.retrieve", pathParams: { id: customer.id } });
    }
    requests.push({ operationId: "ledger.customers.list", query: { limit: 3 } });
    const customersBefore = file().count("Customer");
    const seen = documents.length;
    const answer = await batch({ requests });
    assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 500));
    assert.equal(answer.body.objectType, "batch");
    const members = results(answer.body);
    assert.equal(members.length, 25);
    assert.ok(
      members.every((m) => m.status === "succeeded"),
      JSON.stringify(members.map((m) => m.status)),
    );
    assert.equal((members[0]?.data as Json).name, "Batch member 0");
    assert.equal(members[0]?.httpStatusCode, 201);
    assert.equal((members[12]?.data as Json).id, customer.id);
    const list = members[24]?.data as Json;
    assert.equal(list.objectType, "list");
    assert.equal((list.data as Json[]).length, 3);
    assert.equal(list.nextCursor, null);
    assert.equal(file().count("Customer"), customersBefore + 12);
    const carried = documents.slice(seen).filter((xml) => xml.includes("CustomerAddRq"));
    assert.equal(carried.length, 1, "one message set carried every member");
    assert.equal(carried[0]?.match(/<Customer(Add|Query)Rq\b/g)?.length, 25);
    assert.match(carried[0] ?? "", /onError="stopOnError"/);
    assert.equal((await newestRequest()).operationId, "ledger.batch");
  });

  test("stopOnError: members after the first failure are not_processed; continueOnError runs them all", async () => {
    const members = (onError: string) => ({
      onError,
      requests: [
        { operationId: "ledger.customers.create", body: { name: `Before ${onError}` } },
        { operationId: "ledger.customers.retrieve", pathParams: { id: "80000999-1999999999" } },
        { operationId: "ledger.customers.create", body: { name: `After ${onError}` } },
      ],
    });
    const stopped = await batch(members("stopOnError"));
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.deepEqual(
      results(stopped.body).map((m) => m.status),
      ["succeeded", "failed", "not_processed"],
    );
    const failed = results(stopped.body)[1] as Json;
    assert.equal((failed.error as Json).code, "LEDGER_OBJECT_NOT_FOUND");
    assert.equal(failed.httpStatusCode, 404);
    assert.ok(hasCustomer("Before stopOnError"));
    assert.ok(!hasCustomer("After stopOnError"), "not processed: never applied");

    const continued = await batch(members("continueOnError"));
    assert.deepEqual(
      results(continued.body).map((m) => m.status),
      ["succeeded", "failed", "succeeded"],
    );
  });

  test("an invalid member fails the whole call with 400 naming it, and nothing is queued", async () => {
    const before = await requestCount();
    const cases: Array<[Json, string, string]> = [
      [
        {
          requests: [
            { operationId: "ledger.customers.create", body: { name: "fine" } },
            { operationId: "ledger.customers.list" },
            { operationId: "ledger.customers.create", body: { name: 7 } },
          ],
        },
        "requests[2].body.name",
        "INVALID_PARAMETER",
      ],
      [
        { requests: [{ operationId: "ledger.nothing.list" }] },
        "requests[0].operationId",
        "INVALID_PARAMETER",
      ],
      [
        { requests: [{ operationId: "ledger.invoices.list", query: { cursor: "abc" } }] },
        "requests[0].query.cursor",
        "INVALID_PARAMETER",
      ],
      [
        { requests: [{ operationId: "ledger.invoices.list", query: { transactionDateFrom: "2024-02-30" } }] },
        "requests[0].query.transactionDateFrom",
        "INVALID_PARAMETER",
      ],
      [
        { requests: [{ operationId: "ledger.invoices.void", pathParams: { id: "1-1" }, body: { why: 1 } }] },
        "requests[0].body.why",
        "UNKNOWN_PARAMETER",
      ],
      [{ requests: [] }, "requests", "INVALID_PARAMETER"],
      [
        { requests: Array.from({ length: 26 }, () => ({ operationId: "ledger.customers.list" })) },
        "requests",
        "INVALID_PARAMETER",
      ],
      [
        { onError: "sometimes", requests: [{ operationId: "ledger.customers.list" }] },
        "onError",
        "INVALID_PARAMETER",
      ],
      [
        { requests: [{ operationId: "ledger.customers.list", extra: 1 }] },
        "requests[0].extra",
        "UNKNOWN_PARAMETER",
      ],
    ];
    for (const [body, param, code] of cases) {
      const refused = await batch(body);
      assert.equal(refused.status, 400, `${param}: ${JSON.stringify(refused.body)}`);
      assert.equal((refused.body.error as Json).code, code, param);
      assert.equal((refused.body.error as Json).param, param);
    }
    assert.equal(await requestCount(), before, "nothing queued");
  });

  test("a read-only key may batch reads only (403 naming the write member)", async () => {
    const readOnly = await createApiKey(sys.deps, sys.project.project.id, {
      kind: "secret",
      mode: "live",
      readOnly: true,
    });
    const before = await requestCount();
    const refused = await batch(
      {
        requests: [
          { operationId: "ledger.customers.list", query: { limit: 1 } },
          { operationId: "ledger.customers.create", body: { name: "Not allowed" } },
        ],
      },
      {},
      readOnly.secret,
    );
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal((refused.body.error as Json).code, "API_KEY_READ_ONLY");
    assert.equal((refused.body.error as Json).param, "requests[1]");
    assert.equal(await requestCount(), before);
    const reads = await batch(
      { requests: [{ operationId: "ledger.customers.list", query: { limit: 1 } }] },
      {},
      readOnly.secret,
    );
    assert.equal(reads.status, 200, JSON.stringify(reads.body));
  });

  test("one Idempotency-Key for the whole batch: a replay is the same Request, another body is 422", async () => {
    const body = { requests: [{ operationId: "ledger.customers.create", body: { name: "Keyed batch" } }] };
    const first = await batch(body, { "idempotency-key": "batch-key-1" });
    assert.equal(first.status, 200);
    const count = file().count("Customer");
    const again = await batch(body, { "idempotency-key": "batch-key-1" });
    assert.deepEqual(again.body, first.body);
    assert.equal(file().count("Customer"), count, "the replay sent nothing");
    const other = await batch(
      { requests: [{ operationId: "ledger.customers.create", body: { name: "Another" } }] },
      { "idempotency-key": "batch-key-1" },
    );
    assert.equal(other.status, 422);
    assert.equal((other.body.error as Json).code, "IDEMPOTENCY_KEY_REUSED");
  });

  test("a lost answer: LEDGER_WRITE_OUTCOME_UNKNOWN lists every member; recovery resolves the batch as a whole", async () => {
    const customersBefore = file().count("Customer");
    eu.connector.setFault({ kind: "lose_answer_after_write" });
    const body = {
      requests: [
        { operationId: "ledger.customers.create", body: { name: "Lost batch A" } },
        { operationId: "ledger.customers.list", query: { limit: 1 } },
        { operationId: "ledger.customers.create", body: { name: "Lost batch B" } },
      ],
    };
    const pending = batch(body, { "idempotency-key": "lost-batch", "svc-timeout-seconds": "300" });
    await eventually(
      "the application applied both writes",
      async () => file().count("Customer") === customersBefore + 2,
    );
    // The next session cannot reach the application yet: the batch stays outcome_unknown.
    sys.ledger.setFault({ kind: "hang_on_open" });
    void eu.connector.checkInNow();
    const answer = await pending;
    assert.equal(answer.status, 502, JSON.stringify(answer.body));
    const error = answer.body.error as Json;
    assert.equal(error.code, "LEDGER_WRITE_OUTCOME_UNKNOWN");
    const details = error.details as { requestId: string; members: Json[] };
    assert.deepEqual(
      details.members.map((m) => [m.index, m.operationId, m.access, m.status]),
      [
        [0, "ledger.customers.create", "write", "unknown"],
        [1, "ledger.customers.list", "read", "unknown"],
        [2, "ledger.customers.create", "write", "unknown"],
      ],
    );
    const requestId = details.requestId;
    const stored = await json<RequestResource>(await sys.call("GET", `/v1/requests/${requestId}`));
    assert.equal(stored.status, "outcome_unknown");
    // A retry with the same key while the outcome is unknown replays it: nothing is sent again.
    const early = await batch(body, { "idempotency-key": "lost-batch" });
    assert.equal(early.status, 502);
    sys.ledger.setFault(null);
    void eu.connector.checkInNow();
    const recovered = await eventually("recovered", async () => {
      const row = await json<RequestResource & { result: Json }>(
        await sys.call("GET", `/v1/requests/${requestId}`),
      );
      return row.status === "succeeded" ? row : null;
    });
    assert.equal(recovered.recovered, true);
    assert.deepEqual(
      results(recovered.result).map((m) => m.status),
      ["succeeded", "succeeded", "succeeded"],
    );
    assert.equal((results(recovered.result)[1]?.data as Json).objectType, "list");
    // The same key again never sends a member twice.
    const retried = await batch(body, { "idempotency-key": "lost-batch" });
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(file().count("Customer"), customersBefore + 2, "each write applied once");
  });
});

async function newestRequest(): Promise<{ id: string; operationId: string }> {
  const list = await json<{ data: { id: string; operationId: string }[] }>(
    await sys.call("GET", "/v1/requests?limit=1"),
  );
  const newest = list.data[0];
  assert.ok(newest);
  return newest;
}
