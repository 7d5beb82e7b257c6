import { ServiceError } from "../errors/service-error.ts";
import { jsonEnumValue, nameTable } from "./resources/names.ts";
import { statusError, statusWarnings, type RequestWarning, type ResponseMessage } from "./typed/actions.ts";
import {
  booleanFlag,
  dateParam,
  dateRange,
  deriveFilters,
  enumFilter,
  enumParam,
  idParam,
  integerParam,
  textParam,
  type FilterRule,
  type ListFilters,
  type ParamKind,
  type ParamValue,
} from "./typed/filters.ts";
import { ledgerSchema } from "./xml/schema.ts";
import { attr, leaf, node, type XmlElement } from "./xml/tree.ts";

/**
 * Reports (spec: "Report", "Report column", "Report row", "Payroll summary report"): the one named
 * module for a genuinely special shape. Each of the application's ten report queries is a GET under
 * `/v1/ledger-desktop/reports/<kind>`; its parameters come from the report query's schema through the
 * same rule mechanism as list filters, and the answer's rows and columns are read into the spec's
 * report record.
 */
export interface ReportKind {
  /** camelCase, in operation IDs: `ledger.reports.generalSummary`. */
  readonly name: string;
  readonly path: string;
  readonly request: string;
  /** Spec `category` (open). */
  readonly category: string;
}

export const REPORT_KINDS: readonly ReportKind[] = [
  ["aging", "aging", "AgingReportQueryRq", "aging"],
  ["budgetSummary", "budget-summary", "BudgetSummaryReportQueryRq", "budget_summary"],
  ["customDetail", "custom-detail", "CustomDetailReportQueryRq", "custom_detail"],
  ["customSummary", "custom-summary", "CustomSummaryReportQueryRq", "custom_summary"],
  ["generalDetail", "general-detail", "GeneralDetailReportQueryRq", "general_detail"],
  ["generalSummary", "general-summary", "GeneralSummaryReportQueryRq", "general_summary"],
  ["job", "job", "JobReportQueryRq", "job"],
  ["payrollDetail", "payroll-detail", "PayrollDetailReportQueryRq", "payroll_detail"],
  ["payrollSummary", "payroll-summary", "PayrollSummaryReportQueryRq", "payroll_summary"],
  ["time", "time", "TimeReportQueryRq", "time"],
].map(([name, path, request, category]) => ({ name, path, request, category }) as ReportKind);

/** `exactly one of` families: a kind filter, IDs or full names (spec: account, entity, item filters). */
function familyFilter(
  element: string,
  typeElement: string | null,
  prefix: string,
  label: string,
): FilterRule {
  const members = [
    ...(typeElement ? [[`${prefix}Type`, typeElement] as const] : []),
    [`${prefix}Ids`, "ListID"] as const,
    [`${prefix}FullNames`, "FullName"] as const,
  ];
  const typeValues = (): { json: string[]; xml: string[] } => {
    const key = typeElement ? ledgerSchema().table.elements[typeElement] : undefined;
    const xml = (key ? ledgerSchema().table.simple[key]?.e : undefined) ?? [];
    return { xml, json: xml.map((v) => jsonEnumValue(nameTable(), typeElement ?? "", v)) };
  };
  return {
    element,
    params: () =>
      members.map(([name, xml]) => ({
        name,
        kind: xml === "ListID" ? idParam : xml === "FullName" ? textParam() : enumParam(typeValues().json),
        array: xml !== typeElement,
        description: `${label}: exactly one of ${members.map(([n]) => `\`${n}\``).join(", ")} (1 to 100 values for lists).`,
      })),
    build: (values) => {
      const present = members.filter(([name]) => values.has(name));
      const [first, second] = present;
      if (!first) return null;
      if (second) {
        throw new ServiceError("INVALID_PARAMETER", {
          param: second[0],
          message: `\`${first[0]}\` and \`${second[0]}\` cannot be combined: send exactly one of them.`,
        });
      }
      const value = values.get(first[0]);
      if (first[1] === typeElement) {
        const { xml, json } = typeValues();
        return node(element, [leaf(first[1], xml[json.indexOf(String(value))] ?? String(value))]);
      }
      return node(
        element,
        (Array.isArray(value) ? value : [String(value)]).map((v) => leaf(first[1], v)),
      );
    },
  };
}

