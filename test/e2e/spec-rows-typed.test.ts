import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { SERVICE_OWNER_ID } from "../../src/ledger/owner-id.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";
import {
  assertRefused,
  bringOnline,
  countRequests,
  E2E_CONFIG,
  eventually,
  sentMessageOf,
  assertAnswered,
  callAsEndUser,
  type JsonAnswer,
} from "./helpers.ts";

/**
 * Spec rows of typed operations that were only partly tested (issue 25, item 1), each shown through
 * HTTP, the connector protocol and the simulated application: the payroll summary report's
 * parameters, the set-custom-field body, inventory adjustment lines, `clear<Lines>` flags on update,
 * linked transactions read back, percentages and the application's timestamps. Refusals are checked
 * for their code, their `param` and that nothing was queued; accepted calls for the element the
 * message carried (`GET /v1/requests/{id}/messages`) and what the application answered.
 */
let sys: System;
let eu: ConnectedEndUser;
type Json = Record<string, unknown>;

const BASE = "/v1/ledger-desktop";
const RUN = `T${Date.now().toString(36).slice(-5)}`;
/** The company file computer's offset: not the simulator's default, so it must come from the file. */
const UTC_OFFSET = "+05:30";

type Answer = JsonAnswer;

const call = (
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Answer> => callAsEndUser(sys, eu, method, path, body, headers);

const ok = assertAnswered;

const refused = assertRefused;

const sentMessage = (requestId: string): Promise<string> => sentMessageOf(sys, requestId);

async function create(path: string, body: Json): Promise<Json> {
  return ok(await call("POST", `${BASE}/${path}`, body), 201, `create ${path}`);
}

async function firstOf(path: string): Promise<Json> {
  const list = ok(await call("GET", `${BASE}/${path}`), 200, path);
  const [first] = list.data as Json[];
  assert.ok(first, `the company file has ${path}`);
  return first;
}

/** Every refusal in `run` is made before anything is queued. */
async function queuesNothing(run: () => Promise<void>): Promise<void> {
  const before = await countRequests(sys);
  await run();
  assert.equal(await countRequests(sys), before, "nothing was queued");
}

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  // Every answer these rows read is also checked against the OpenAPI document.
  checkEveryAnswer(sys);
  const clock = sys.fakeClock;
  assert.ok(clock);
  eu = await sys.connectEndUser({
    companyName: "Spec Rows Typed Co",
    application: { clock },
    utcOffset: UTC_OFFSET,
  });
  await bringOnline(sys, eu);
});
after(() => sys.close());

