import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { watchableResources } from "../change-feed/resources.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { ParamValue } from "../ledger/typed/filters.ts";
import { answer, boundSeconds, inAnswerOrder, unsupportedParam, type Json } from "./query.ts";

/**
 * The evaluator's rules one by one, on hand-made records (the property test in
 * test/e2e/mirror-query.property.test.ts compares the same rules with the live application).
 */
const group = (path: string): ResourceDefinition => {
  const found = watchableResources().get(path);
  assert.ok(found, path);
  return found;
};
const customers = group("customers");
const vendors = group("vendors");
const invoices = group("invoices");
const bills = group("bills");
const adjustments = group("inventory-adjustments");
const CONTEXT = { utcOffsetMinutes: -300, nowMs: Date.UTC(2026, 2, 1) };

const ref = (id: string): Json => ({ id, fullName: id });

function customer(id: string, fullName: string, extra: Json = {}): Json {
  return {
    id,
    objectType: "ledger_customer",
    fullName,
    name: fullName.split(":").at(-1),
    isActive: true,
    updatedAt: "2026-01-15T10:00:00-05:00",
    totalBalance: "0.00",
    class: null,
    ...extra,
  };
}

function invoice(id: string, refNumber: string, extra: Json = {}): Json {
  return {
    id,
    objectType: "ledger_invoice",
    refNumber,
    transactionDate: "2026-01-10",
    updatedAt: "2026-01-15T10:00:00-05:00",
    customer: ref("C1"),
    receivablesAccount: ref("AR"),
    isPaid: false,
    lines: [{ id: `${id}-L`, item: ref("ITEM") }],
    lineGroups: [],
    ...extra,
  };
}

const CUSTOMERS = [
  customer("80000003-1", "beta"),
  customer("80000001-1", "Alpha"),
  customer("80000004-1", "Alpha:Job", { isActive: false }),
  customer("80000002-1", "alpha corp", { totalBalance: "12.50", class: ref("K1") }),
];

function ids(result: ReturnType<typeof answer>): string[] {
  assert.equal(result.kind, "records", JSON.stringify(result));
  return result.kind === "records" ? result.records.map((r) => String(r.id)) : [];
}

const run = (resource: ResourceDefinition, records: readonly Json[], query: Record<string, ParamValue>) =>
  answer(resource, records, new Map(Object.entries(query)), CONTEXT);

describe("answer order", () => {
  test("list objects sort by lower-cased full name, in code unit order (`:` after space, before letters)", () => {
    assert.deepEqual(
      inAnswerOrder(customers, CUSTOMERS).map((r) => r.fullName),
      ["Alpha", "alpha corp", "Alpha:Job", "beta"],
    );
  });

  test("transactions answer in creation order: the hex counter before the `-`, numerically", () => {
    const records = [invoice("A-9", "1"), invoice("10-2", "2"), invoice("9-5", "3")];
    assert.deepEqual(
      inAnswerOrder(invoices, records).map((r) => r.id),
      ["9-5", "A-9", "10-2"],
    );
  });
});

describe("ids and names", () => {
  test("ids answer in the order given, each once, whatever the status", () => {
    const result = run(customers, CUSTOMERS, { ids: ["80000004-1", "80000001-1", "80000004-1"] });
    assert.deepEqual(ids(result), ["80000004-1", "80000001-1"]);
  });

  test("an ID the group does not have makes the answer the application's 3120 error, naming the first", () => {
    const result = run(customers, CUSTOMERS, { ids: ["80000001-1", "NOPE-1", "NOPE-2"] });
    assert.equal(result.kind, "error");
    if (result.kind !== "error") return;
    assert.equal(result.error.code, "LEDGER_OBJECT_NOT_FOUND");
    assert.equal(result.error.integrationCode, "3120");
    assert.match(result.error.message, /Object "NOPE-1" specified in the request cannot be found/);
  });

  test("names are case-insensitive full names in the order given; the first missing one is a 500 warning", () => {
    const result = run(customers, CUSTOMERS, { fullNames: ["BETA", "gone", "alpha:job", "also gone"] });
    assert.deepEqual(ids(result), ["80000003-1", "80000004-1"]);
    assert.equal(result.kind === "records" ? result.warnings?.length : -1, 1);
    const warning = result.kind === "records" ? result.warnings?.[0] : undefined;
    assert.equal(warning?.statusCode, 500);
    assert.match(warning?.message ?? "", /\("gone"\)/);
  });

  test("refNumbers find only the first created transaction of a shared number", () => {
    const records = [invoice("5-1", "R1"), invoice("2-1", "r1"), invoice("3-1", "R2")];
    assert.deepEqual(ids(run(invoices, records, { refNumbers: ["r1"] })), ["2-1"]);
  });
});

describe("status", () => {
  test("list groups default to active only; inactive and all select the others", () => {
    assert.deepEqual(ids(run(customers, CUSTOMERS, {})), ["80000001-1", "80000002-1", "80000003-1"]);
    assert.deepEqual(ids(run(customers, CUSTOMERS, { status: "inactive" })), ["80000004-1"]);
    assert.equal(ids(run(customers, CUSTOMERS, { status: "all" })).length, 4);
  });
});