function enumList(element: string, param: string, description: string): FilterRule {
  const values = (): { json: string[]; xml: string[] } => {
    const key = ledgerSchema().table.elements[element];
    const xml = (key ? ledgerSchema().table.simple[key]?.e : undefined) ?? [];
    return { xml, json: xml.map((v) => jsonEnumValue(nameTable(), element, v)) };
  };
  return {
    element,
    params: () => [{ name: param, kind: enumParam(values().json), array: true, description }],
    build: (given) => {
      const chosen = given.get(param);
      if (!Array.isArray(chosen)) return null;
      const { xml, json } = values();
      return chosen.map((v) => leaf(element, xml[json.indexOf(v)] ?? v));
    },
  };
}

function scalar(element: string, param: string, kind: ParamKind, description: string): FilterRule {
  return {
    element,
    params: () => [{ name: param, kind, array: false, description }],
    build: (values) => {
      const value = values.get(param);
      return value === undefined ? null : leaf(element, String(value));
    },
  };
}

const REPORT_RULES: readonly FilterRule[] = [
  ...REPORT_KINDS.map((kind) =>
    enumFilter(kind.request.replace(/QueryRq$/, "Type"), "reportType", "The report to run (required)."),
  ),
  dateRange(
    "ReportPeriod",
    ["FromReportDate", "reportDateFrom"],
    ["ToReportDate", "reportDateTo"],
    dateParam,
    "ReportPeriod",
  ),
  enumFilter("ReportDateMacro", "reportDateMacro", "A named period instead of dates."),
  familyFilter("ReportAccountFilter", "AccountTypeFilter", "account", "Accounts"),
  familyFilter("ReportEntityFilter", "EntityTypeFilter", "entity", "Entities"),
  familyFilter("ReportItemFilter", "ItemTypeFilter", "item", "Items"),
  familyFilter("ReportClassFilter", null, "class", "Classes"),
  {
    element: "ReportTxnTypeFilter",
    params: () => [
      {
        name: "transactionTypes",
        kind: enumParam(txnTypes().json),
        array: true,
        description: "Only these transaction types.",
      },
    ],
    build: (values) => {
      const chosen = values.get("transactionTypes");
      if (!Array.isArray(chosen)) return null;
      const { xml, json } = txnTypes();
      return node(
        "ReportTxnTypeFilter",
        chosen.map((v) => leaf("TxnTypeFilter", xml[json.indexOf(v)] ?? v)),
      );
    },
  },
  dateRange(
    "ReportModifiedDateRangeFilter",
    ["FromReportModifiedDate", "updatedAfter"],
    ["ToReportModifiedDate", "updatedBefore"],
    dateParam,
    "ReportModifiedDateRangeFilter",
  ),
  enumFilter("ReportModifiedDateRangeMacro", "updatedDateMacro", "A named period for the modified date."),
  enumFilter("ReportDetailLevelFilter", "detailLevel", "Detail level (default all)."),
  enumFilter("ReportPostingStatusFilter", "postingStatus", "Posting state."),
  enumFilter("SummarizeColumnsBy", "summarizeColumnsBy", "How columns are summarized."),
  enumFilter("SummarizeRowsBy", "summarizeRowsBy", "How rows are summarized."),
  enumFilter("SummarizeBudgetColumnsBy", "summarizeColumnsBy", "How budget columns are summarized."),
  enumFilter("SummarizeBudgetRowsBy", "summarizeRowsBy", "How budget rows are summarized."),
  booleanFlag("IncludeSubcolumns", "includeSubcolumns", "Include subcolumns."),
  enumFilter("ReportCalendar", "reportCalendar", "The calendar of the report."),
  enumFilter("ReturnRows", "rowsToReturn", "Which rows to return."),
  enumFilter("ReturnColumns", "columnsToReturn", "Which columns to return."),
  enumList("IncludeColumn", "includeColumns", "Columns to include."),
  enumFilter("IncludeAccounts", "accountsToInclude", "Which accounts to include."),
  enumFilter("ReportOpenBalanceAsOf", "openBalanceAsOf", "The open balance's date."),
  enumFilter("ReportAgingAsOf", "agingAsOf", "The aging date."),
  enumFilter("ReportBasis", "basis", "Accrual or cash basis."),
  scalar("FiscalYear", "fiscalYear", integerParam(1900, 9999), "The budget's fiscal year (required)."),
  enumFilter("BudgetCriterion", "budgetCriterion", "The budget's criterion."),
];

