import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resourceByPath, type ResourceDefinition } from "../../src/ledger/resources/definitions.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { TypedFactory } from "../../src/testing/typed-factory.ts";
import { countRequests, bringOnline, E2E_CONFIG, callAsEndUser, type JsonAnswer } from "./helpers.ts";

/**
 * The market's names through HTTP, the SOAP protocol and the simulated application (issue 15,
 * "Names"; decision 0015): enumeration values are accepted in the market's spelling and come back
 * in it, the old spellings are refused before anything is queued, and the renamed fields (lead
 * contacts, bills to pay, inventory adjustments' `valueDifference` as a number) round-trip.
 */
let sys: System;
let eu: ConnectedEndUser;
let factory: TypedFactory;
type Json = Record<string, unknown>;

const BASE = "/v1/ledger-desktop";
const call = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<JsonAnswer> =>
  callAsEndUser(sys, eu, method, `${BASE}/${path}`, body);

function group(path: string): ResourceDefinition {
  const resource = resourceByPath(path);
  assert.ok(resource, path);
  return resource;
}

function ok(result: JsonAnswer, status: number): Json {
  assert.equal(result.status, status, JSON.stringify(result.body).slice(0, 2000));
  return result.body;
}

function refused(result: JsonAnswer, code: string, param: string): void {
  assert.equal(result.status, 400, JSON.stringify(result.body));
  const error = result.body.error as Json;
  assert.equal(error.code, code, JSON.stringify(error));
  assert.equal(error.param, param, JSON.stringify(error));
}

const requestCount = (): Promise<number> => countRequests(sys);

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  eu = await sys.connectEndUser({ companyName: "Market Names Co" });
  await bringOnline(sys, eu);
  factory = new TypedFactory((method, path, body) => callAsEndUser(sys, eu, method, path, body));
});
after(() => sys.close());

describe("enumeration values in the market's spelling", () => {
  test("employees: the market's words for yes/no answers, accrual periods and ethnicity", async () => {
    const created = ok(
      await call("POST", "employees", {
        firstName: "Ada",
        lastName: `Market ${factory.serial()}`,
        usVeteranStatus: "veteran",
        disabilityStatus: "non_disabled",
        keyEmployeeStatus: "key_employee",
        i9OnFileStatus: "not_on_file",
        usCitizenshipStatus: "citizen",
        ethnicity: "american_indian",
        employeePayroll: {
          useTimeDataToCreatePaychecks: "uses_time_data",
          sickHours: { accrualPeriod: "accrues_per_paycheck" },
        },
      }),
      201,
    );
    const read = ok(await call("GET", `employees/${String(created.id)}`), 200);
    assert.equal(read.usVeteranStatus, "veteran");
    assert.equal(read.disabilityStatus, "non_disabled");
    assert.equal(read.keyEmployeeStatus, "key_employee");
    assert.equal(read.i9OnFileStatus, "not_on_file");
    assert.equal(read.usCitizenshipStatus, "citizen");
    assert.equal(read.ethnicity, "american_indian");
    const payroll = read.employeePayroll as Json;
    assert.equal(payroll.useTimeDataToCreatePaychecks, "uses_time_data");
    assert.equal((payroll.sickHours as Json).accrualPeriod, "accrues_per_paycheck");
  });

  test("reports take sales_representative and shipping_method; custom_transaction_detail is the custom report", async () => {
    const report = ok(
      await call(
        "GET",
        "reports/general-summary?reportType=profit_and_loss_standard&summarizeColumnsBy=sales_representative",
      ),
      200,
    );
    assert.equal(report.objectType, "ledger_report");
    assert.ok([null, "accrual", "cash", "none"].includes(report.basis as string | null), "basis");
    ok(await call("GET", "reports/general-detail?reportType=transaction_list_by_date"), 200);
    const custom = ok(
      await call(
        "GET",
        "reports/custom-detail?reportType=custom_transaction_detail&summarizeRowsBy=shipping_method" +
          "&includeColumns=transaction_type&includeColumns=shipping_method",
      ),
      200,
    );
    assert.equal(custom.reportType, "custom_transaction_detail");
  });

  test("deleted list objects answer and filter with customer_message", async () => {
    const message = ok(await call("POST", "customer-messages", { name: `Thanks ${factory.serial()}` }), 201);
    ok(await call("DELETE", `customer-messages/${String(message.id)}?confirm=true`), 200);
    const deleted = ok(await call("GET", "deleted-list-objects?objectTypes=customer_message"), 200);
    const mine = (deleted.data as Json[]).find((d) => d.id === message.id);
    assert.ok(mine, JSON.stringify(deleted.data));
    assert.equal(mine.listType, "customer_message");
  });

  test("the transactions list takes the market's detail levels", async () => {
    ok(await call("GET", "transactions?detailLevel=transactions_without_lines"), 200);
    ok(await call("GET", "transactions?detailLevel=transaction_lines_only"), 200);
  });

  test("the old spellings are refused before anything is queued", async () => {
    const before = await requestCount();
    refused(
      await call(
        "GET",
        "reports/general-summary?reportType=profit_and_loss_standard&summarizeColumnsBy=sales_rep",
      ),
      "INVALID_PARAMETER",
      "summarizeColumnsBy",
    );
    refused(
      await call("GET", "deleted-list-objects?objectTypes=customer_msg"),
      "INVALID_PARAMETER",
      "objectTypes",
    );
    refused(
      await call("GET", "reports/custom-detail?reportType=custom_txn_detail&includeColumns=txn_type"),
      "INVALID_PARAMETER",
      "reportType",
    );
    refused(
      await call("POST", "employees", { lastName: "Old", usVeteranStatus: "yes" }),
      "INVALID_PARAMETER",
      "usVeteranStatus",
    );
    assert.equal(await requestCount(), before);
  });
});

