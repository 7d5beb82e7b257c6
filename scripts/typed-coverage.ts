import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BATCH_OPERATION } from "../src/ledger/batch.ts";
import { operationTable, reportOperations, typedOperations } from "../src/ledger/operations.ts";
import { allResources } from "../src/ledger/resources/definitions.ts";
import { listFilters } from "../src/ledger/typed/filters.ts";
import { REFERENCE_ROOT } from "../src/testing/references.ts";

/**
 * Prints the typed surface's coverage against the market's resource list
 * (`../shared/reference/resource-catalogue.md`, section 1): groups and operations implemented, what
 * is missing and what our spec adds. `npm run coverage:typed`.
 */
export const CATALOGUE = process.env.LEDGER_CATALOGUE
  ? resolve(import.meta.dirname, "..", process.env.LEDGER_CATALOGUE)
  : join(REFERENCE_ROOT, "resource-catalogue.md");

interface MarketGroup {
  resource: string;
  path: string;
  actions: string[];
}

/** The market's groups and actions, read from the catalogue's first table. */
export function marketGroups(text: string): MarketGroup[] {
  const groups: MarketGroup[] = [];
  for (const line of text.split("\n")) {
    const match = /^\| (\w+|ledger\.healthCheck) \| `([\w-]+)` \| ([^|]+) \|/.exec(line);
    if (!match?.[1] || !match[2] || !match[3]) continue;
    const resource = match[1];
    let actions = match[3]
      .replace(/\([^)]*\)/g, "")
      .split(",")
      .map((a) => a.trim().split(" ")[0] ?? "")
      .filter(Boolean);
    if (resource === "reports") actions = reportOperations().map((r) => r.report.name);
    if (resource === "ledger.healthCheck") actions = ["healthCheck"];
    groups.push({ resource, path: match[2], actions });
  }
  return groups;
}

export interface CoverageRow {
  resource: string;
  market: string[];
  implemented: string[];
  missing: string[];
  extra: string[];
}

export function coverage(groups: readonly MarketGroup[]): CoverageRow[] {
  const table = operationTable();
  const ours = new Map<string, string[]>();
  for (const op of typedOperations())
    ours.set(op.resource.entry.resource, [...(ours.get(op.resource.entry.resource) ?? []), op.action]);
  ours.set(
    "reports",
    reportOperations().map((r) => r.report.name),
  );
  ours.set("ledger.healthCheck", table.has("ledger.healthCheck") ? ["healthCheck"] : []);
  const rows: CoverageRow[] = groups.map((group) => {
    const implemented = ours.get(group.resource) ?? [];
    return {
      resource: group.resource,
      market: group.actions,
      implemented: group.actions.filter((a) => implemented.includes(a)),
      missing: group.actions.filter((a) => !implemented.includes(a)),
      extra: implemented.filter((a) => !group.actions.includes(a)),
    };
  });
  for (const resource of allResources().filter((r) => r.entry.origin === "spec")) {
    rows.push({
      resource: resource.entry.resource,
      market: [],
      implemented: [],
      missing: [],
      extra: [...resource.actions],
    });
  }
  // Batch (spec "POST /v1/{ledger}/batch"): one operation over every typed one.
  if (table.has(BATCH_OPERATION)) {
    rows.push({ resource: "batch", market: [], implemented: [], missing: [], extra: ["batch"] });
  }
  return rows;
}

/** The counts the script prints, and the README states. */
export interface CoverageSummary {
  /** The market's groups, and those of them with every market operation implemented. */
  marketGroups: number;
  groupsComplete: number;
  /** Groups only our spec has. */
  specGroups: number;
  /** The market's operations, and those of them implemented. */
  marketOperations: number;
  operationsImplemented: number;
  /** Operations beyond the market's: list-object delete, merge, custom fields, the added groups'. */
  specOperations: number;
}

