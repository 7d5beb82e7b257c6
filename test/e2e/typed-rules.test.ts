import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resourceByPath, type ResourceDefinition } from "../../src/ledger/resources/definitions.ts";
import { CURSOR_IDLE_WINDOW_MS } from "../../src/ledger/cursors.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { TypedFactory } from "../../src/testing/typed-factory.ts";
import { countRequests, bringOnline, E2E_CONFIG, callAsEndUser, type JsonAnswer } from "./helpers.ts";

/**
 * Focused rules of the typed surface through HTTP, the SOAP protocol and the simulated application:
 * each LEDGER_* code produced from a real application status, the update rules for lines (partial
 * families read first, empty arrays clear), application cursors page by page, and what is never
 * queued (confirm, bad input).
 */
let sys: System;
let eu: ConnectedEndUser;
let factory: TypedFactory;
type Json = Record<string, unknown>;

const call = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<JsonAnswer> =>
  callAsEndUser(sys, eu, method, path, body);

function group(path: string): ResourceDefinition {
  const resource = resourceByPath(path);
  assert.ok(resource, path);
  return resource;
}

function error(result: { status: number; body: Json }, status: number, code: string): Json {
  assert.equal(result.status, status, JSON.stringify(result.body));
  const body = result.body.error as Json;
  assert.equal(body.code, code, JSON.stringify(body));
  return body;
}

const requestCount = (): Promise<number> => countRequests(sys);

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  eu = await sys.connectEndUser({ companyName: "Rules Co" });
  await bringOnline(sys, eu);
  factory = new TypedFactory(call);
});
after(() => sys.close());

describe("the application's statuses become the spec's codes, with the native status kept", () => {
  test("3100 duplicate name → 409 LEDGER_DUPLICATE_NAME", async () => {
    const first = await call("POST", "/v1/ledger-desktop/customers", { name: "Twice Ltd" });
    assert.equal(first.status, 201);
    const body = error(
      await call("POST", "/v1/ledger-desktop/customers", { name: "twice ltd" }),
      409,
      "LEDGER_DUPLICATE_NAME",
    );
    assert.equal(body.integrationCode, "3100");
  });

  test("3120 unknown record → 404 LEDGER_OBJECT_NOT_FOUND on retrieve and update", async () => {
    const body = error(
      await call("GET", "/v1/ledger-desktop/invoices/FFFF-1700000000"),
      404,
      "LEDGER_OBJECT_NOT_FOUND",
    );
    assert.equal(body.integrationCode, "3120");
    error(
      await call("POST", "/v1/ledger-desktop/customers/80FFFFFF-1700000000", {
        revisionNumber: "1",
        companyName: "x",
      }),
      404,
      "LEDGER_OBJECT_NOT_FOUND",
    );
  });

  test("3140 unknown reference → 422 LEDGER_REFERENCE_NOT_FOUND", async () => {
    const body = error(
      await call("POST", "/v1/ledger-desktop/invoices", {
        customerId: "80FFFFFF-1700000000",
        lines: [{ amount: "1.00", description: "x" }],
      }),
      422,
      "LEDGER_REFERENCE_NOT_FOUND",
    );
    assert.equal(body.integrationCode, "3140");
  });

  test("3200 stale revision → 409 LEDGER_REVISION_NUMBER_STALE", async () => {
    const customer = await factory.create(group("customers"));
    const body = error(
      await call("POST", `/v1/ledger-desktop/customers/${String(customer.id)}`, {
        revisionNumber: "12345",
        companyName: "Stale",
      }),
      409,
      "LEDGER_REVISION_NUMBER_STALE",
    );
    assert.equal(body.integrationCode, "3200");
  });

  test("a record in use → 422 LEDGER_OBJECT_IN_USE, and it stays", async () => {
    const invoice = await factory.create(group("invoices"));
    const customer = invoice.customer as Json;
    const body = error(
      await call("DELETE", `/v1/ledger-desktop/customers/${String(customer.id)}?confirm=true`),
      422,
      "LEDGER_OBJECT_IN_USE",
    );
    assert.match(String(body.integrationCode), /^31\d\d$/);
    assert.equal((await call("GET", `/v1/ledger-desktop/customers/${String(customer.id)}`)).status, 200);
  });

  test("an action the application cannot do answers LEDGER_OPERATION_UNSUPPORTED and queues nothing", async () => {
    const before = await requestCount();
    const body = error(
      await call("POST", "/v1/ledger-desktop/sales-tax-payment-checks/1-1/void"),
      422,
      "LEDGER_OPERATION_UNSUPPORTED",
    );
    assert.ok(Array.isArray((body.details as Json).alternatives));
    assert.equal(await requestCount(), before);
  });
});

