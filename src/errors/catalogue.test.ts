import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, test, type TestContext } from "node:test";
import { SHARED_ROOT, needReference } from "../testing/references.ts";
import { catalogue, docsUrlFor, isRetryable, type ErrorCode } from "./catalogue.ts";

/**
 * The error contract (house style §2.4, §2.5): the catalogue equals the spec's "All codes" list and
 * status table, and every entry is complete. The spec lives beside the repository
 * (`../shared/spec/interface-spec.md` from the repository root); without it the spec comparisons skip.
 */
const SPEC_PATH = join(SHARED_ROOT, "spec/interface-spec.md");
const spec = existsSync(SPEC_PATH) ? readFileSync(SPEC_PATH, "utf8") : null;

const CODE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;

/** Neutral renaming the spec itself describes below the list. */
function neutral(code: string): string {
  if (/^PASSTHROUGH_INVALID_[A-Z]+$/.test(code)) return "PASSTHROUGH_INVALID_XML";
  const connection = /^LEDGER_CONNECTION_(NOT_SET_UP|NOT_ACTIVE|DISABLED)$/.exec(code);
  if (connection) return `INTEGRATION_CONNECTION_${connection[1] ?? ""}`;
  return code;
}

/** The "All codes:" bullet list: category → codes (neutral names, parenthetical notes dropped). */
function specCodeList(text: string): Map<string, string[]> {
  const start = text.indexOf("All codes:");
  assert.ok(start >= 0, "the spec has an `All codes:` list");
  const lines = text.slice(start).split("\n").slice(1);
  const categories = new Map<string, string[]>();
  for (const line of lines) {
    if (line.trim() === "") {
      if (categories.size > 0) break;
      continue;
    }
    const bullet = /^- ([^:]+): (.*)$/.exec(line);
    if (!bullet?.[1] || bullet[2] === undefined) break;
    const withoutNotes = bullet[2].replace(/\([^)]*\)/g, "");
    categories.set(
      bullet[1],
      [...withoutNotes.matchAll(CODE)].map((m) => neutral(m[0])),
    );
  }
  return categories;
}

/** The "Status mapping" table: code → HTTP status (null for request-resource-only codes). */
function specStatusTable(text: string): Map<string, number | null> {
  const start = text.indexOf("Status mapping:");
  assert.ok(start >= 0, "the spec has a `Status mapping:` table");
  const statuses = new Map<string, number | null>();
  for (const line of text.slice(start).split("\n").slice(1)) {
    if (line.trim() === "") {
      if (statuses.size > 0) break;
      continue;
    }
    const row = /^\|\s*(\d{3}|null)\s*\|(.*)\|\s*$/.exec(line);
    if (!row?.[1] || row[2] === undefined) continue;
    const status = row[1] === "null" ? null : Number(row[1]);
    for (const m of row[2].replace(/\([^)]*\)/g, "").matchAll(CODE)) statuses.set(neutral(m[0]), status);
  }
  return statuses;
}

/** The spec's text; null when it is absent (the reference rule: skipped outside CI, failed under CI). */
function needSpec(t: TestContext): string | null {
  if (needReference(t, { what: "the interface spec", path: SPEC_PATH }) === null) return null;
  return spec;
}

const codes = Object.keys(catalogue) as ErrorCode[];

describe("Error catalogue versus the spec", () => {
  test("the catalogue's codes equal the spec's All codes list after the neutral renaming", (t) => {
    const text = needSpec(t);
    if (text === null) return;
    const listed = [...specCodeList(text).values()].flat();
    assert.equal(new Set(listed).size, listed.length, `no code is listed twice: ${listed.join(", ")}`);
    assert.deepEqual([...codes].sort(), [...listed].sort());
  });

  test("every code in the spec's status table has that HTTP status in the catalogue", (t) => {
    const text = needSpec(t);
    if (text === null) return;
    const table = specStatusTable(text);
    assert.ok(table.size >= 30, `the status table was parsed (${table.size} codes)`);
    for (const [code, status] of table) {
      assert.ok(Object.hasOwn(catalogue, code), `${code} from the status table is in the catalogue`);
      assert.equal(catalogue[code as ErrorCode].httpStatus, status, `${code} has status ${status}`);
    }
  });

  test("request-validation and authentication codes have outcome not_applied", (t) => {
    const text = needSpec(t);
    if (text === null) return;
    const list = specCodeList(text);
    const invalid = list.get("Invalid request") ?? [];
    const auth = list.get("Authentication and permission") ?? [];
    assert.ok(invalid.length > 10 && auth.length > 5, "both categories were parsed");
    for (const code of [...invalid, ...auth]) {
      assert.equal(catalogue[code as ErrorCode].outcome, "not_applied", code);
    }
  });
});