describe("name matches and ranges", () => {
  test("matches are case-insensitive on the full name, with the value trimmed", () => {
    assert.deepEqual(ids(run(customers, CUSTOMERS, { nameStartsWith: " ALPHA" })), [
      "80000001-1",
      "80000002-1",
    ]);
    assert.deepEqual(ids(run(customers, CUSTOMERS, { nameEndsWith: "CORP", status: "all" })), ["80000002-1"]);
    assert.deepEqual(ids(run(customers, CUSTOMERS, { nameContains: "a:j", status: "all" })), ["80000004-1"]);
  });

  test("ranges are inclusive at both ends and compare lower-cased", () => {
    const query = { nameFrom: "ALPHA CORP", nameTo: "Beta", status: "all" };
    assert.deepEqual(ids(run(customers, CUSTOMERS, query)), ["80000002-1", "80000004-1", "80000003-1"]);
    assert.deepEqual(ids(run(customers, CUSTOMERS, { nameTo: "alpha" })), ["80000001-1"]);
  });

  test("transactions match and range on their reference number", () => {
    const records = [invoice("1-1", "A-100"), invoice("2-1", "B-200"), invoice("3-1", "")];
    assert.deepEqual(ids(run(invoices, records, { refNumberStartsWith: "b-" })), ["2-1"]);
    assert.deepEqual(ids(run(invoices, records, { refNumberTo: "a-100" })), ["1-1", "3-1"]);
  });
});

describe("dates", () => {
  const records = [
    customer("80000001-1", "a", { updatedAt: "2026-01-15T00:00:00-05:00" }),
    customer("80000002-1", "b", { updatedAt: "2026-01-15T23:59:59-05:00" }),
    customer("80000003-1", "c", { updatedAt: "2026-01-16T00:00:00-05:00" }),
  ];

  test("a date alone covers the file's local day: from its first second to its last, inclusive", () => {
    assert.deepEqual(
      ids(run(customers, records, { updatedAfter: "2026-01-15", updatedBefore: "2026-01-15" })),
      ["80000001-1", "80000002-1"],
    );
  });

  test("a date-time without an offset is the file's local time; with one, that instant", () => {
    assert.deepEqual(ids(run(customers, records, { updatedAfter: "2026-01-15T23:59:59" })), [
      "80000002-1",
      "80000003-1",
    ]);
    assert.deepEqual(ids(run(customers, records, { updatedBefore: "2026-01-16T05:00:00Z" })), [
      "80000001-1",
      "80000002-1",
      "80000003-1",
    ]);
    assert.equal(boundSeconds("2026-01-16T00:00", -300, true), Date.UTC(2026, 0, 16, 5, 0, 59) / 1000);
  });

  test("transaction dates are inclusive dates", () => {
    const txns = [
      invoice("1-1", "1", { transactionDate: "2026-01-09" }),
      invoice("2-1", "2", { transactionDate: "2026-01-10" }),
      invoice("3-1", "3", { transactionDate: "2026-01-11" }),
    ];
    assert.deepEqual(
      ids(run(invoices, txns, { transactionDateFrom: "2026-01-10", transactionDateTo: "2026-01-11" })),
      ["2-1", "3-1"],
    );
  });
});

describe("reference filters", () => {
  test("an entity filter matches the top-level reference of its kind only", () => {
    const records = [
      invoice("1-1", "1", { customer: ref("C1") }),
      invoice("2-1", "2", { customer: ref("C2") }),
    ];
    assert.deepEqual(ids(run(invoices, records, { customerIds: ["C2", "C9"] })), ["2-1"]);
    // A bill's expense line naming a customer is not the bill's vendor.
    const bill = {
      id: "3-1",
      objectType: "ledger_bill",
      vendor: ref("V1"),
      expenseLines: [{ id: "3-L", account: ref("EXP"), payee: ref("C1") }],
      itemLines: [],
      itemGroupLines: [],
    };
    assert.deepEqual(ids(run(bills, [bill], { vendorIds: ["C1"] })), []);
    assert.deepEqual(ids(run(bills, [bill], { vendorIds: ["V1"] })), ["3-1"]);
  });

  test("an account filter of a list of transactions reads only references that may name an account", () => {
    const records = [invoice("1-1", "1", { receivablesAccount: ref("AR"), customer: ref("AR2") })];
    assert.deepEqual(ids(run(invoices, records, { accountIds: ["AR"] })), ["1-1"]);
    assert.deepEqual(ids(run(invoices, records, { accountIds: ["AR2"] })), []);
  });

  test("the account filter of a transaction group reads top-level references, not lines", () => {
    const bill = {
      id: "3-1",
      objectType: "ledger_bill",
      payablesAccount: ref("AP"),
      expenseLines: [{ id: "3-L", account: ref("EXP") }],
      itemLines: [],
      itemGroupLines: [],
    };
    assert.deepEqual(ids(run(bills, [bill], { accountIds: ["AP"] })), ["3-1"]);
    assert.deepEqual(ids(run(bills, [bill], { accountIds: ["EXP"] })), []);
  });

  test("item filters read lines too", () => {
    const adjustment = {
      id: "1-1",
      objectType: "ledger_inventory_adjustment",
      account: ref("ADJ"),
      lines: [{ id: "1-L", item: ref("ITEM") }],
    };
    assert.deepEqual(ids(run(adjustments, [adjustment], { itemIds: ["ITEM"] })), ["1-1"]);
    assert.deepEqual(ids(run(adjustments, [adjustment], { itemIds: ["ADJ"] })), []);
  });

  test("a list object's class filter reads its class reference", () => {
    assert.deepEqual(ids(run(customers, CUSTOMERS, { classIds: ["K1"] })), ["80000002-1"]);
  });
});

