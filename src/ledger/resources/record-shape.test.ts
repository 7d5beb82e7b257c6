import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readRecord, type ReadWarning } from "../typed/reader.ts";
import { leaf, node, type XmlElement } from "../xml/tree.ts";
import { allResources, resourceByPath } from "./definitions.ts";
import { DERIVED_OUTPUT } from "./shape.ts";

/**
 * Record shapes (issue 25, items 6 and 7): every typed record carries the spec's common fields, and
 * the few output fields computed from others are named and counted here.
 */
function read(path: string, children: XmlElement[]): Record<string, unknown> {
  const resource = resourceByPath(path);
  assert.ok(resource, path);
  const warnings: ReadWarning[] = [];
  const record = readRecord(
    resource.output,
    node(resource.ret, children),
    "",
    warnings,
    resource.entry.objectType,
  );
  assert.deepEqual(warnings, []);
  return record;
}

describe("typed records (spec: Common application record fields)", () => {
  test("every record of every group has `externalId` and `customFields`", () => {
    const lacking: string[] = [];
    for (const resource of allResources()) {
      for (const [element, { shape }] of resource.records) {
        const names = new Set(shape.fields.map((f) => f.json));
        for (const name of ["externalId", "customFields"]) {
          if (!names.has(name)) lacking.push(`${resource.entry.path} ${element}: ${name}`);
        }
      }
    }
    assert.deepEqual(lacking, []);
  });

  test("a record whose element cannot carry them reads them as null and []", () => {
    // A class record holds neither an ExternalGUID nor DataExtRet in the application's schema.
    const record = read("classes", [leaf("ListID", "80000001-1"), leaf("Name", "Retail")]);
    assert.equal(record.id, "80000001-1");
    assert.equal(record.externalId, null);
    assert.deepEqual(record.customFields, []);
    assert.ok(Object.hasOwn(record, "externalId"));
  });

  test("a record that carries them still reads them", () => {
    const record = read("customers", [
      leaf("ListID", "80000001-1"),
      leaf("Name", "Acme"),
      leaf("ExternalGUID", "{6B063959-81B0-4B4C-9F5F-0C0B8C9C5E21}"),
      node("DataExtRet", [
        leaf("OwnerID", "0"),
        leaf("DataExtName", "Colour"),
        leaf("DataExtType", "STR255TYPE"),
        leaf("DataExtValue", "Blue"),
      ]),
    ]);
    assert.match(String(record.externalId), /^6b063959-81b0-4b4c-9f5f-0c0b8c9c5e21$/i);
    assert.equal((record.customFields as { value: string }[])[0]?.value, "Blue");
  });
});

describe("derived output fields (named escape hatches)", () => {
  test("a time tracking activity's `isBilled` is true exactly when its billing status is has-been-billed", () => {
    const activity = (status: string | null): Record<string, unknown> =>
      read("time-tracking-activities", [
        leaf("TxnID", "1F-1"),
        ...(status === null ? [] : [leaf("BillableStatus", status)]),
      ]);
    assert.deepEqual(
      ["HasBeenBilled", "Billable", "NotBillable", null].map((status) => {
        const record = activity(status);
        return [record.billingStatus, record.isBilled];
      }),
      [
        ["has_been_billed", true],
        ["billable", false],
        ["not_billable", false],
        [null, null],
      ],
    );
  });

  test("the derived fields are counted: a new one is a reviewed decision", () => {
    const named = Object.entries(DERIVED_OUTPUT).flatMap(([type, fields]) =>
      fields.map((f) => `${type}.${f.json}`),
    );
    assert.deepEqual(named, ["TimeTrackingRet.isBilled"]);
  });
});