describe("Payroll summary report", () => {
  const REPORT = `${BASE}/reports/payroll-summary`;

  test("payroll summary: reportType is required; dates and reportDateMacro are exclusive (and each filter family takes one member)", async () => {
    await queuesNothing(async () => {
      refused(await call("GET", REPORT), 400, "INVALID_PARAMETER", "reportType");
      refused(
        await call("GET", `${REPORT}?reportDateFrom=2026-01-01`),
        400,
        "INVALID_PARAMETER",
        "reportType",
      );
      refused(await call("GET", `${REPORT}?reportType=nope`), 400, "INVALID_PARAMETER", "reportType");
      for (const dates of ["reportDateFrom=2026-01-01", "reportDateTo=2026-12-31"]) {
        const both = refused(
          await call("GET", `${REPORT}?reportType=payroll_summary&${dates}&reportDateMacro=this_year`),
          400,
          "INVALID_PARAMETER",
          "reportDateMacro",
          dates,
        );
        assert.match(String(both.message), /cannot be combined/);
      }
      refused(
        await call(
          "GET",
          `${REPORT}?reportType=payroll_summary&updatedAfter=2026-01-01&updatedDateMacro=today`,
        ),
        400,
        "INVALID_PARAMETER",
        "updatedDateMacro",
      );
      refused(
        await call("GET", `${REPORT}?reportType=payroll_summary&accountType=bank&accountIds=1`),
        400,
        "INVALID_PARAMETER",
        "accountIds",
      );
      refused(
        await call("GET", `${REPORT}?reportType=payroll_summary&entityType=employee&entityFullNames=A`),
        400,
        "INVALID_PARAMETER",
        "entityFullNames",
      );
      refused(
        await call("GET", `${REPORT}?reportType=payroll_summary&reportDateFrom=2026-02-30`),
        400,
        "INVALID_PARAMETER",
        "reportDateFrom",
      );
    });
    // Dates alone, and the macro alone, are accepted.
    const dated = await call(
      "GET",
      `${REPORT}?reportType=payroll_summary&reportDateFrom=2026-01-01&reportDateTo=2026-03-31`,
    );
    assert.equal(ok(dated, 200, "dates").subtitle, "2026-01-01 through 2026-03-31");
    assert.match(
      await sentMessage(dated.requestId),
      /<ReportPeriod><FromReportDate>2026-01-01<\/FromReportDate><ToReportDate>2026-03-31<\/ToReportDate><\/ReportPeriod>/,
    );
    assert.doesNotMatch(await sentMessage(dated.requestId), /ReportDateMacro/);
    const macro = await call("GET", `${REPORT}?reportType=payroll_summary&reportDateMacro=last_quarter`);
    // The application resolves the macro on its own calendar: the quarter before its local today.
    const clock = sys.fakeClock;
    assert.ok(clock);
    const today = new Date(clock.now() + (5 * 60 + 30) * 60_000).toISOString().slice(0, 10);
    const [year, month] = today.split("-").map(Number) as [number, number];
    const firstMonth = Math.floor((month - 1) / 3) * 3 + 1 - 3;
    const day = (at: number): string => new Date(at).toISOString().slice(0, 10);
    const lastQuarter = `${day(Date.UTC(year, firstMonth - 1, 1))} through ${day(Date.UTC(year, firstMonth + 2, 0))}`;
    assert.equal(ok(macro, 200, "macro").subtitle, lastQuarter);
    assert.match(await sentMessage(macro.requestId), /<ReportDateMacro>LastQuarter<\/ReportDateMacro>/);
  });

  test("payroll summary: one valid value of each option is sent and accepted by the application", async () => {
    const account = await firstOf("accounts");
    const employee = await create("employees", { firstName: RUN, lastName: "Payroll" });
    const item = await firstOf("payroll-wage-items?status=all").catch(async () => firstOf("service-items"));
    const klass = await create("classes", { name: `${RUN} Payroll Class` });
    const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
      [
        "reportType",
        "reportType=employee_earnings_summary",
        /<PayrollSummaryReportType>EmployeeEarningsSummary</,
      ],
      [
        "reportType",
        "reportType=payroll_liability_balances",
        /<PayrollSummaryReportType>PayrollLiabilityBalances</,
      ],
      ["accountType", "accountType=bank", /<ReportAccountFilter><AccountTypeFilter>Bank</],
      [
        "accountIds",
        `accountIds=${String(account.id)}`,
        new RegExp(`<ReportAccountFilter><ListID>${String(account.id)}</ListID>`),
      ],
      [
        "accountFullNames",
        `accountFullNames=${encodeURIComponent(String(account.fullName))}`,
        /<ReportAccountFilter><FullName>/,
      ],
      ["entityType", "entityType=employee", /<ReportEntityFilter><EntityTypeFilter>Employee</],
      [
        "entityIds",
        `entityIds=${String(employee.id)}`,
        new RegExp(`<ReportEntityFilter><ListID>${String(employee.id)}</ListID>`),
      ],
      [
        "entityFullNames",
        `entityFullNames=${encodeURIComponent(String(employee.fullName ?? employee.name))}`,
        /<ReportEntityFilter><FullName>/,
      ],
      ["itemType", "itemType=service", /<ReportItemFilter><ItemTypeFilter>Service</],
      [
        "itemIds",
        `itemIds=${String(item.id)}`,
        new RegExp(`<ReportItemFilter><ListID>${String(item.id)}</ListID>`),
      ],
      [
        "itemFullNames",
        `itemFullNames=${encodeURIComponent(String(item.fullName ?? item.name))}`,
        /<ReportItemFilter><FullName>/,
      ],
      [
        "classIds",
        `classIds=${String(klass.id)}`,
        new RegExp(`<ReportClassFilter><ListID>${String(klass.id)}</ListID>`),
      ],
      [
        "classFullNames",
        `classFullNames=${encodeURIComponent(String(klass.fullName))}`,
        /<ReportClassFilter><FullName>/,
      ],
      [
        "updatedAfter, updatedBefore",
        "updatedAfter=2026-01-01&updatedBefore=2026-12-31",
        /<ReportModifiedDateRangeFilter><FromReportModifiedDate>2026-01-01<\/FromReportModifiedDate><ToReportModifiedDate>2026-12-31</,
      ],
      ["updatedDateMacro", "updatedDateMacro=this_month", /<ReportModifiedDateRangeMacro>ThisMonth</],
      ["detailLevel", "detailLevel=summary_only", /<ReportDetailLevelFilter>SummaryOnly</],
      ["postingStatus", "postingStatus=posting", /<ReportPostingStatusFilter>Posting</],
      ["summarizeColumnsBy", "summarizeColumnsBy=month", /<SummarizeColumnsBy>Month</],
      ["includeSubcolumns", "includeSubcolumns=true", /<IncludeSubcolumns>true</],
      ["reportCalendar", "reportCalendar=fiscal_year", /<ReportCalendar>FiscalYear</],
      ["rowsToReturn", "rowsToReturn=non_zero", /<ReturnRows>NonZero</],
      ["columnsToReturn", "columnsToReturn=active_only", /<ReturnColumns>ActiveOnly</],
    ];
    for (const [option, query, element] of cases) {
      const withType = query.startsWith("reportType=") ? query : `reportType=payroll_summary&${query}`;
      const answer = await call("GET", `${REPORT}?${withType}`);
      const report = ok(answer, 200, option);
      assert.equal(report.objectType, "ledger_report", option);
      assert.equal(report.category, "payroll_summary", option);
      assert.equal(report.reportType, /reportType=(\w+)/.exec(withType)?.[1], option);
      assert.equal((report.rows as Json[]).length, report.rowCount, option);
      assert.match(await sentMessage(answer.requestId), element, option);
    }
  });
});

