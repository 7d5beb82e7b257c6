import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { MARKET_DOCUMENT, readMarketDocument } from "../../../scripts/import-market-names.ts";
import { needReference } from "../../testing/references.ts";
import { allResources } from "./definitions.ts";
import type { Shape } from "./shape.ts";

/**
 * Our field names against the market's published names (issue 7, "Names"; decision 0006; issue 15):
 * answers by object type, request bodies (create and update) by path.
 * Every group's record and nested records are compared. Fields we have that the market omits are
 * elements of the application's record it chose not to publish (transaction numbers, address blocks,
 * regional tax fields…): the spec wants every field present, so they stay, and are only counted here.
 * Fields the market has that we do not are each recorded below with the reason; the test fails on an
 * unrecorded one, and on a recorded one that has gone (so the list stays true).
 */
const RECORDED_MISSING: Readonly<Record<string, string>> = {
  // The application's schema has no type on data extensions inside item group lines (`DataExt`,
  // not `DataExtRet`), so there is nothing to read it from.
  "ledger_bill.itemGroupLines.customFields.type": "not in the application's record",
  "ledger_check.itemGroupLines.customFields.type": "not in the application's record",
  "ledger_credit_card_charge.itemGroupLines.customFields.type": "not in the application's record",
  "ledger_credit_card_credit.itemGroupLines.customFields.type": "not in the application's record",
  "ledger_item_receipt.itemGroupLines.customFields.type": "not in the application's record",
  "ledger_vendor_credit.itemGroupLines.customFields.type": "not in the application's record",
};

/** Request-body fields of the market's we lack, each with its reason (decision 0015). */
const RECORDED_MISSING_INPUT: Readonly<Record<string, string>> = {
  // The application's schema allows a value adjustment's value zero times (maxOccurs 0, 13.0 and
  // 16.0): it would refuse the message. Updates set a line's `valueDifference`.
  "inventory-adjustments.create.lines.adjustValue.newValue": "refused by the application's schema",
  "inventory-adjustments.create.lines.adjustValue.valueDifference": "refused by the application's schema",
};

type Json = Record<string, unknown>;

/** The market's document (skipped without it; CI fails: see src/testing/references.ts). */
function requireDocument(t: TestContext): string | null {
  return needReference(t, {
    what: "the market's OpenAPI document",
    path: MARKET_DOCUMENT,
    hint: "set LEDGER_MARKET_OPENAPI",
  });
}

function comparer(document: Json) {
  const schemas = (document.components as Json).schemas as Record<string, Json>;
  const deref = (schema: unknown): Json => {
    let current = (schema ?? {}) as Json;
    for (;;) {
      if (typeof current.$ref === "string") {
        current = schemas[current.$ref.split("/").pop() ?? ""] ?? {};
        continue;
      }
      const anyOf = (current.anyOf as Json[] | undefined)?.filter((s) => s.type !== "null");
      if (anyOf?.length === 1 && anyOf[0]) {
        current = anyOf[0];
        continue;
      }
      return current;
    }
  };
  const missing: string[] = [];
  let extra = 0;
  const compare = (label: string, ours: Shape, theirs: Json, top: boolean): void => {
    const props = (deref(theirs).properties ?? {}) as Record<string, Json>;
    const names = new Set(ours.fields.map((f) => f.json));
    if (top || ours.objectType) names.add("objectType");
    for (const name of Object.keys(props)) if (!names.has(name)) missing.push(`${label}.${name}`);
    extra += [...names].filter((name) => !(name in props)).length;
    for (const field of ours.fields) {
      const prop = props[field.json];
      if (field.form !== "object" || !field.shape || !prop) continue;
      let inner = deref(prop);
      if (inner.type === "array") inner = deref(inner.items);
      if (inner.properties) compare(`${label}.${field.json}`, field.shape, inner, false);
    }
  };
  return { compare, missing, extraCount: () => extra, schemas };
}

describe("output names against the market's published names", () => {
  test("every difference is fixed or recorded", (t) => {
    const document = requireDocument(t);
    if (document === null) return;
    const check = comparer(readMarketDocument(document));
    // The market names its object types with a prefix of its own: read it from its invoice schema.
    const invoiceKey = Object.keys(check.schemas).find((key) => /^[a-z]+_invoice$/.test(key));
    assert.ok(invoiceKey, "the market's document has an invoice schema");
    const marketPrefix = invoiceKey.slice(0, -"invoice".length);
    let compared = 0;
    for (const resource of allResources().filter((r) => r.entry.origin === "market")) {
      const theirs = check.schemas[resource.entry.objectType.replace(/^ledger_/, marketPrefix)];
      if (!theirs) continue;
      check.compare(resource.entry.objectType, resource.output, theirs, true);
      compared++;
    }
    assert.ok(compared >= 55, `compared ${compared} groups`);
    const unrecorded = check.missing.filter((name) => !(name in RECORDED_MISSING));
    assert.deepEqual(unrecorded, [], "market fields we lack that are not recorded");
    const stale = Object.keys(RECORDED_MISSING).filter((name) => !check.missing.includes(name));
    assert.deepEqual(stale, [], "recorded differences that no longer exist");
    t.diagnostic(
      `${compared} groups compared; ${check.extraCount()} fields of ours the market omits; ${check.missing.length} recorded`,
    );
  });

  test("request bodies: every market field of create and update is ours too", (t) => {
    const path = requireDocument(t);
    if (path === null) return;
    const document = readMarketDocument(path);
    const check = comparer(document);
    const paths = document.paths as Record<string, Record<string, Json> | undefined>;
    const bodyOf = (path: string): Json | null => {
      const content = ((paths[path]?.post?.requestBody as Json | undefined)?.content ?? {}) as Json;
      return ((content["application/json"] as Json | undefined)?.schema as Json | undefined) ?? null;
    };
    // Paths are ours with the market's prefix; read it from its invoices path.
    const invoices = Object.keys(paths).find((path) => /^\/[a-z-]+\/invoices$/.test(path));
    assert.ok(invoices, "the market's document has an invoices path");
    const prefix = invoices.slice(0, -"invoices".length);
    let compared = 0;
    for (const resource of allResources().filter((r) => r.entry.origin === "market")) {
      for (const [shape, path, action] of [
        [resource.create, `${prefix}${resource.entry.path}`, "create"],
        [resource.update, `${prefix}${resource.entry.path}/{id}`, "update"],
      ] as const) {
        const body = shape ? bodyOf(path) : null;
        if (!shape || !body) continue;
        check.compare(`${resource.entry.path}.${action}`, shape, body, false);
        compared++;
      }
    }
    assert.ok(compared >= 60, `compared ${compared} request bodies`);
    const unrecorded = check.missing.filter((name) => !(name in RECORDED_MISSING_INPUT));
    assert.deepEqual(unrecorded, [], "market request fields we lack that are not recorded");
    const stale = Object.keys(RECORDED_MISSING_INPUT).filter((name) => !check.missing.includes(name));
    assert.deepEqual(stale, [], "recorded differences that no longer exist");
    t.diagnostic(
      `${compared} request bodies compared; ${check.extraCount()} fields of ours the market omits`,
    );
  });
});
