import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ledgerSchema } from "../xml/schema.ts";
import { slotsOf } from "../xml/slots.ts";
import { defaultEnumValue, jsonEnumValue, nameTable } from "./names.ts";

/**
 * The enumeration table (names.ts rule 5, issue 15 "Names"): JSON values are the market's where it
 * publishes the same element's enumeration, named per element. These checks need no market
 * document; `test/contract/market-enums.test.ts` compares with it.
 */

/** Every enumeration element of the schema with the XML values it may hold (all its types). */
function enumerationElements(): Map<string, Set<string>> {
  const schema = ledgerSchema();
  const out = new Map<string, Set<string>>();
  for (const key of Object.keys(schema.table.complex)) {
    for (const slot of slotsOf(schema, key)) {
      if (slot.type.kind !== "simple" || !slot.type.entry.e?.length) continue;
      const values = out.get(slot.name) ?? new Set<string>();
      for (const value of slot.type.entry.e) values.add(value);
      out.set(slot.name, values);
    }
  }
  return out;
}

describe("enumeration values", () => {
  const elements = enumerationElements();

  test("no two values of one element share a JSON value (input maps back to one XML value)", () => {
    const clashes: string[] = [];
    for (const [element, values] of elements) {
      const seen = new Map<string, string>();
      for (const value of values) {
        const json = jsonEnumValue(nameTable(), element, value);
        const other = seen.get(json);
        // Two spellings of one value in different enumeration types (`None`/`NONE`) are one value.
        if (other !== undefined && other.toLowerCase() !== value.toLowerCase())
          clashes.push(`${element}: ${other} and ${value} → ${json}`);
        seen.set(json, value);
      }
    }
    assert.deepEqual(clashes, []);
  });

  test("every entry of the table names an element and a value the schema has", () => {
    const stale: string[] = [];
    for (const [element, map] of Object.entries(nameTable().enumValues)) {
      const values = elements.get(element);
      for (const [value, json] of Object.entries(map)) {
        if (!values?.has(value)) stale.push(`${element}.${value}`);
        else if (json === defaultEnumValue(value)) stale.push(`${element}.${value} repeats rule 5`);
      }
    }
    assert.deepEqual(stale, []);
  });

  test("the market's spellings, per element", () => {
    const table = nameTable();
    const cases: [string, string, string][] = [
      // Deleted list objects: the market spells out these two and keeps `ship_method`.
      ["ListDelType", "CustomerMsg", "customer_message"],
      ["ListDelType", "SalesRep", "sales_representative"],
      ["ListDelType", "ShipMethod", "ship_method"],
      // Reports' summaries and columns spell out both (spec: `summarizeColumnsBy`).
      ["SummarizeColumnsBy", "SalesRep", "sales_representative"],
      ["SummarizeColumnsBy", "ShipMethod", "shipping_method"],
      ["SummarizeRowsBy", "ShipMethod", "shipping_method"],
      ["IncludeColumn", "TxnNumber", "transaction_number"],
      ["IncludeColumn", "FOB", "shipment_origin"],
      ["CustomDetailReportType", "CustomTxnDetail", "custom_transaction_detail"],
      ["GeneralDetailReportType", "OpenPOsByJob", "open_purchase_orders_by_job"],
      ["GeneralSummaryReportType", "ProfitAndLossYTDComp", "profit_and_loss_ytd_comparison"],
      // Filters and employees.
      ["PendingStatus", "NotPendingOnly", "not_pending"],
      ["TransactionDetailLevelFilter", "SummaryOnly", "transactions_without_lines"],
      ["USVeteran", "Yes", "veteran"],
      ["OnFile", "No", "not_on_file"],
      ["AccrualPeriod", "EveryPaycheck", "accrues_per_paycheck"],
      ["Ethnicity", "AmericianIndian", "american_indian"],
      // Transaction types keep rule 5 (the market has the same).
      ["TxnTypeFilter", "ARRefundCreditCard", "ar_refund_credit_card"],
    ];
    for (const [element, value, json] of cases) {
      assert.equal(jsonEnumValue(table, element, value), json, `${element}.${value}`);
    }
  });
});