describe("Custom field (set a custom field)", () => {
  test("custom field body: operation and name required, value required for add and update and absent for delete; the service's own owner refused; nothing queued", async () => {
    ok(
      await call("POST", `${BASE}/custom-field-definitions`, {
        name: `${RUN} Tier`,
        objectTypes: ["customer"],
      }),
      201,
      "definition",
    );
    const customer = await create("customers", { name: `${RUN} Custom Field Customer` });
    const path = `${BASE}/customers/${String(customer.id)}/custom-fields`;
    const name = `${RUN} Tier`;
    await queuesNothing(async () => {
      refused(await call("POST", path, { name, value: "x" }), 400, "INVALID_PARAMETER", "operation");
      refused(
        await call("POST", path, { operation: "upsert", name, value: "x" }),
        400,
        "INVALID_PARAMETER",
        "operation",
      );
      refused(
        await call("POST", path, { operation: "update", value: "x" }),
        400,
        "INVALID_PARAMETER",
        "name",
      );
      refused(
        await call("POST", path, { operation: "update", name: "x".repeat(32), value: "x" }),
        400,
        "STRING_TOO_LONG",
        "name",
      );
      refused(
        await call("POST", path, { operation: "update", name, value: "smile \u{1F600}" }),
        400,
        "UNSUPPORTED_CHARACTER",
        "value",
      );
      for (const operation of ["add", "update"]) {
        refused(await call("POST", path, { operation, name }), 400, "INVALID_PARAMETER", "value", operation);
      }
      refused(
        await call("POST", path, { operation: "delete", name, value: "x" }),
        400,
        "INVALID_PARAMETER",
        "value",
        "delete with a value",
      );
      refused(
        await call("POST", path, { operation: "update", name, value: "x", color: "red" }),
        400,
        "UNKNOWN_PARAMETER",
        "color",
      );
      for (const ownerId of [SERVICE_OWNER_ID, SERVICE_OWNER_ID.toLowerCase()]) {
        refused(
          await call("POST", path, { operation: "update", ownerId, name, value: "x" }),
          400,
          "INVALID_PARAMETER",
          "ownerId",
          ownerId,
        );
      }
      refused(
        await call("POST", path, { operation: "update", ownerId: "x".repeat(39), name, value: "x" }),
        400,
        "INVALID_PARAMETER",
        "ownerId",
      );
    });
    const read = ok(await call("GET", `${BASE}/customers/${String(customer.id)}`), 200, "read back");
    assert.deepEqual(read.customFields, [], "no refused call wrote a value");
    assert.equal(read.revisionNumber, customer.revisionNumber);
  });

  test("custom field async: Prefer respond-async answers 202 with the Request; its result is the custom field value", async () => {
    const name = `${RUN} Async`;
    ok(
      await call("POST", `${BASE}/custom-field-definitions`, { name, objectTypes: ["customer"] }),
      201,
      "definition",
    );
    const customer = await create("customers", { name: `${RUN} Async Customer` });
    const queued = await call(
      "POST",
      `${BASE}/customers/${String(customer.id)}/custom-fields`,
      { operation: "update", name, value: "Platinum" },
      { prefer: "respond-async" },
    );
    const request = ok(queued, 202, "async");
    assert.equal(request.objectType, "request");
    assert.ok(queued.location?.endsWith(`/v1/requests/${String(request.id)}`), String(queued.location));
    assert.equal(request.operationId, "ledger.customers.setCustomField");
    const done = await eventually("the custom field request finished", async () => {
      const read = (await (await sys.call("GET", `/v1/requests/${String(request.id)}`)).json()) as Json;
      return read.status === "succeeded" || read.status === "failed" ? read : null;
    });
    assert.equal(done.status, "succeeded", JSON.stringify(done));
    assert.deepEqual(done.result, {
      objectType: "ledger_custom_field_value",
      ownerId: "0",
      name,
      type: "string_255_type",
      value: "Platinum",
    });
    const read = ok(await call("GET", `${BASE}/customers/${String(customer.id)}`), 200, "read back");
    assert.deepEqual(read.customFields, [{ ownerId: "0", name, type: "string_255_type", value: "Platinum" }]);
  });
});