function txnTypes(): { json: string[]; xml: string[] } {
  const key = ledgerSchema().table.elements.TxnTypeFilter;
  const xml = (key ? ledgerSchema().table.simple[key]?.e : undefined) ?? [];
  return { xml, json: xml.map((v) => jsonEnumValue(nameTable(), "TxnTypeFilter", v)) };
}

const filtersCache = new Map<string, ListFilters>();

/** The parameters of one report kind, derived from its query request. */
export function reportFilters(kind: ReportKind): ListFilters {
  let filters = filtersCache.get(kind.request);
  if (!filters) {
    filters = deriveFilters(kind.request, REPORT_RULES, null);
    filtersCache.set(kind.request, filters);
  }
  return filters;
}

/** The report query: the parameters in schema order, and the report type echoed in `requestID`. */
export function reportMessage(kind: ReportKind, values: ReadonlyMap<string, ParamValue>): XmlElement {
  const filters = reportFilters(kind);
  for (const param of filters.params) {
    if (param.slot.min > 0 && !values.has(param.name)) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: param.name,
        message: `Missing required parameter \`${param.name}\`.`,
      });
    }
  }
  const reportType = String(values.get("reportType") ?? "");
  return node(kind.request, filters.build(values), [["requestID", `report:${reportType}`.slice(0, 50)]]);
}

const ROW_KINDS: Readonly<Record<string, string>> = {
  DataRow: "data",
  TextRow: "text",
  SubtotalRow: "subtotal",
  TotalRow: "total",
};

const int = (value: string | undefined): number | null =>
  value === undefined || value === "" ? null : Number(value);
const childText = (element: XmlElement, name: string): string | null =>
  element.children.find((c) => c.name === name)?.text ?? null;

