import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { Validator } from "@seriousme/openapi-schema-validator";
import { OPENAPI_PATH } from "../../scripts/gen-openapi.ts";

/**
 * The committed openapi.json is a valid OpenAPI 3.1 document (a maintained validator of the
 * specification's own JSON Schema) and passes Redocly's `recommended-strict` rules as configured in
 * redocly.yaml with no problem at all (decision 0020). Both read the 5 MB document once per run:
 * this is the only test file that lints it.
 */
const ROOT = resolve(import.meta.dirname, "..", "..");
const REDOCLY = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

/** Redocly CLI's lint, run as `npm run lint:openapi` runs it (telemetry and update checks off). */
async function lint(path: string): Promise<LintReport> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [REDOCLY, "lint", path, "--config", resolve(ROOT, "redocly.yaml"), "--format=json", "--max-problems=50"],
    {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", CI: "true" },
    },
  ).catch((error: unknown) => {
    // Redocly exits 1 when it finds errors; its report is still on stdout.
    const out = (error as { stdout?: string }).stdout;
    if (typeof out === "string" && out.trim().startsWith("{")) return { stdout: out };
    throw error;
  });
  return JSON.parse(stdout) as LintReport;
}

test("openapi.json is valid OpenAPI 3.1 and Redocly lints it with no error and no warning", async () => {
  // The linter runs in its own process while the validator runs here.
  const linted = lint(OPENAPI_PATH);
  const validation = await new Validator().validate(OPENAPI_PATH);
  assert.equal(validation.valid, true, JSON.stringify(validation.errors)?.slice(0, 4000));
  const report = await linted;
  const problems = report.problems.map(
    (p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? "?"}`,
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 });
});

test("the validator and the linter catch a broken document (they are not silent)", async (t) => {
  const broken = { openapi: "3.1.0", info: { title: "x" }, paths: { "/a": { get: { responses: "nope" } } } };
  const result = await new Validator().validate(structuredClone(broken));
  assert.equal(result.valid, false);
  const dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "broken.json");
  writeFileSync(path, JSON.stringify(broken));
  const report = await lint(path);
  assert.ok(report.totals.errors > 0, JSON.stringify(report.totals));
});