describe("amounts and paid status", () => {
  test("total balance compares decimals with each operator", () => {
    assert.deepEqual(ids(run(customers, CUSTOMERS, { totalBalance: "12.5" })), ["80000002-1"]);
    assert.deepEqual(ids(run(customers, CUSTOMERS, { totalBalanceGreaterThan: "12.50" })), []);
    assert.deepEqual(ids(run(customers, CUSTOMERS, { totalBalanceGreaterThanOrEqualTo: "12.50" })), [
      "80000002-1",
    ]);
    assert.deepEqual(ids(run(customers, CUSTOMERS, { totalBalanceLessThan: "12.50" })), [
      "80000001-1",
      "80000003-1",
    ]);
    assert.equal(ids(run(customers, CUSTOMERS, { totalBalanceLessThanOrEqualTo: "12.50" })).length, 3);
  });

  test("vendors compare their balance (they have nothing below them)", () => {
    const records = [
      { id: "80000001-1", objectType: "ledger_vendor", name: "v", isActive: true, balance: "-3.00" },
    ];
    assert.deepEqual(ids(run(vendors, records, { totalBalanceLessThan: "0" })), ["80000001-1"]);
  });

  test("paid means nothing left open", () => {
    const records = [invoice("1-1", "1", { isPaid: true }), invoice("2-1", "2")];
    assert.deepEqual(ids(run(invoices, records, { paymentStatus: "paid" })), ["1-1"]);
    assert.deepEqual(ids(run(invoices, records, { paymentStatus: "not_paid" })), ["2-1"]);
    assert.deepEqual(ids(run(invoices, records, { paymentStatus: "all" })), ["1-1", "2-1"]);
  });
});

describe("rendering, limit and refusals", () => {
  test("includeLineItems=false answers line families empty and leaves the copy untouched", () => {
    const records = [invoice("1-1", "1")];
    const result = run(invoices, records, { includeLineItems: false });
    assert.equal(result.kind, "records");
    if (result.kind !== "records") return;
    assert.deepEqual(result.records[0]?.lines, []);
    assert.deepEqual((records[0]?.lines as unknown[]).length, 1);
  });

  test("limit caps groups without cursors only, and never an ids list", () => {
    const accounts = group("accounts");
    const records = ["a", "b", "c"].map((n, i) => ({
      id: `8000000${i}-1`,
      objectType: "ledger_account",
      fullName: n,
      isActive: true,
    }));
    assert.equal(ids(run(accounts, records, { limit: 2 })).length, 2);
    assert.equal(ids(run(customers, CUSTOMERS, { limit: 1 })).length, 3);
    assert.equal(ids(run(accounts, records, { limit: 1, ids: ["80000000-1", "80000001-1"] })).length, 2);
  });

  test("an enumeration filter compares the record's field of that name", () => {
    const accounts = group("accounts");
    const records = [
      {
        id: "80000001-1",
        objectType: "ledger_account",
        fullName: "Bank",
        isActive: true,
        accountType: "bank",
      },
      {
        id: "80000002-1",
        objectType: "ledger_account",
        fullName: "Rent",
        isActive: true,
        accountType: "expense",
      },
    ];
    assert.deepEqual(ids(run(accounts, records, { accountType: "expense" })), ["80000002-1"]);
  });

  test("filters the application cannot combine are the API's 400", () => {
    const result = run(customers, CUSTOMERS, { nameContains: "a", nameFrom: "a" });
    assert.equal(result.kind === "error" ? result.error.code : "", "INVALID_PARAMETER");
  });

  test("unsupportedParam names what the copy cannot answer, and nothing else", () => {
    const map = (query: Record<string, ParamValue>) => new Map(Object.entries(query));
    assert.equal(
      unsupportedParam(invoices, map({ includeLinkedTransactions: true, limit: 5 })),
      "includeLinkedTransactions",
    );
    assert.equal(unsupportedParam(invoices, map({ includeLinkedTransactions: false, cursor: "x" })), null);
    assert.equal(unsupportedParam(group("price-levels"), map({ itemIds: "X" })), "itemIds");
    assert.equal(unsupportedParam(group("transactions"), map({})), "resource");
    assert.equal(unsupportedParam(customers, map({ nope: "x" })), "nope");
  });
});