describe("idempotency of typed writes (spec: Idempotency-Key)", () => {
  test("the same key and body replays the Request; another body is IDEMPOTENCY_KEY_REUSED", async () => {
    const headers = { "idempotency-key": "typed-create-1" };
    const body = { name: "Once Only Ltd" };
    const first = await sys.call("POST", "/v1/ledger-desktop/customers", {
      endUserId: eu.endUserId,
      body,
      headers,
    });
    assert.equal(first.status, 201, await first.clone().text());
    const again = await sys.call("POST", "/v1/ledger-desktop/customers", {
      endUserId: eu.endUserId,
      body,
      headers,
    });
    assert.equal(again.status, 201, await again.clone().text());
    assert.equal(again.headers.get("svc-request-id"), first.headers.get("svc-request-id"));
    assert.deepEqual(await again.json(), await first.json());
    const other = await sys.call("POST", "/v1/ledger-desktop/customers", {
      endUserId: eu.endUserId,
      body: { name: "Someone Else Ltd" },
      headers,
    });
    assert.equal(other.status, 422);
    assert.equal(((await other.json()) as { error: Json }).error.code, "IDEMPOTENCY_KEY_REUSED");
    const named = await call(
      "GET",
      `/v1/ledger-desktop/customers?fullNames=${encodeURIComponent("Once Only Ltd")}`,
    );
    assert.equal((named.body.data as Json[]).length, 1, "written once");
  });

  test("a read-only key cannot create, but can list", async () => {
    const { createApiKey } = await import("../../src/tenancy/api-keys.ts");
    const readOnly = await createApiKey(sys.deps, sys.project.project.id, {
      kind: "secret",
      mode: "live",
      readOnly: true,
    });
    const refused = await sys.call("POST", "/v1/ledger-desktop/customers", {
      key: readOnly.secret,
      endUserId: eu.endUserId,
      body: { name: "Nope" },
    });
    assert.equal(refused.status, 403);
    const listed = await sys.call("GET", "/v1/ledger-desktop/customers?limit=1", {
      key: readOnly.secret,
      endUserId: eu.endUserId,
    });
    assert.equal(listed.status, 200);
  });
});

describe("reports through the API (spec: Report)", () => {
  test("a profit and loss report comes back as rows and columns; the aging total matches the customers", async () => {
    const pnl = await call(
      "GET",
      "/v1/ledger-desktop/reports/general-summary?reportType=profit_and_loss_standard",
    );
    assert.equal(pnl.status, 200, JSON.stringify(pnl.body));
    assert.equal(pnl.body.objectType, "ledger_report");
    assert.equal(pnl.body.reportType, "profit_and_loss_standard");
    assert.equal(pnl.body.title, "Profit And Loss Standard");
    const columns = pnl.body.columns as Json[];
    assert.equal(columns.length, pnl.body.columnCount);
    assert.equal((pnl.body.rows as Json[]).length, pnl.body.rowCount);

    const customer = await factory.create(group("customers"));
    const invoice = await call("POST", "/v1/ledger-desktop/invoices", {
      customerId: customer.id,
      lines: [{ description: "Report me", amount: "40.00" }],
    });
    assert.equal(invoice.status, 201, JSON.stringify(invoice.body));
    const aging = await call("GET", "/v1/ledger-desktop/reports/aging?reportType=ar_aging_summary");
    assert.equal(aging.status, 200, JSON.stringify(aging.body));
    const rows = aging.body.rows as Array<{ kind: string; rowDescriptor: Json | null; cells: Json[] }>;
    const mine = rows.find((r) => r.kind === "data" && r.rowDescriptor?.value === customer.fullName);
    assert.ok(mine, "the new customer's open balance is in the aging report");
    assert.equal(mine.cells.at(-1)?.value, "40.00");
    const customers = await call("GET", "/v1/ledger-desktop/customers?limit=150");
    const sum = (customers.body.data as Json[]).reduce((total, c) => total + Number(c.balance ?? 0), 0);
    const totalRow = rows.find((r) => r.kind === "total");
    assert.equal(Number(totalRow?.cells.at(-1)?.value), Number(sum.toFixed(2)));
  });

  test("a report parameter outside its enumeration is refused before anything is queued", async () => {
    const before = await requestCount();
    const bad = await call("GET", "/v1/ledger-desktop/reports/aging?reportType=nonsense");
    const body = error(bad, 400, "INVALID_PARAMETER");
    assert.equal(body.param, "reportType");
    const missing = await call("GET", "/v1/ledger-desktop/reports/aging");
    assert.equal(error(missing, 400, "INVALID_PARAMETER").param, "reportType");
    assert.equal(await requestCount(), before);
  });
});

