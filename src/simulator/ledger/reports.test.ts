/**
 * Report queries against the sample company: every report request of the schema is answered with a
 * schema-valid report, and the numbers agree with the records (aging totals are the customers'
 * balances; a detail report keeps to its period).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Big from "big.js";
import { attr, child, childText, childrenNamed, type XmlElement } from "../../ledger/xml/tree.ts";
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { messageProblem } from "../../ledger/xml/validate-tree.ts";
import { send, setup, statusOf } from "./test-support.ts";

const REPORTS: ReadonlyArray<readonly [string, string]> = [
  ["AgingReportQueryRq", "<AgingReportType>ARAgingSummary</AgingReportType>"],
  [
    "BudgetSummaryReportQueryRq",
    "<BudgetSummaryReportType>ProfitAndLossBudgetOverview</BudgetSummaryReportType><FiscalYear>2026</FiscalYear>",
  ],
  [
    "CustomDetailReportQueryRq",
    "<CustomDetailReportType>CustomTxnDetail</CustomDetailReportType><SummarizeRowsBy>Account</SummarizeRowsBy><IncludeColumn>Amount</IncludeColumn>",
  ],
  [
    "CustomSummaryReportQueryRq",
    "<CustomSummaryReportType>CustomSummary</CustomSummaryReportType><SummarizeColumnsBy>TotalOnly</SummarizeColumnsBy><SummarizeRowsBy>Account</SummarizeRowsBy>",
  ],
  ["GeneralDetailReportQueryRq", "<GeneralDetailReportType>TxnListByDate</GeneralDetailReportType>"],
  [
    "GeneralSummaryReportQueryRq",
    "<GeneralSummaryReportType>ProfitAndLossStandard</GeneralSummaryReportType>",
  ],
  ["JobReportQueryRq", "<JobReportType>JobProfitabilitySummary</JobReportType>"],
  ["PayrollDetailReportQueryRq", "<PayrollDetailReportType>PayrollItemDetail</PayrollDetailReportType>"],
  ["PayrollSummaryReportQueryRq", "<PayrollSummaryReportType>PayrollSummary</PayrollSummaryReportType>"],
  ["TimeReportQueryRq", "<TimeReportType>TimeByName</TimeReportType>"],
];

function reportOf(rs: XmlElement | undefined): XmlElement {
  assert.equal(statusOf(rs).code, "0", statusOf(rs).message);
  const ret = rs?.children[0];
  assert.ok(ret !== undefined && ret.name === "ReportRet");
  return ret;
}

function lastAmount(row: XmlElement): string {
  const cells = childrenNamed(row, "ColData");
  return attr(cells[cells.length - 1] as XmlElement, "value") ?? "";
}

describe("report queries", () => {
  it("every report request is answered with a schema-valid report", async () => {
    assert.equal(
      REPORTS.length,
      [...ledgerSchema().requests].filter((r) => r.endsWith("ReportQueryRq")).length,
    );
    const { session } = await setup();
    for (const [name, inner] of REPORTS) {
      const response = await send(session, `<${name}>${inner}</${name}>`);
      const rs = response.rs[0];
      const ret = reportOf(rs);
      assert.equal(messageProblem(ledgerSchema(), rs as XmlElement), null, name);
      const rows = child(ret, "ReportData")?.children ?? [];
      assert.equal(Number(childText(ret, "NumRows")), rows.length, name);
      assert.equal(Number(childText(ret, "NumColumns")), childrenNamed(ret, "ColDesc").length, name);
    }
  });

  it("the receivables aging lists each customer with a balance, and its total is their sum", async () => {
    const { session } = await setup();
    const customers = await send(
      session,
      "<CustomerQueryRq><ActiveStatus>All</ActiveStatus></CustomerQueryRq>",
    );
    const balances = childrenNamed(customers.rs[0] as XmlElement, "CustomerRet")
      .map((c) => new Big(childText(c, "Balance") ?? "0"))
      .filter((b) => !b.eq(0));
    assert.ok(balances.length > 0, "the sample company has open receivables");
    const report = reportOf(
      (
        await send(
          session,
          "<AgingReportQueryRq><AgingReportType>ARAgingSummary</AgingReportType></AgingReportQueryRq>",
        )
      ).rs[0],
    );
    const rows = child(report, "ReportData")?.children ?? [];
    assert.equal(rows.filter((r) => r.name === "DataRow").length, balances.length);
    const totalRow = rows.find((r) => r.name === "TotalRow");
    assert.ok(totalRow);
    assert.equal(lastAmount(totalRow), balances.reduce((a, b) => a.plus(b), new Big(0)).toFixed(2));
  });

  it("a detail report keeps to its period, and a new invoice appears in it", async () => {
    const { session } = await setup();
    const query = (from: string, to: string) =>
      `<GeneralDetailReportQueryRq><GeneralDetailReportType>TxnListByDate</GeneralDetailReportType><ReportPeriod><FromReportDate>${from}</FromReportDate><ToReportDate>${to}</ToReportDate></ReportPeriod></GeneralDetailReportQueryRq>`;
    const dataRows = async (from: string, to: string) =>
      (child(reportOf((await send(session, query(from, to))).rs[0]), "ReportData")?.children ?? []).filter(
        (r) => r.name === "DataRow",
      );
    const before = await dataRows("2031-01-01", "2031-12-31");
    assert.equal(before.length, 0);
    const added = await send(
      session,
      `<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Globex Inc</FullName></CustomerRef><TxnDate>2031-03-04</TxnDate><InvoiceLineAdd><Desc>Work</Desc><Amount>12.50</Amount></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`,
    );
    assert.equal(statusOf(added.rs[0]).code, "0", statusOf(added.rs[0]).message);
    const after = await dataRows("2031-01-01", "2031-12-31");
    assert.equal(after.length, 1);
    assert.equal(lastAmount(after[0] as XmlElement), "12.50");
    assert.equal((await dataRows("2032-01-01", "2032-12-31")).length, 0);
  });
});