export function coverageSummary(rows: readonly CoverageRow[]): CoverageSummary {
  const marketRows = rows.filter((r) => r.market.length > 0);
  return {
    marketGroups: marketRows.length,
    groupsComplete: marketRows.filter((r) => r.missing.length === 0).length,
    // Batch is an operation of the whole API, not a group.
    specGroups: rows.filter((r) => r.market.length === 0 && r.resource !== "batch").length,
    marketOperations: marketRows.reduce((n, r) => n + r.market.length, 0),
    operationsImplemented: marketRows.reduce((n, r) => n + r.implemented.length, 0),
    specOperations: rows.reduce((n, r) => n + r.extra.length, 0),
  };
}

/** The README's statement of the counts (its "What works today" list must contain it verbatim). */
export function readmeCoverageText(summary: CoverageSummary): string {
  return (
    `${summary.groupsComplete} of the market's ${summary.marketGroups} groups complete and ` +
    `${summary.operationsImplemented} of its ${summary.marketOperations} operations, plus ` +
    `${summary.specGroups} groups and ${summary.specOperations} operations our spec adds`
  );
}

/** The coverage of the catalogue at `path` (the market's resource list). */
export function catalogueCoverage(path = CATALOGUE): CoverageRow[] {
  return coverage(marketGroups(readFileSync(path, "utf8")));
}

/** How many operations each action has (every action of the action table, batch included). */
export function actionCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const op of [...typedOperations(), ...reportOperations()])
    counts.set(op.action, (counts.get(op.action) ?? 0) + 1);
  if (operationTable().has(BATCH_OPERATION)) counts.set("batch", 1);
  return counts;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  if (!existsSync(CATALOGUE)) {
    console.error(`${CATALOGUE} not found; set LEDGER_CATALOGUE.`);
    process.exit(1);
  }
  const rows = catalogueCoverage();
  const summary = coverageSummary(rows);
  const width = Math.max(...rows.map((r) => r.resource.length));
  console.log(`${"group".padEnd(width)}  market ops  ours  missing                 added by our spec`);
  for (const row of rows) {
    console.log(
      `${row.resource.padEnd(width)}  ${String(row.market.length).padStart(10)}  ${String(row.implemented.length).padStart(4)}  ${row.missing.join(",").padEnd(22) || "-".padEnd(22)}  ${row.extra.join(",")}`,
    );
  }
  // Groups with their own action set declare their list's parameters themselves.
  const unexposed = allResources()
    .filter((r) => !r.actionSet && r.actions.includes("list"))
    .map((r) => [r.entry.resource, listFilters(r).unexposed] as const)
    .filter(([, names]) => names.length > 0);
  console.log("");
  console.log(
    `groups: ${summary.groupsComplete}/${summary.marketGroups} of the market's groups complete (+ ${summary.specGroups} groups our spec adds)`,
  );
  console.log(
    `operations: ${summary.operationsImplemented}/${summary.marketOperations} of the market's operations (+ ${summary.specOperations} more our spec asks for: list-object delete, merge, custom fields, canBuild, extra groups, batch)`,
  );
  console.log(
    `operation table: ${operationTable().size} operations in all (typed, reports, batch, passthrough, health check)`,
  );
  console.log(`actions: ${[...actionCounts()].map(([action, count]) => `${action} ${count}`).join(", ")}`);
  const refused = allResources().flatMap((r) => r.unsupported.map((a) => `${r.entry.resource}.${a}`));
  if (refused.length > 0) {
    console.log(
      `answered LEDGER_OPERATION_UNSUPPORTED (the application's schema has no request for them): ${refused.join(", ")}`,
    );
  }
  if (unexposed.length > 0) {
    console.log(
      `query elements not exposed as filters: ${unexposed.map(([r, n]) => `${r}(${n.join(",")})`).join(" ")}`,
    );
  }
  console.log(`README (What works today): ${readmeCoverageText(summary)}`);
}