describe("input is checked before anything is queued", () => {
  test("delete without confirm=true, unknown fields and too many decimals queue nothing", async () => {
    const before = await requestCount();
    error(await call("DELETE", "/v1/ledger-desktop/invoices/1-1?confirm=1"), 400, "INVALID_PARAMETER");
    error(await call("DELETE", "/v1/ledger-desktop/invoices/1-1"), 400, "INVALID_PARAMETER");
    error(
      await call("POST", "/v1/ledger-desktop/customers", { name: "x", nope: 1 }),
      400,
      "UNKNOWN_PARAMETER",
    );
    const precision = error(
      await call("POST", "/v1/ledger-desktop/invoices", { customerId: "1", lines: [{ amount: "1.001" }] }),
      400,
      "DECIMAL_PRECISION_EXCEEDED",
    );
    assert.equal(precision.param, "lines[0].amount");
    error(await call("GET", "/v1/ledger-desktop/invoices?ids=1&customerIds=2"), 400, "INVALID_PARAMETER");
    error(await call("GET", "/v1/ledger-desktop/invoices?limit=151"), 400, "INVALID_PARAMETER");
    assert.equal(await requestCount(), before);
  });

  test("query parameters are checked like body fields: an impossible date is refused, never sent", async () => {
    const before = await requestCount();
    for (const [query, param] of [
      ["transactionDateFrom=2024-02-30", "transactionDateFrom"],
      ["updatedAfter=2023-02-29T10:00:00", "updatedAfter"],
      ["updatedAfter=2024-01-01&updatedAfter=2024-01-02", "updatedAfter"],
      ["includeLineItems=yes", "includeLineItems"],
      ["limit=abc", "limit"],
      ["refNumberContains=%00", "refNumberContains"],
      [`refNumberContains=${"x".repeat(4096)}`, "refNumberContains"],
    ] as const) {
      const refused = await call("GET", `/v1/ledger-desktop/invoices?${query}`);
      assert.ok(refused.status === 400, `${query}: ${refused.status} ${JSON.stringify(refused.body)}`);
      assert.equal((refused.body.error as Json).param, param, query);
    }
    // The same date in a body is refused the same way.
    const body = error(
      await call("POST", "/v1/ledger-desktop/invoices", { customerId: "1", transactionDate: "2024-02-30" }),
      400,
      "INVALID_PARAMETER",
    );
    assert.equal(body.param, "transactionDate");
    assert.equal(await requestCount(), before);
  });

  test("void and delete take an empty body or {} only", async () => {
    const before = await requestCount();
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    for (const [raw, param] of [
      ['"void it"', "body"],
      ["[1,2]", "body"],
      ["true", "body"],
      ["null", "body"],
      ['{"reason":"x"}', "reason"],
      [deep, "a"],
    ] as const) {
      for (const [method, path] of [
        ["POST", "/v1/ledger-desktop/invoices/1-1/void"],
        ["DELETE", "/v1/ledger-desktop/invoices/1-1?confirm=true"],
      ] as const) {
        const response = await sys.call(method, path, {
          endUserId: eu.endUserId,
          body: raw,
          headers: { "content-type": "application/json" },
        });
        const answer = (await response.json()) as Json;
        assert.equal(response.status, 400, `${method} ${raw.slice(0, 20)}: ${JSON.stringify(answer)}`);
        assert.equal((answer.error as Json).param, param, `${method} ${raw.slice(0, 20)}`);
      }
    }
    assert.equal(await requestCount(), before);
  });

  test("a required filter is required: bills to pay without a vendor is a 400, not a message the schema refuses", async () => {
    const before = await requestCount();
    for (const query of ["payablesAccountId=zzz", "currencyIds=zzz", "currencyIds=a&currencyIds=b", ""]) {
      const refused = error(
        await call("GET", `/v1/ledger-desktop/bills-to-pay${query ? `?${query}` : ""}`),
        400,
        "INVALID_PARAMETER",
      );
      assert.equal(refused.param, "vendorId", query);
    }
    assert.equal(await requestCount(), before);
    const vendor = await factory.create(group("vendors"));
    const listed = await call(
      "GET",
      `/v1/ledger-desktop/bills-to-pay?vendorId=${String(vendor.id)}&currencyIds=a&currencyIds=b`,
    );
    assert.ok(listed.status < 500, JSON.stringify(listed.body));
  });
});

