/**
 * Report queries (`…ReportQueryRq`), answered from the company file the way the application lays
 * out a report: a `ReportRet` with title, subtitle, basis, column descriptions and rows of cells.
 * Summary reports list accounts (or, for aging, customers and vendors) with their balances; detail
 * reports list the transactions of the requested period. The numbers are the simulator's own
 * balances (see ledger-math), so a report agrees with the records a test wrote.
 */
import type Big from "big.js";
import { child, childText, leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { big, money, ownBalance, openAmount, total } from "./ledger-math.ts";
import { macroRange } from "./query-filters.ts";
import { fieldText, type LedgerRecord } from "./records.ts";
import { STATUS_NO_MATCH, STATUS_OK } from "./status.ts";
import type { OpResult } from "./write-ops.ts";

type DataType = "STRTYPE" | "AMTTYPE" | "DATETYPE" | "INTTYPE";

interface Column {
  readonly title: string;
  readonly type: string;
  readonly dataType: DataType;
}

interface Row {
  readonly kind: "DataRow" | "TextRow" | "SubtotalRow" | "TotalRow";
  readonly rowType?: string;
  readonly label: string;
  readonly cells: readonly string[];
}

const INCOME_STATEMENT = new Set(["Income", "OtherIncome", "CostOfGoodsSold", "Expense", "OtherExpense"]);

/** "ProfitAndLossStandard" → "Profit And Loss Standard". */
function titleOf(reportType: string): string {
  return reportType.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2");
}

/** The report type element of a report query (`GeneralSummaryReportType`, `AgingReportType` …). */
function reportTypeOf(rq: XmlElement): string {
  return rq.children.find((c) => c.name.endsWith("ReportType"))?.text ?? "";
}

interface Period {
  readonly from: string | undefined;
  readonly to: string | undefined;
}

/** The report's dates: its period, or the dates of its date macro (exclusive in the schema). */
function periodOf(rq: XmlElement, file: CompanyFile): Period {
  const macro = childText(rq, "ReportDateMacro");
  if (macro !== undefined) {
    const [from, to] = macroRange(macro, file);
    return { from, to };
  }
  const period = child(rq, "ReportPeriod");
  return {
    from: period ? childText(period, "FromReportDate") : undefined,
    to: period ? childText(period, "ToReportDate") : undefined,
  };
}

function inPeriod(record: LedgerRecord, period: Period): boolean {
  const date = fieldText(record.fields, "TxnDate") ?? "";
  return (period.from === undefined || date >= period.from) && (period.to === undefined || date <= period.to);
}

function subtitleOf(period: Period): string {
  if (period.from && period.to) return `${period.from} through ${period.to}`;
  if (period.from) return `From ${period.from}`;
  if (period.to) return `Through ${period.to}`;
  return "All Transactions";
}

const nameOf = (record: LedgerRecord, file: CompanyFile): string =>
  fieldText(record.fields, "FullName") ?? fieldText(record.fields, "Name") ?? file.fullNameOf(record);

function totalRow(label: string, amounts: readonly Big[], leading: number): Row {
  const sum = amounts.reduce((a, b) => a.plus(b), big("0"));
  return {
    kind: "TotalRow",
    rowType: "label",
    label,
    cells: [label, ...Array<string>(leading).fill(""), money(sum)],
  };
}

/** Accounts with their balances, grouped under a text row per account type. */
function accountRows(file: CompanyFile, reportType: string): Row[] {
  const wanted = (type: string): boolean =>
    reportType.startsWith("ProfitAndLoss") || reportType === "IncomeTaxSummary"
      ? INCOME_STATEMENT.has(type)
      : reportType.startsWith("BalanceSheet")
        ? !INCOME_STATEMENT.has(type) && type !== "NonPosting"
        : type !== "NonPosting";
  const accounts = file
    .recordsOf("Account")
    .filter((a) => wanted(fieldText(a.fields, "AccountType") ?? ""))
    .sort((a, b) => nameOf(a, file).localeCompare(nameOf(b, file)));
  const rows: Row[] = [];
  const amounts: Big[] = [];
  const types = [...new Set(accounts.map((a) => fieldText(a.fields, "AccountType") ?? ""))].sort();
  for (const type of types) {
    rows.push({ kind: "TextRow", label: titleOf(type), cells: [] });
    for (const account of accounts.filter((a) => fieldText(a.fields, "AccountType") === type)) {
      const balance = ownBalance(account, file);
      amounts.push(balance);
      rows.push({
        kind: "DataRow",
        rowType: "account",
        label: nameOf(account, file),
        cells: [nameOf(account, file), money(balance)],
      });
    }
  }
  rows.push(totalRow("TOTAL", amounts, 0));
  return rows;
}

/** Open balances per customer (receivables) or vendor (payables). */
function agingRows(file: CompanyFile, reportType: string): Row[] {
  const payable = reportType.startsWith("AP");
  const object = payable ? "Vendor" : "Customer";
  const rows: Row[] = [];
  const amounts: Big[] = [];
  for (const entity of file
    .recordsOf(object)
    .sort((a, b) => nameOf(a, file).localeCompare(nameOf(b, file)))) {
    const balance = ownBalance(entity, file);
    if (balance.eq(0)) continue;
    amounts.push(balance);
    rows.push({
      kind: "DataRow",
      rowType: payable ? "vendor" : "customer",
      label: nameOf(entity, file),
      cells: [nameOf(entity, file), money(balance)],
    });
  }
  rows.push(totalRow("TOTAL", amounts, 0));
  return rows;
}

/** One row per transaction of the period, oldest first. */
function transactionRows(file: CompanyFile, period: Period): Row[] {
  const transactions = file
    .allRecords()
    .filter((r) => r.txnNumber !== undefined && inPeriod(r, period))
    .sort(
      (a, b) =>
        (fieldText(a.fields, "TxnDate") ?? "").localeCompare(fieldText(b.fields, "TxnDate") ?? "") ||
        (a.txnNumber ?? 0) - (b.txnNumber ?? 0),
    );
  const amounts: Big[] = [];
  const rows: Row[] = transactions.map((record) => {
    const amount =
      record.object === "Invoice" || record.object === "Bill"
        ? total(record, file)
        : openOrTotal(record, file);
    amounts.push(amount);
    return {
      kind: "DataRow",
      rowType: "label",
      label: record.object,
      cells: [
        titleOf(record.object),
        fieldText(record.fields, "TxnDate") ?? "",
        fieldText(record.fields, "RefNumber") ?? "",
        money(amount),
      ],
    };
  });
  rows.push(totalRow("TOTAL", amounts, 2));
  return rows;
}

function openOrTotal(record: LedgerRecord, file: CompanyFile): Big {
  const stated = fieldText(record.fields, "TotalAmount") ?? fieldText(record.fields, "Amount");
  return stated === undefined ? openAmount(record, file) : big(stated);
}

const SUMMARY_COLUMNS: readonly Column[] = [
  { title: "", type: "Label", dataType: "STRTYPE" },
  { title: "TOTAL", type: "Amount", dataType: "AMTTYPE" },
];
const DETAIL_COLUMNS: readonly Column[] = [
  { title: "Type", type: "TxnType", dataType: "STRTYPE" },
  { title: "Date", type: "Date", dataType: "DATETYPE" },
  { title: "Num", type: "RefNumber", dataType: "STRTYPE" },
  { title: "Amount", type: "Amount", dataType: "AMTTYPE" },
];

function layout(rq: XmlElement, file: CompanyFile): { columns: readonly Column[]; rows: Row[] } {
  const reportType = reportTypeOf(rq);
  switch (rq.name) {
    case "GeneralSummaryReportQueryRq":
    case "CustomSummaryReportQueryRq":
    case "BudgetSummaryReportQueryRq":
      return { columns: SUMMARY_COLUMNS, rows: accountRows(file, reportType) };
    case "AgingReportQueryRq":
      return { columns: SUMMARY_COLUMNS, rows: agingRows(file, reportType) };
    case "PayrollSummaryReportQueryRq":
      // The simulated file keeps no paychecks: the report holds its total only.
      return { columns: SUMMARY_COLUMNS, rows: [totalRow("TOTAL", [], 0)] };
    default:
      return { columns: DETAIL_COLUMNS, rows: transactionRows(file, periodOf(rq, file)) };
  }
}

function rowElement(row: Row, rowNumber: number, columns: readonly Column[]): XmlElement {
  const number: [string, string] = ["rowNumber", String(rowNumber)];
  if (row.kind === "TextRow") return node("TextRow", [], [number, ["value", row.label]]);
  return node(
    row.kind,
    [
      node(
        "RowData",
        [],
        [
          ["rowType", row.rowType ?? "label"],
          ["value", row.label],
        ],
      ),
      ...row.cells.flatMap((value, index) =>
        value === ""
          ? []
          : [
              node(
                "ColData",
                [],
                [
                  ["colID", String(index + 1)],
                  ["value", value],
                  ["dataType", columns[index]?.dataType ?? "STRTYPE"],
                ],
              ),
            ],
      ),
    ],
    [number],
  );
}

/** Answers one report query from the company file. */
export function reportAnswer(rq: XmlElement, file: CompanyFile): OpResult {
  const reportType = reportTypeOf(rq);
  if (reportType === "") return { status: STATUS_NO_MATCH, body: [] };
  const { columns, rows } = layout(rq, file);
  const basis = childText(rq, "ReportBasis") ?? childText(rq, "SummaryReportBasis");
  const ret = node("ReportRet", [
    leaf("ReportTitle", titleOf(reportType)),
    leaf("ReportSubtitle", subtitleOf(periodOf(rq, file))),
    ...(basis === undefined || basis === "None"
      ? [leaf("ReportBasis", "Accrual")]
      : [leaf("ReportBasis", basis)]),
    leaf("NumRows", String(rows.length)),
    leaf("NumColumns", String(columns.length)),
    leaf("NumColTitleRows", "1"),
    ...columns.map((column, index) =>
      node(
        "ColDesc",
        [
          node(
            "ColTitle",
            [],
            [
              ["titleRow", "1"],
              ["value", column.title],
            ],
          ),
          leaf("ColType", column.type),
        ],
        [
          ["colID", String(index + 1)],
          ["dataType", column.dataType],
        ],
      ),
    ),
    node(
      "ReportData",
      rows.map((row, index) => rowElement(row, index + 1, columns)),
    ),
  ]);
  return { status: STATUS_OK, body: [ret] };
}
