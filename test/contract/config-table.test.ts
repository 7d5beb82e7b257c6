import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import {
  CONFIG_PATH,
  README_PATH,
  TABLE_END,
  TABLE_START,
  renderConfigTable,
  withConfigTable,
} from "../../scripts/gen-config-table.ts";
import { configSchema, loadConfig } from "../../src/config.ts";

/**
 * The README's configuration table is generated from `src/config.ts` and documents every setting:
 * one row per variable the service reads, each with its TSDoc, default and allowed values.
 */
test("the README's configuration table is the one generated from src/config.ts", () => {
  const readme = readFileSync(README_PATH, "utf8");
  assert.equal(
    readme,
    withConfigTable(readme),
    "README.md's configuration table differs from src/config.ts: run `npm run gen:config-table`",
  );
  const block = readme.slice(readme.indexOf(TABLE_START), readme.indexOf(TABLE_END));
  const rows = [...block.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(rows, Object.keys(configSchema.shape), "one row per variable, in the schema's order");
});

test("each row states the default the service applies", () => {
  const table = renderConfigTable();
  const defaults = loadConfig({});
  for (const name of ["PORT", "DATA_DIR", "SIMULATOR", "CONNECTOR_HOLD_MS", "LOG_LEVEL"] as const) {
    const row = table.split("\n").find((line) => line.startsWith(`| \`${name}\` |`)) ?? "";
    assert.ok(row.includes(`| \`${String(defaults[name])}\``), `${name}: ${row}`);
  }
});

test("a variable without TSDoc is refused, naming it", () => {
  const source = readFileSync(CONFIG_PATH, "utf8");
  const undocumented = source.replace(/\n\s*\/\*\*[^\n]*\*\/\n(\s*PORT:)/, "\n$1");
  assert.notEqual(undocumented, source);
  assert.throws(() => renderConfigTable(undocumented), /PORT has no TSDoc/);
});

test("the service reads its environment only through src/config.ts", () => {
  // The standalone simulator and the MCP server are programs of their own (clients of the service),
  // documented in their README sections.
  const allowed = new Set(["src/config.ts", "src/simulator/main.ts", "src/mcp/main.ts"]);
  const root = join(import.meta.dirname, "..", "..");
  const readers: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(root, path);
      if (entry.isDirectory()) {
        if (rel !== join("src", "testing")) walk(path);
      } else if (rel.endsWith(".ts") && !rel.endsWith(".test.ts") && !allowed.has(rel)) {
        if (/process\.env\b/.test(readFileSync(path, "utf8"))) readers.push(rel);
      }
    }
  };
  walk(join(root, "src"));
  assert.deepEqual(readers, [], "settings belong in src/config.ts, so that the table lists them");
});