describe("Inventory adjustment lines", () => {
  test("inventory adjustment lines: exactly one of adjustQuantity, adjustValue, adjustSerialNumber, adjustLotNumber, and one of each inner pair", async () => {
    const account = await firstOf("accounts");
    const item = await create("inventory-items", { name: `${RUN} Adjusted Widget` });
    const body = (line: Json): Json => ({ accountId: account.id, lines: [{ itemId: item.id, ...line }] });
    const path = `${BASE}/inventory-adjustments`;
    await queuesNothing(async () => {
      const cases: ReadonlyArray<readonly [Json, string, string]> = [
        [{}, "INVALID_PARAMETER", "lines[0].adjustQuantity"],
        [
          { adjustQuantity: { quantityDifference: 1 }, adjustValue: { quantityDifference: 1 } },
          "INVALID_PARAMETER",
          "lines[0].adjustValue",
        ],
        [
          {
            adjustSerialNumber: { addSerialNumber: "S1" },
            adjustLotNumber: { lotNumber: "L1", adjustCount: 1 },
          },
          "INVALID_PARAMETER",
          "lines[0].adjustLotNumber",
        ],
        [
          { adjustQuantity: { newQuantity: 3, quantityDifference: 1 } },
          "INVALID_PARAMETER",
          "lines[0].adjustQuantity.quantityDifference",
        ],
        [
          { adjustQuantity: { quantityDifference: 1, serialNumber: "S1", lotNumber: "L1" } },
          "INVALID_PARAMETER",
          "lines[0].adjustQuantity.lotNumber",
        ],
        [
          { adjustValue: { newQuantity: 3, quantityDifference: 1 } },
          "INVALID_PARAMETER",
          "lines[0].adjustValue.quantityDifference",
        ],
        [
          { adjustSerialNumber: { addSerialNumber: "S1", removeSerialNumber: "S2" } },
          "INVALID_PARAMETER",
          "lines[0].adjustSerialNumber.removeSerialNumber",
        ],
        // Decision 0015: the application's schema allows a value adjustment's value zero times.
        [
          { adjustValue: { quantityDifference: 1, newValue: "10.00" } },
          "UNKNOWN_PARAMETER",
          "lines[0].adjustValue.newValue",
        ],
      ];
      for (const [line, code, param] of cases) {
        refused(await call("POST", path, body(line)), 400, code, param, JSON.stringify(line));
      }
    });

    // One member of the quartet, one of its pair: accepted, sent as its aggregate, and applied.
    const adjusted = await call("POST", path, body({ adjustQuantity: { quantityDifference: 5 } }));
    const adjustment = ok(adjusted, 201, "quantity difference");
    assert.match(
      await sentMessage(adjusted.requestId),
      /<InventoryAdjustmentLineAdd><ItemRef><ListID>[^<]+<\/ListID><\/ItemRef><QuantityAdjustment><QuantityDifference>5<\/QuantityDifference><\/QuantityAdjustment>/,
    );
    const [line] = adjustment.lines as Json[];
    assert.deepEqual([line?.quantityDifference, (line?.item as Json | undefined)?.id], [5, item.id]);
    const stock = ok(await call("GET", `${BASE}/inventory-items/${String(item.id)}`), 200, "item");
    assert.equal(stock.quantityOnHand, 5);
    const newQuantity = await call("POST", path, body({ adjustQuantity: { newQuantity: 8 } }));
    ok(newQuantity, 201, "new quantity");
    assert.match(
      await sentMessage(newQuantity.requestId),
      /<QuantityAdjustment><NewQuantity>8<\/NewQuantity>/,
    );
    const after = ok(await call("GET", `${BASE}/inventory-items/${String(item.id)}`), 200, "item");
    assert.equal(after.quantityOnHand, 8);

    // Update lines: a serial number or a lot, not both.
    await queuesNothing(async () => {
      refused(
        await call("POST", `${path}/${String(adjustment.id)}`, {
          revisionNumber: adjustment.revisionNumber,
          lines: [{ id: line?.id, serialNumber: "S1", lotNumber: "L1" }],
        }),
        400,
        "INVALID_PARAMETER",
        "lines[0].lotNumber",
      );
      // The application's adjustment update has no clear flag for its lines (unlike bills, below).
      refused(
        await call("POST", `${path}/${String(adjustment.id)}`, {
          revisionNumber: adjustment.revisionNumber,
          clearLines: true,
        }),
        400,
        "UNKNOWN_PARAMETER",
        "clearLines",
      );
    });
  });
});

