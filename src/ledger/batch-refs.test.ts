import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  bodyParam,
  fieldAt,
  findRefs,
  locationKey,
  nameReferences,
  parseMemberRef,
  refSlotOf,
  refText,
  replaceAt,
  schemaHasScalarAt,
} from "./batch-refs.ts";
import { typedOperation } from "./operations.ts";
import type { JsonSchema } from "./resources/json-schema.ts";
import { leaf, node } from "./xml/tree.ts";

describe("batch member references: grammar", () => {
  test("the path spelling", () => {
    assert.deepEqual(parseMemberRef("requests[0].data.id"), { member: 0, steps: ["id"] });
    assert.deepEqual(parseMemberRef("requests[12].data.lines[3].itemId"), {
      member: 12,
      steps: ["lines", 3, "itemId"],
    });
    assert.deepEqual(parseMemberRef("requests[1].data"), { member: 1, steps: [] });
    for (const bad of [
      "",
      "requests[0]",
      "requests[01].data.id",
      "requests[-1].data.id",
      "requests[0].data.",
      "requests[0].data..id",
      "requests[0].data.id ",
      "requests[0].data[01]",
      "requests[0].status",
      "results[0].data.id",
      "requests[0].data.1st",
      "requests.0.data.id",
    ]) {
      assert.equal(parseMemberRef(bad), null, bad);
    }
  });

  test("the JSON Pointer spelling (RFC 6901, not the fragment form)", () => {
    assert.deepEqual(parseMemberRef("/requests/0/data/id"), { member: 0, steps: ["id"] });
    assert.deepEqual(parseMemberRef("/requests/2/data/lines/0/id"), {
      member: 2,
      steps: ["lines", "0", "id"],
    });
    assert.deepEqual(parseMemberRef("/requests/0/data/a~1b~0c"), { member: 0, steps: ["a/b~c"] });
    for (const bad of [
      "#/requests/0/data/id",
      "/requests/00/data/id",
      "/requests/0/id",
      "/requests/x/data",
      "/requests/0/data/a~2",
    ]) {
      assert.equal(parseMemberRef(bad), null, bad);
    }
    assert.equal(refText({ member: 2, steps: ["lines", "0", "id"] }), "requests[2].data.lines[0].id");
  });

  test("finding `$ref` objects anywhere in a body, and replacing them", () => {
    const body = {
      customerId: { $ref: "requests[0].data.id" },
      lines: [{ itemId: "1-1" }, { itemId: { $ref: "/requests/1/data/id" } }],
      memo: "$ref",
    };
    const found = findRefs(body, bodyParam);
    assert.deepEqual(found, [
      { at: ["customerId"], text: "requests[0].data.id" },
      { at: ["lines", 1, "itemId"], text: "/requests/1/data/id" },
    ]);
    assert.equal(bodyParam(["lines", 1, "itemId"]), "lines[1].itemId");
    const replaced = replaceAt(
      body,
      new Map([
        [locationKey(["customerId"]), "A"],
        [locationKey(["lines", 1, "itemId"]), "B"],
      ]),
    );
    assert.deepEqual(replaced, {
      customerId: "A",
      lines: [{ itemId: "1-1" }, { itemId: "B" }],
      memo: "$ref",
    });
    assert.deepEqual(body.customerId, { $ref: "requests[0].data.id" }, "the input is not changed");
    assert.throws(
      () => findRefs({ a: { $ref: "requests[0].data.id", id: "x" } }, bodyParam),
      (error: { code?: string; param?: string }) =>
        error.code === "INVALID_PARAMETER" && error.param === "a.id",
    );
    assert.throws(
      () => findRefs({ a: [{ $ref: 1 }] }, bodyParam),
      (error: { param?: string }) => error.param === "a[0].$ref",
    );
  });
});

describe("batch member references: where they may go and what they may name", () => {
  const invoices = typedOperation("ledger.invoices.create") ?? assert.fail();
  const shape = invoices.bodyShape() ?? assert.fail();

  test("a reference stands for an ID or a text field, one value", () => {
    const slot = (at: Array<string | number>) => {
      const found = fieldAt(shape, at);
      return found ? refSlotOf(found) : "absent";
    };
    assert.equal(slot(["customerId"]), "id");
    assert.equal(slot(["memo"]), "text");
    assert.equal(slot(["lines", 0, "itemId"]), "id");
    assert.equal(slot(["linkToTransactionIds", 0]), "id");
    assert.equal(slot(["linkToTransactionIds"]), null, "a whole array");
    assert.equal(slot(["lines"]), null);
    assert.equal(slot(["lines", 0]), null, "a line object");
    assert.equal(slot(["transactionDate"]), null);
    assert.equal(slot(["lines", 0, "amount"]), null);
    assert.equal(slot(["billingAddress"]), null);
    assert.equal(slot(["billingAddress", "city"]), "text");
    assert.equal(slot(["nothing"]), "absent");
    assert.equal(slot(["lines", "itemId"]), "absent", "into an array only through an item");
    assert.equal(slot(["customerId", 0]), "absent");
  });

  test("the referenced answer must be able to hold a text or number there (its response schema)", () => {
    const customers = typedOperation("ledger.customers.create") ?? assert.fail();
    const components: Record<string, JsonSchema> = {};
    const schema = customers.response(components);
    const has = (steps: Array<string | number>) => schemaHasScalarAt(schema, components, steps);
    assert.equal(has(["id"]), true);
    assert.equal(has(["fullName"]), true);
    assert.equal(has(["parent", "id"]), true);
    assert.equal(has(["billingAddress", "city"]), true);
    assert.equal(has(["additionalContacts", 0, "firstName"]), true);
    assert.equal(has(["additionalContacts", "0", "firstName"]), true, "a pointer's index");
    assert.equal(has(["nope"]), false);
    assert.equal(has(["billingAddress"]), false, "an object is no value");
    assert.equal(has([]), false);
    assert.equal(has(["id", "x"]), false);
  });

  test("a placeholder ListID becomes a FullName reference; other IDs stay", () => {
    const message = node("InvoiceAddRq", [
      node("InvoiceAdd", [
        node("CustomerRef", [leaf("ListID", "$ref:2:0")]),
        node("InvoiceLineAdd", [node("ItemRef", [leaf("ListID", "80000001-1")])]),
      ]),
    ]);
    const { message: named, rewritten } = nameReferences(message, new Map([["$ref:2:0", "Acme:Roof"]]));
    assert.equal(rewritten, 1);
    const add = named.children[0];
    assert.deepEqual(add?.children[0], node("CustomerRef", [leaf("FullName", "Acme:Roof")]));
    assert.deepEqual(add?.children[1], message.children[0]?.children[1]);
  });
});