describe("Error catalogue entries", () => {
  test("every entry has a non-empty message and userFacingMessage", () => {
    for (const code of codes) {
      assert.ok(catalogue[code].message.trim().length > 0, code);
      assert.ok(catalogue[code].userFacingMessage.trim().length > 0, code);
    }
  });

  test("every entry has at least one fix with a known actor and an action", () => {
    for (const code of codes) {
      const fixes = catalogue[code].fixes;
      assert.ok(fixes.length >= 1, code);
      for (const fix of fixes) {
        assert.ok(["developer", "end_user", "support"].includes(fix.actor), `${code}: ${fix.actor}`);
        assert.ok(fix.action.trim().length > 0, code);
      }
    }
  });

  test("every entry has one of the spec's retry rules, types and outcomes", () => {
    const rules = [
      "retry_same_request",
      "poll_request",
      "never_resend_check_first",
      "change_request_or_environment",
    ];
    const types = [
      "INVALID_REQUEST_ERROR",
      "AUTHENTICATION_ERROR",
      "PERMISSION_ERROR",
      "BILLING_ERROR",
      "RATE_LIMIT_ERROR",
      "INTEGRATION_CONNECTION_ERROR",
      "INTEGRATION_ERROR",
      "OUTCOME_UNKNOWN_ERROR",
      "INTERNAL_ERROR",
    ];
    const outcomes = ["applied", "not_applied", "pending", "unknown", "not_applicable"];
    for (const code of codes) {
      const entry = catalogue[code];
      assert.ok(rules.includes(entry.retry), `${code}: ${entry.retry}`);
      assert.ok(types.includes(entry.type), `${code}: ${entry.type}`);
      assert.ok(outcomes.includes(entry.outcome), `${code}: ${entry.outcome}`);
    }
  });

  test("every HTTP status is an error status or null", () => {
    for (const code of codes) {
      const status = catalogue[code].httpStatus;
      assert.ok(status === null || (status >= 400 && status <= 599), `${code}: ${status}`);
    }
  });

  test("a write whose outcome is unknown or pending is never retried automatically", () => {
    for (const code of codes) {
      const entry = catalogue[code];
      if (entry.outcome === "unknown" && entry.type === "OUTCOME_UNKNOWN_ERROR") {
        assert.equal(isRetryable(entry.retry), false, code);
      }
      if (entry.outcome === "pending") assert.equal(isRetryable(entry.retry), false, code);
    }
  });

  test("429 and 503 codes are retryable, and 4xx request-validation codes are not", () => {
    for (const code of codes) {
      const entry = catalogue[code];
      if (entry.httpStatus === 429) assert.equal(isRetryable(entry.retry), true, code);
      if (entry.type === "INVALID_REQUEST_ERROR") assert.equal(isRetryable(entry.retry), false, code);
    }
  });

  test("every code has its own docs address", () => {
    const urls = codes.map((code) => docsUrlFor(code, "https://svc.example.com/"));
    assert.equal(new Set(urls).size, codes.length);
    for (const url of urls) assert.doesNotThrow(() => new URL(url), url);
  });
});

/**
 * Codes no source file produces yet, each with where it will come from (none since issue 15). Every
 * other code must appear
 * as a literal in the service's source outside this catalogue and the diagnosis tables that only
 * read codes (requests/probable-causes.ts): a code that vanishes from its producer fails here.
 */
const NOT_PRODUCED_YET: Readonly<Record<string, string>> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("Error catalogue producers", () => {
  test("every code is produced somewhere in the service (decision 0019)", () => {
    const readers = new Set(["errors/catalogue.ts", "requests/probable-causes.ts"]);
    const src = resolve(import.meta.dirname, "..");
    const text = sourceFiles(src)
      .filter((file) => !readers.has(file.slice(src.length + 1)))
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    const missing = codes.filter((code) => !text.includes(`"${code}"`) && !(code in NOT_PRODUCED_YET));
    assert.deepEqual(missing, [], `codes no source produces: ${missing.join(", ")}`);
  });
});
