import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";
import {
  CATALOGUE,
  catalogueCoverage,
  coverageSummary,
  readmeCoverageText,
} from "../../../scripts/typed-coverage.ts";
import { needReference } from "../../testing/references.ts";

/**
 * The README states the typed surface's coverage as `npm run coverage:typed` counts it
 * (`scripts/typed-coverage.ts`). The figures are computed here, never written down: adding or
 * removing an operation fails this test until the README says so.
 */
const README = resolve(import.meta.dirname, "../../../README.md");

test("the README's coverage figures are those `npm run coverage:typed` counts", (t) => {
  const catalogue = needReference(t, {
    what: "the market's resource list",
    path: CATALOGUE,
    hint: "set LEDGER_CATALOGUE",
  });
  if (catalogue === null) return;
  const expected = readmeCoverageText(coverageSummary(catalogueCoverage(catalogue)));
  // The same words with any figures: what the README states now, whatever its numbers.
  const anyFigures = new RegExp(expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\d+/g, "\\d+"));
  const readme = readFileSync(README, "utf8").replace(/\s+/g, " ");
  const stated = anyFigures.exec(readme)?.[0];
  assert.equal(
    stated,
    expected,
    "README.md (What works today) must state the figures `npm run coverage:typed` prints on its last line",
  );
});
