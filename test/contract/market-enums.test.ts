import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, test, type TestContext } from "node:test";
import { MARKET_DOCUMENT, matchEnumValues, readMarketDocument } from "../../scripts/import-market-names.ts";
import { compareEnumerations, ourDocument } from "../../scripts/market-enums.ts";

/**
 * Every enumeration of the market's OpenAPI document against ours (issue 15, "Names"): query
 * parameters, request bodies and answers, matched by path, method and field path. Each difference
 * left is recorded below with its reason (decision 0015); the test fails on an unrecorded one and
 * on a recorded one that has gone, so the list stays true. Keys are the field path without its
 * operation (`200.x` is an answer's field, `body.x` a request's, `?x` a query parameter), the side
 * and the value; `absent` means we have no enumeration there.
 */
const UNKNOWN_TYPE =
  "the market's placeholder for a transaction type it cannot name; an unknown value from the application is answered as null with a LEDGER_VALUE_UNREADABLE warning, never a made-up value";
const PAYROLL_DELETED =
  "the application can delete payroll adjustments the market's list omits; they stay accepted and answered";
const RECORDED: Readonly<Record<string, string>> = {
  "200.appliedToTransactions[].linkedTransactions[].transactionType market-only unknown": UNKNOWN_TYPE,
  "200.appliedToTransactions[].transactionType market-only unknown": UNKNOWN_TYPE,
  "200.bill.transactionType market-only unknown": UNKNOWN_TYPE,
  "200.credit.transactionType market-only unknown": UNKNOWN_TYPE,
  "200.lines[].transactionType market-only unknown": UNKNOWN_TYPE,
  "200.linkedTransactions[].transactionType market-only unknown": UNKNOWN_TYPE,
  "200.refundAppliedToTransactions[].transactionType market-only unknown": UNKNOWN_TYPE,
  "200.transactionType market-only unknown": UNKNOWN_TYPE,
  "200.transactionType ours-only payroll_liability_adjustment": PAYROLL_DELETED,
  "200.transactionType ours-only payroll_prior_payment": PAYROLL_DELETED,
  "200.transactionType ours-only payroll_year_to_date_adjustment": PAYROLL_DELETED,
  "?transactionTypes ours-only payroll_liability_adjustment": PAYROLL_DELETED,
  "?transactionTypes ours-only payroll_prior_payment": PAYROLL_DELETED,
  "?transactionTypes ours-only payroll_year_to_date_adjustment": PAYROLL_DELETED,
  "200.itemGroupLines[].customFields[].type absent":
    "the application's item group lines carry custom fields without a type (DataExt, not DataExtRet)",
  "200.preferredDeliveryMethod market-only mail":
    "the application's schema offers none, email and fax; it would refuse mail",
  "body.preferredDeliveryMethod market-only mail": "the application's schema offers none, email and fax",
  "200.preferredDeliveryMethod ours-only fax": "the application's value, which the market lacks",
  "body.preferredDeliveryMethod ours-only fax": "the application's value, which the market lacks",
  "200.reportingPeriod market-only annual": "the application's schema offers monthly and quarterly only",
  "200.taxForm market-only form_t1": "a Canadian form the application's (US) schema does not list",
  "200.taxForm market-only form_t2": "a Canadian form the application's (US) schema does not list",
  "?reportType ours-only ":
    "the application's schema lists an empty job report type; it is passed on as given (the list filters' enumeration)",
  "body.address.state absent":
    "the market lists US states for an employee's address; the application takes any text (provinces, counties)",
};

function requireDocument(t: TestContext): boolean {
  if (existsSync(MARKET_DOCUMENT)) return true;
  // CI has the document: a missing one there is a broken setup, not a reason to pass.
  assert.ok(!process.env.CI, `the market's document is not at ${MARKET_DOCUMENT} (CI is set)`);
  t.skip(`the market's document is not at ${MARKET_DOCUMENT}`);
  return false;
}

describe("enumeration values against the market's published ones", () => {
  test("every difference is fixed or recorded", (t) => {
    if (!requireDocument(t)) return;
    const result = compareEnumerations(readMarketDocument(), ourDocument());
    assert.ok(result.sharedSites >= 1000, `compared ${result.sharedSites} enumerations`);
    const unrecorded = [...result.differences]
      .filter(([key]) => !(key in RECORDED))
      .map(([key, sites]) => `${key} (${sites.length} sites, e.g. ${sites[0] ?? ""})`);
    assert.deepEqual(unrecorded, [], "enumeration differences that are not recorded");
    const stale = Object.keys(RECORDED).filter((key) => !result.differences.has(key));
    assert.deepEqual(stale, [], "recorded differences that no longer exist");
    for (const [key, sites] of result.differences) t.diagnostic(`${key}: ${sites.length} sites`);
    t.diagnostic(
      `${result.sharedSites} of ${result.marketSites} market enumerations compared; ` +
        `${result.refused} of ${result.marketValues} market values refused or never produced; ` +
        `once per field and value ${result.distinct.refused} of ${result.distinct.values}, ` +
        `${result.distinct.absent} at fields we lack`,
    );
  });
});

describe("matching the market's spelling of an enumeration value", () => {
  test("same letters, spelled-out abbreviations and letter-by-letter abbreviations", () => {
    const matched = matchEnumValues(
      [
        "AccountsPayable",
        "CustomerMsg",
        "TxnType",
        "OpenPOs",
        "OpenPOsByJob",
        "PendingOnly",
        "NotPendingOnly",
      ],
      [
        "accounts_payable",
        "customer_message",
        "transaction_type",
        "open_purchase_orders",
        "open_purchase_orders_by_job",
        "pending",
        "not_pending",
      ],
    );
    assert.deepEqual(Object.fromEntries(matched), {
      AccountsPayable: "accounts_payable",
      CustomerMsg: "customer_message",
      TxnType: "transaction_type",
      OpenPOs: "open_purchase_orders",
      OpenPOsByJob: "open_purchase_orders_by_job",
      PendingOnly: "pending",
      NotPendingOnly: "not_pending",
    });
  });

  test("values spelled with other words, or equally close to two, are not guessed", () => {
    assert.deepEqual(Object.fromEntries(matchEnumValues(["Yes", "No"], ["veteran", "non_veteran"])), {});
    assert.deepEqual(Object.fromEntries(matchEnumValues(["Fax"], ["mail"])), {});
    assert.deepEqual(Object.fromEntries(matchEnumValues(["ShipA"], ["ship_ab", "ship_ac"])), {});
  });
});