describe("Update: clear<Lines> flags", () => {
  test("clear<Lines>: clearItemLines is sent in the update message and removes that kind of line, keeping the others", async () => {
    const vendor = await create("vendors", { name: `${RUN} Clear Vendor` });
    const account = await firstOf("accounts");
    const item = await create("inventory-items", { name: `${RUN} Clear Item` });
    const bill = await create("bills", {
      vendorId: vendor.id,
      expenseLines: [{ accountId: account.id, amount: "5.00" }],
      itemLines: [{ itemId: item.id, quantity: 1, cost: "2.00" }],
    });
    assert.equal((bill.itemLines as Json[]).length, 1);
    const cleared = await call("POST", `${BASE}/bills/${String(bill.id)}`, {
      revisionNumber: bill.revisionNumber,
      clearItemLines: true,
    });
    const updated = ok(cleared, 200, "clearItemLines");
    assert.match(await sentMessage(cleared.requestId), /<ClearItemLines>true<\/ClearItemLines>/);
    assert.deepEqual(updated.itemLines, []);
    assert.deepEqual(
      (updated.expenseLines as Json[]).map((l) => l.amount),
      ["5.00"],
    );
    const clearedExpenses = await call("POST", `${BASE}/bills/${String(bill.id)}`, {
      revisionNumber: updated.revisionNumber,
      clearExpenseLines: true,
      itemLines: [{ id: "-1", itemId: item.id, quantity: 2, cost: "3.00" }],
    });
    const again = ok(clearedExpenses, 200, "clearExpenseLines");
    assert.match(
      await sentMessage(clearedExpenses.requestId),
      /<ClearExpenseLines>true<\/ClearExpenseLines>/,
    );
    assert.deepEqual(again.expenseLines, []);
    assert.deepEqual(
      (again.itemLines as Json[]).map((l) => l.quantity),
      [2],
    );
  });
});

describe("Linked transactions", () => {
  test("linked transactions: a payment applied to an invoice is read back on the invoice when requested", async () => {
    const customer = await create("customers", { name: `${RUN} Linked Customer` });
    const invoice = await create("invoices", {
      customerId: customer.id,
      lines: [{ description: "Linked work", amount: "120.00" }],
    });
    const payment = await create("receive-payments", {
      customerId: customer.id,
      totalAmount: "45.00",
      applyToTransactions: [{ transactionId: invoice.id, paymentAmount: "45.00" }],
    });
    const asked = await call(
      "GET",
      `${BASE}/invoices?ids=${String(invoice.id)}&includeLinkedTransactions=true`,
    );
    const [withLinks] = ok(asked, 200, "with links").data as Json[];
    assert.match(await sentMessage(asked.requestId), /<IncludeLinkedTxns>true<\/IncludeLinkedTxns>/);
    const links = withLinks?.linkedTransactions as Json[];
    assert.equal(links.length, 1, JSON.stringify(links));
    const [link] = links as [Json];
    // The spec's fields of a linked transaction (more may follow from the application's schema).
    assert.deepEqual(
      {
        id: link.id,
        objectType: link.objectType,
        transactionType: link.transactionType,
        transactionDate: link.transactionDate,
        refNumber: link.refNumber,
        linkType: link.linkType,
        amount: link.amount,
      },
      {
        id: payment.id,
        objectType: "ledger_linked_transaction",
        transactionType: "receive_payment",
        transactionDate: payment.transactionDate,
        refNumber: payment.refNumber,
        linkType: "amount",
        amount: "-45.00",
      },
    );
    const [withoutLinks] = ok(await call("GET", `${BASE}/invoices?ids=${String(invoice.id)}`), 200, "without")
      .data as Json[];
    assert.deepEqual(withoutLinks?.linkedTransactions, []);
  });
});