/** Reads a report answer into the spec's report record. */
export function decodeReport(
  kind: ReportKind,
  message: ResponseMessage,
): { result: unknown; warnings: RequestWarning[] } {
  if (message.statusSeverity === "Error") throw statusError(message);
  const ret = message.element.children.find((c) => c.name === "ReportRet");
  const requestId = attr(message.element, "requestID") ?? "";
  const reportType = requestId.startsWith("report:") ? requestId.slice("report:".length) : null;
  if (!ret) {
    throw new ServiceError("LEDGER_RESPONSE_UNREADABLE", { message: "The answer holds no report." });
  }
  const columns = ret.children
    .filter((c) => c.name === "ColDesc")
    .map((column) => ({
      columnId: int(attr(column, "colID")),
      columnType: (() => {
        const type = childText(column, "ColType");
        return type === null ? null : jsonEnumValue(nameTable(), "ColType", type);
      })(),
      dataType: attr(column, "dataType") ?? null,
      titles: column.children
        .filter((c) => c.name === "ColTitle")
        .map((title) => ({ rowNumber: int(attr(title, "titleRow")), value: attr(title, "value") ?? null })),
    }));
  const data = ret.children.find((c) => c.name === "ReportData");
  const rows = (data?.children ?? []).map((row) => {
    const descriptor = row.children.find((c) => c.name === "RowData");
    return {
      kind: ROW_KINDS[row.name] ?? row.name,
      rowNumber: int(attr(row, "rowNumber")),
      text: row.name === "TextRow" ? (attr(row, "value") ?? null) : null,
      rowDescriptor: descriptor
        ? { type: attr(descriptor, "rowType") ?? null, value: attr(descriptor, "value") ?? null }
        : null,
      cells: row.children
        .filter((c) => c.name === "ColData")
        .map((cell) => ({
          columnId: int(attr(cell, "colID")),
          value: attr(cell, "value") ?? null,
          dataType: attr(cell, "dataType") ?? null,
        })),
    };
  });
  const basis = childText(ret, "ReportBasis");
  return {
    result: {
      objectType: "ledger_report",
      category: kind.category,
      reportType,
      title: childText(ret, "ReportTitle"),
      subtitle: childText(ret, "ReportSubtitle"),
      basis: basis === null ? null : jsonEnumValue(nameTable(), "ReportBasis", basis),
      rowCount: int(childText(ret, "NumRows") ?? undefined),
      columnCount: int(childText(ret, "NumColumns") ?? undefined),
      columnTitleRowCount: int(childText(ret, "NumColTitleRows") ?? undefined),
      columns,
      rows,
    },
    warnings: statusWarnings(message),
  };
}

/**
 * The report record's JSON Schema for the OpenAPI document (spec: "Report", "Report column",
 * "Report row"): every field present, open enumerations listed as values (every report kind's
 * `reportType`, since the record is one schema for all ten routes).
 */
export function reportRecordSchema(): Record<string, unknown> {
  const values = (element: string): string[] => {
    const key = ledgerSchema().table.elements[element];
    const xml = (key ? ledgerSchema().table.simple[key]?.e : undefined) ?? [];
    return xml.map((v) => jsonEnumValue(nameTable(), element, v));
  };
  const open = (list: readonly string[]): Record<string, unknown> => ({
    type: ["string", "null"],
    enum: [...new Set(list), null],
    description: "Open enumeration",
  });
  const nullable = (type: string): Record<string, unknown> => ({ type: [type, "null"] });
  const object = (properties: Record<string, unknown>): Record<string, unknown> => ({
    type: "object",
    properties,
    required: Object.keys(properties),
  });
  const reportTypes = REPORT_KINDS.flatMap((kind) =>
    // The schema lists an empty job report type; no report is named so.
    values(kind.request.replace(/QueryRq$/, "Type")).filter((v) => v !== ""),
  );
  return object({
    objectType: { type: "string", const: "ledger_report" },
    category: open(REPORT_KINDS.map((kind) => kind.category)),
    reportType: open(reportTypes),
    title: nullable("string"),
    subtitle: nullable("string"),
    basis: open(values("ReportBasis")),
    rowCount: nullable("integer"),
    columnCount: nullable("integer"),
    columnTitleRowCount: nullable("integer"),
    columns: {
      type: "array",
      items: object({
        columnId: nullable("integer"),
        columnType: open(values("ColType")),
        dataType: nullable("string"),
        titles: {
          type: "array",
          items: object({ rowNumber: nullable("integer"), value: nullable("string") }),
        },
      }),
    },
    rows: {
      type: "array",
      items: object({
        kind: {
          type: "string",
          enum: [...new Set(Object.values(ROW_KINDS))],
          description: "Open enumeration",
        },
        rowNumber: nullable("integer"),
        text: nullable("string"),
        rowDescriptor: {
          type: ["object", "null"],
          properties: { type: nullable("string"), value: nullable("string") },
          required: ["type", "value"],
        },
        cells: {
          type: "array",
          items: object({
            columnId: nullable("integer"),
            value: nullable("string"),
            dataType: nullable("string"),
          }),
        },
      }),
    },
  });
}
