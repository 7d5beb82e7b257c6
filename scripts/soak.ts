/**
 * `npm run soak`: the long variants of the reliability suites (issue 8 §5) on the store DATABASE_URL
 * selects (PGlite when unset): R1, 1,000 writes under injected faults with four service kills, and
 * R6, 1,000 + 1,000 concurrent sync callers on a connection whose connector is away, twice. The
 * suites assert their rules themselves (they are the same files `npm test` runs at a smaller
 * size); this script runs them one at a time with SOAK=1 and prints their counts as one table.
 * SOAK_SEED replays a run; SOAK_WRITES, SOAK_KILLS and SOAK_CALLERS change the sizes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const SUITES = ["test/e2e/reliability-faulty-writes.test.ts", "test/e2e/reliability-offline-callers.test.ts"];

interface Report {
  suite: string;
  [field: string]: unknown;
}

async function run(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "lb-soak-"));
  const reportFile = join(dir, "report.jsonl");
  try {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...SUITES],
      { cwd: ROOT, env: { ...process.env, SOAK: "1", SOAK_REPORT: reportFile }, stdio: "inherit" },
    );
    const code = await new Promise<number>((resolve) => child.once("exit", (c) => resolve(c ?? 1)));
    const reports = existsSync(reportFile)
      ? readFileSync(reportFile, "utf8")
          .split("\n")
          .filter((line) => line.trim() !== "")
          .map((line) => JSON.parse(line) as Report)
      : [];
    process.stdout.write(`\n${table(reports)}\n`);
    process.stdout.write(code === 0 ? "soak: every suite passed\n" : `soak: FAILED (exit ${code})\n`);
    return code;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One row per figure: `suite`, `figure`, `value`, for the store the run used. */
function table(reports: Report[]): string {
  const reported = reports[0]?.store;
  const store = typeof reported === "string" ? reported : process.env.DATABASE_URL ? "postgres" : "pglite";
  const rows: [string, string, string][] = [];
  for (const report of reports) {
    for (const [figure, value] of flatten(report)) {
      if (figure === "suite" || figure === "store") continue;
      rows.push([report.suite, figure, value]);
    }
  }
  if (rows.length === 0) return `reliability soak (${store}): no counts were reported`;
  const header: [string, string, string] = ["suite", "figure", store];
  const widths = [0, 1, 2].map((i) => Math.max(...[header, ...rows].map((r) => r[i]?.length ?? 0)));
  const line = (r: [string, string, string]): string =>
    r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ");
  return [
    `reliability soak (${store})`,
    line(header),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows.map(line),
  ].join("\n");
}

function flatten(value: unknown, prefix = ""): [string, string][] {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([key, inner]) => flatten(inner, prefix ? `${prefix}.${key}` : key));
  }
  return [[prefix, Array.isArray(value) ? value.join(", ") : String(value)]];
}

process.exitCode = await run();