describe("Value formats", () => {
  test("percentages are decimal strings: '7.5' means 7.5 %, read back as written", async () => {
    const item = await create("inventory-items", { name: `${RUN} Percent Item` });
    const level = await create("price-levels", { name: `${RUN} Pct`, fixedPercentage: "-7.5" });
    const perItem = await create("price-levels", {
      name: `${RUN} Pct Item`,
      perItemPriceLevels: [{ itemId: item.id, customPricePercent: "12.25" }],
    });
    const tax = await create("sales-tax-items", { name: `${RUN} Tax`, taxRate: "8.375" });
    for (const [label, record, read] of [
      ["price level", level, (r: Json) => r.fixedPercentage],
      ["per-item price", perItem, (r: Json) => (r.perItemPriceLevels as Json[])[0]?.customPricePercent],
      ["sales tax rate", tax, (r: Json) => r.taxRate],
    ] as const) {
      assert.equal(typeof read(record), "string", `${label}: ${JSON.stringify(read(record))}`);
    }
    assert.equal(Number(level.fixedPercentage), -7.5);
    assert.equal(Number((perItem.perItemPriceLevels as Json[])[0]?.customPricePercent), 12.25);
    assert.equal(Number(tax.taxRate), 8.375);
    const reread = ok(await call("GET", `${BASE}/sales-tax-items/${String(tax.id)}`), 200, "reread");
    assert.equal(reread.taxRate, tax.taxRate);
    const levelRead = ok(await call("GET", `${BASE}/price-levels/${String(level.id)}`), 200, "reread level");
    assert.equal(levelRead.fixedPercentage, level.fixedPercentage);
    // A percentage is a decimal string with up to 5 places: never a number, never rounded.
    await queuesNothing(async () => {
      refused(
        await call("POST", `${BASE}/price-levels`, { name: `${RUN} Pct 6`, fixedPercentage: "1.123456" }),
        400,
        "DECIMAL_PRECISION_EXCEEDED",
        "fixedPercentage",
      );
      refused(
        await call("POST", `${BASE}/price-levels`, { name: `${RUN} Pct N`, fixedPercentage: 7.5 }),
        400,
        "INVALID_PARAMETER",
        "fixedPercentage",
      );
    });
    const created = await call("POST", `${BASE}/sales-tax-items`, { name: `${RUN} Tax 2`, taxRate: "6.5" });
    ok(created, 201, "tax 2");
    assert.match(await sentMessage(created.requestId), /<TaxRate>6.5<\/TaxRate>/);
  });

  test("application record timestamps carry the application computer's UTC offset and whole seconds", async () => {
    const clock = sys.fakeClock;
    assert.ok(clock);
    const at = Math.floor(clock.now() / 1000) * 1000;
    const customer = await create("customers", { name: `${RUN} Stamped` });
    const pattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;
    for (const field of ["createdAt", "updatedAt"] as const) {
      const value = String(customer[field]);
      assert.match(value, pattern, field);
      assert.equal(value.slice(-6), UTC_OFFSET, `${field} carries the file computer's offset`);
      assert.equal(Date.parse(value), at, `${field} is the application's time of the write`);
    }
    // The local wall time is the instant shifted by the offset.
    const local = new Date(at + (5 * 60 + 30) * 60_000).toISOString().slice(0, 19);
    assert.equal(String(customer.createdAt).slice(0, 19), local);
    const read = ok(await call("GET", `${BASE}/customers/${String(customer.id)}`), 200, "retrieve");
    assert.deepEqual([read.createdAt, read.updatedAt], [customer.createdAt, customer.updatedAt]);
    await clock.advance(2000);
    const updated = ok(
      await call("POST", `${BASE}/customers/${String(customer.id)}`, {
        revisionNumber: customer.revisionNumber,
        companyName: "Stamped Ltd",
      }),
      200,
      "update",
    );
    assert.equal(updated.createdAt, customer.createdAt);
    assert.equal(Date.parse(String(updated.updatedAt)), at + 2000);
    assert.equal(String(updated.updatedAt).slice(-6), UTC_OFFSET);
  });
});