describe("update rules for lines (spec: Update)", () => {
  test("sending only some arrays of a line family reads the record first and keeps the others", async () => {
    const items = group("service-items");
    const itemGroup = await factory.create(group("item-groups"));
    const item = await factory.create(items);
    const customer = await factory.create(group("customers"));
    const created = await call("POST", "/v1/ledger-desktop/invoices", {
      customerId: customer.id,
      lines: [
        { itemId: item.id, quantity: 1, rate: "10.00" },
        { itemId: item.id, quantity: 2, rate: "10.00" },
      ],
      lineGroups: [{ itemGroupId: itemGroup.id, quantity: 1 }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const invoice = created.body;
    const [first] = invoice.lines as Json[];
    const groupId = (invoice.lineGroups as Json[])[0]?.id;
    assert.ok(first && groupId);
    const updated = await call("POST", `/v1/ledger-desktop/invoices/${String(invoice.id)}`, {
      revisionNumber: invoice.revisionNumber,
      lines: [{ id: first.id }, { id: "-1", itemId: item.id, quantity: 5, rate: "1.00" }],
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    const lines = updated.body.lines as Json[];
    assert.deepEqual(
      lines.map((l) => l.quantity),
      [1, 5],
      "line 2 replaced by the new line",
    );
    assert.deepEqual(
      (updated.body.lineGroups as Json[]).map((g) => g.id),
      [groupId],
      "the line group was kept",
    );
    const reads = await sys.deps.db
      .selectFrom("requests")
      .select(["operation_id"])
      .where("path", "=", `/v1/ledger-desktop/invoices/${String(invoice.id)}`)
      .orderBy("seq")
      .execute();
    assert.deepEqual(reads.map((r) => r.operation_id).slice(-2), [
      "ledger.invoices.retrieve",
      "ledger.invoices.update",
    ]);
  });

  test("an empty array clears that kind of line and keeps the other kinds", async () => {
    const bill = await factory.create(group("bills"));
    const account = await factory.create(group("accounts"));
    const item = await factory.create(group("service-items"));
    const withLines = await call("POST", `/v1/ledger-desktop/bills/${String(bill.id)}`, {
      revisionNumber: bill.revisionNumber,
      expenseLines: [{ id: "-1", accountId: account.id, amount: "5.00" }],
      itemLines: [{ id: "-1", itemId: item.id, quantity: 1, cost: "2.00" }],
    });
    assert.equal(withLines.status, 200, JSON.stringify(withLines.body));
    const cleared = await call("POST", `/v1/ledger-desktop/bills/${String(bill.id)}`, {
      revisionNumber: withLines.body.revisionNumber,
      expenseLines: [],
    });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.deepEqual(cleared.body.expenseLines, []);
    assert.equal((cleared.body.itemLines as Json[]).length, 1);
  });
});

describe("application cursors through the API", () => {
  test("pages follow nextCursor to the end, a page repeats at most twice, and an idle cursor expires", async () => {
    const vendors = group("vendors");
    for (let i = 0; i < 5; i++) await factory.create(vendors);
    const seen: string[] = [];
    let page = await call("GET", "/v1/ledger-desktop/vendors?limit=2");
    assert.equal(page.status, 200, JSON.stringify(page.body));
    const firstCursor = page.body.nextCursor;
    assert.equal(typeof firstCursor, "string");
    assert.equal(page.body.hasMore, true);
    assert.equal(typeof page.body.remainingCount, "number");
    assert.equal(typeof page.body.cursorExpiresAt, "string");
    seen.push(...(page.body.data as Json[]).map((r) => String(r.id)));
    const second = await call("GET", `/v1/ledger-desktop/vendors?cursor=${String(firstCursor)}`);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    // The first cursor again repeats the second page, twice at most.
    for (let i = 0; i < 2; i++) {
      const repeat = await call("GET", `/v1/ledger-desktop/vendors?cursor=${String(firstCursor)}`);
      assert.deepEqual(repeat.body.data, second.body.data);
    }
    error(
      await call("GET", `/v1/ledger-desktop/vendors?cursor=${String(firstCursor)}`),
      400,
      "CURSOR_INVALID",
    );
    error(
      await call("GET", `/v1/ledger-desktop/vendors?cursor=${String(second.body.nextCursor)}&nameContains=x`),
      400,
      "CURSOR_PARAMS_MISMATCH",
    );
    page = second;
    while (typeof page.body.nextCursor === "string") {
      seen.push(...(page.body.data as Json[]).map((r) => String(r.id)));
      page = await call("GET", `/v1/ledger-desktop/vendors?cursor=${page.body.nextCursor}&limit=2`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
    }
    seen.push(...(page.body.data as Json[]).map((r) => String(r.id)));
    assert.equal(page.body.hasMore, false);
    assert.equal(new Set(seen).size, seen.length, "no record twice");
    const all = await call("GET", "/v1/ledger-desktop/vendors");
    assert.equal(seen.length, (all.body.data as Json[]).length, "every record once");

    const idle = await call("GET", "/v1/ledger-desktop/vendors?limit=1");
    await sys.fakeClock?.advance(CURSOR_IDLE_WINDOW_MS + 1000);
    const expired = error(
      await call("GET", `/v1/ledger-desktop/vendors?cursor=${String(idle.body.nextCursor)}`),
      410,
      "CURSOR_EXPIRED",
    );
    assert.deepEqual(expired.details, { reason: "idle_timeout", pagesServed: 1, recordsServed: 1 });
  });
});
