import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { BATCH_OPERATION } from "../src/ledger/batch.ts";
import { operationTable, reportOperations, typedOperations } from "../src/ledger/operations.ts";
import { allResources } from "../src/ledger/resources/definitions.ts";
import { listFilters } from "../src/ledger/typed/filters.ts";

/**
 * Prints the typed surface's coverage against the market's resource list
 * (`../shared/reference/resource-catalogue.md`, section 1): groups and operations implemented, what
 * is missing and what our spec adds. `npm run coverage:typed`.
 */
const CATALOGUE = resolve(
  import.meta.dirname,
  "..",
  process.env.LEDGER_CATALOGUE ?? "../shared/reference/resource-catalogue.md",
);

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
  const rows = coverage(marketGroups(readFileSync(CATALOGUE, "utf8")));
  const marketRows = rows.filter((r) => r.market.length > 0);
  const groupsDone = marketRows.filter((r) => r.missing.length === 0).length;
  const opsMarket = marketRows.reduce((n, r) => n + r.market.length, 0);
  const opsDone = marketRows.reduce((n, r) => n + r.implemented.length, 0);
  const extra = rows.reduce((n, r) => n + r.extra.length, 0);
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
    `groups: ${groupsDone}/${marketRows.length} of the market's groups complete (+ ${rows.filter((r) => r.market.length === 0 && r.resource !== "batch").length} groups our spec adds)`,
  );
  console.log(
    `operations: ${opsDone}/${opsMarket} of the market's operations (+ ${extra} more our spec asks for: list-object delete, merge, custom fields, canBuild, extra groups, batch)`,
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
}