describe("field names", () => {
  test("a lead's contacts and every line of its address round-trip", async () => {
    const lines = {
      line1: "1 Quay St",
      line2: "Unit 2",
      line3: "Dock 3",
      line4: "Harbour 4",
      line5: "Box 5",
    };
    const created = ok(
      await call("POST", "leads", {
        fullName: `Lead ${factory.serial()}`,
        status: "warm",
        locations: [{ location: "Head office", leadAddress: lines }],
        contacts: [{ firstName: "Grace", lastName: "Hopper", jobTitle: "Buyer", isPrimaryContact: true }],
      }),
      201,
    );
    const read = ok(await call("GET", `leads/${String(created.id)}`), 200);
    assert.ok(!("leadContacts" in read));
    const contacts = read.contacts as Json[];
    assert.equal(contacts.length, 1);
    assert.equal(contacts[0]?.firstName, "Grace");
    assert.equal(contacts[0]?.isPrimaryContact, true);
    const locations = read.locations as Json[];
    assert.deepEqual(locations[0]?.leadAddress, lines);
    refused(
      await call("POST", "leads", { fullName: "Old name", leadContacts: [{ firstName: "X" }] }),
      "UNKNOWN_PARAMETER",
      "leadContacts",
    );
  });

  test("an inventory adjustment's valueDifference is a number with at most 2 places", async () => {
    const item = await factory.create(group("inventory-items"));
    const account = await factory.create(group("accounts"));
    const created = ok(
      await call("POST", "inventory-adjustments", {
        accountId: account.id,
        lines: [{ itemId: item.id, adjustValue: { quantityDifference: 2 } }],
      }),
      201,
    );
    const id = String(created.id);
    const first = (created.lines as Json[])[0];
    assert.ok(first);
    assert.equal(first.quantityDifference, 2);
    const line = (valueDifference: unknown) => ({
      revisionNumber: created.revisionNumber,
      // The choice of serial or lot number is optional in the schema; our check asks for one.
      lines: [
        { id: first.id, itemId: item.id, serialNumber: "SN-1", quantityDifference: 2, valueDifference },
      ],
    });
    const before = await requestCount();
    refused(
      await call("POST", `inventory-adjustments/${id}`, line("7.50")),
      "INVALID_PARAMETER",
      "lines[0].valueDifference",
    );
    refused(
      await call("POST", `inventory-adjustments/${id}`, line(7.125)),
      "DECIMAL_PRECISION_EXCEEDED",
      "lines[0].valueDifference",
    );
    // The application's schema allows no value in a value adjustment (maxOccurs 0): not a field.
    refused(
      await call("POST", "inventory-adjustments", {
        accountId: account.id,
        lines: [{ itemId: item.id, adjustValue: { quantityDifference: 1, valueDifference: 7.5 } }],
      }),
      "UNKNOWN_PARAMETER",
      "lines[0].adjustValue.valueDifference",
    );
    assert.equal(await requestCount(), before);
    ok(await call("POST", `inventory-adjustments/${id}`, line(7.5)), 200);
    const read = ok(await call("GET", `inventory-adjustments/${id}`), 200);
    assert.equal((read.lines as Json[])[0]?.valueDifference, 7.5);
  });

  test("bills to pay name the open bill `bill` with its `billId`", async () => {
    const vendor = await factory.create(group("vendors"));
    const expense = await factory.create(group("accounts"));
    const bill = ok(
      await call("POST", "bills", {
        vendorId: vendor.id,
        expenseLines: [{ accountId: expense.id, amount: "25.00" }],
      }),
      201,
    );
    const toPay = ok(
      await call("GET", `bills-to-pay?vendorId=${encodeURIComponent(String(vendor.id))}`),
      200,
    );
    const mine = (toPay.data as Json[]).find((d) => (d.bill as Json | null)?.billId === bill.id);
    assert.ok(mine, JSON.stringify(toPay.data));
    assert.equal(mine.objectType, "ledger_bill_to_pay");
    assert.equal(mine.credit, null);
    assert.equal((mine.bill as Json).amountDue, "25.00");
    assert.equal((mine.bill as Json).transactionType, "bill");
  });
});
