import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ServiceError } from "../../errors/service-error.ts";
import { validateTypedInput } from "../../requests/typed-call.ts";
import type { RequestRow } from "../../store/requests.ts";
import { typedOperation, typedOperations, type TypedOperation } from "../operations.ts";
import { SERVICE_OWNER_ID } from "../owner-id.ts";
import { allResources, resourceByPath } from "../resources/definitions.ts";
import { ledgerSchema } from "../xml/schema.ts";
import { slotsOf } from "../xml/slots.ts";
import { child, childText, childrenNamed, leaf, node, type XmlElement } from "../xml/tree.ts";
import { messageProblem } from "../xml/validate-tree.ts";
import { responseMessage } from "./actions.ts";

/**
 * Custom fields on the typed surface (issue 15 §2): every query that can asks for the public fields
 * and the reader returns them; the custom field answer names its own owner and name; the definitions
 * group and the assemblies' can-build query write valid messages and read their answers.
 */

const NO_REQUEST = {} as RequestRow;

function operation(id: string): TypedOperation {
  const found = typedOperation(id);
  assert.ok(found, id);
  return found;
}

function messageOf(op: TypedOperation, input: Parameters<typeof validateTypedInput>[1]): XmlElement {
  const message = op.message(validateTypedInput(op, input), { page: null, kept: {} });
  assert.equal(messageProblem(ledgerSchema(), message), null, `${op.operationId}: schema-valid`);
  return message;
}

function answer(name: string, children: XmlElement[], status = "0"): ReturnType<typeof responseMessage> {
  return responseMessage(
    node(name, children, [
      ["statusCode", status],
      ["statusSeverity", Number(status) >= 1000 ? "Error" : "Info"],
      ["statusMessage", ""],
    ]),
  );
}

function refuses(run: () => unknown, code: string, param: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ServiceError, String(error));
    assert.deepEqual([error.code, error.param], [code, param], error.message);
    return true;
  });
}

describe("custom field values come back on reads", () => {
  test("every list and retrieve whose query takes an owner asks for the public one ('0')", () => {
    let asking = 0;
    for (const op of typedOperations()) {
      if ((op.action !== "list" && op.action !== "retrieve") || op.resource.actionSet) continue;
      const request = op.resource.queryRequest;
      const takesOwner = slotsOf(ledgerSchema(), request).some((slot) => slot.name === "OwnerID");
      // A filter the query requires (bills to pay: the vendor) gets a value.
      const query = Object.fromEntries(
        op
          .inputs()
          .query.filter((p) => p.required)
          .map((p) => [p.name, p.kind.kind === "enum" ? String(p.kind.fake()) : "80000001-1"]),
      );
      const path = op.http.path.includes(":id") ? { pathParams: { id: "80000001-1" } } : {};
      const message = messageOf(op, { ...path, query });
      const owners = childrenNamed(message, "OwnerID").map((c) => c.text);
      assert.deepEqual(owners, takesOwner ? ["0"] : [], op.operationId);
      if (takesOwner) asking++;
    }
    // The change feed's lists are these list messages (mode `whole`): they ask too.
    assert.equal(asking, 79, "operations that ask for the public fields");
    const byIds = messageOf(operation("ledger.invoices.list"), { query: { ids: ["1-1", "2-1"] } });
    assert.equal(childText(byIds, "OwnerID"), "0", "next to an ID list too");
  });

  test("customFields and externalId are on every record, and read wherever the record type has them", () => {
    const types = new Map<string, { customFields: boolean; externalId: boolean }>();
    for (const resource of allResources()) {
      for (const [ret, record] of resource.records) {
        const slots = slotsOf(ledgerSchema(), ret).map((s) => s.name);
        const fields = record.shape.fields;
        // Spec "Common application record fields": every typed record has both (issue 25, item 7);
        // they read the record's elements where its type has them, and are null and [] elsewhere.
        for (const [json, element] of [
          ["customFields", "DataExtRet"],
          ["externalId", "ExternalGUID"],
        ] as const) {
          const field = fields.find((f) => f.json === json);
          assert.ok(field, `${ret} ${json}`);
          assert.equal(field.slot.name, element, `${ret} ${json} reads ${element}`);
        }
        types.set(ret, {
          customFields: slots.includes("DataExtRet"),
          externalId: slots.includes("ExternalGUID"),
        });
      }
    }
    const withFields = [...types.values()].filter((t) => t.customFields).length;
    const withExternal = [...types.values()].filter((t) => t.externalId).length;
    // Measured: of the record types the groups answer with, these are the ones whose schema type
    // holds the data (the rest, e.g. ClassRet, have neither element in the application's schema).
    assert.deepEqual([types.size, withFields, withExternal], [70, 39, 39]);

    const customers = resourceByPath("customers");
    assert.ok(customers);
    const decoded = operation("ledger.customers.retrieve").decodeMessage(
      answer("CustomerQueryRs", [
        node("CustomerRet", [
          leaf("ListID", "80000001-1"),
          leaf("Name", "Acme"),
          leaf("ExternalGUID", "{7E5C4B3A-2F1D-4E6B-8A9C-0D1E2F3A4B5C}"),
          node("DataExtRet", [
            leaf("OwnerID", "0"),
            leaf("DataExtName", "Tier"),
            leaf("DataExtType", "STR255TYPE"),
            leaf("DataExtValue", "Gold"),
          ]),
        ]),
      ]),
      NO_REQUEST,
    ).result as Record<string, unknown>;
    assert.deepEqual(decoded.customFields, [
      { ownerId: "0", name: "Tier", type: "string_255_type", value: "Gold" },
    ]);
    assert.equal(decoded.externalId, "7e5c4b3a-2f1d-4e6b-8a9c-0d1e2f3a4b5c");
  });
});

describe("setting a custom field", () => {
  const op = (): TypedOperation => operation("ledger.vendors.setCustomField");

  test("update writes a DataExtMod (public fields need no value first); the answer is the application's", () => {
    const message = messageOf(op(), {
      pathParams: { id: "80000001-1" },
      body: { operation: "update", name: "Tier", value: "Gold" },
    });
    assert.equal(message.name, "DataExtModRq");
    assert.equal(childText(child(message, "DataExtMod") ?? message, "OwnerID"), "0");
    const updated = op().decodeMessage(
      answer("DataExtModRs", [
        node("DataExtRet", [
          leaf("OwnerID", "0"),
          leaf("DataExtName", "Tier"),
          leaf("DataExtType", "STR255TYPE"),
          leaf("DataExtValue", "Gold"),
        ]),
      ]),
      NO_REQUEST,
    ).result;
    assert.deepEqual(updated, {
      objectType: "ledger_custom_field_value",
      ownerId: "0",
      name: "Tier",
      type: "string_255_type",
      value: "Gold",
    });
  });

  test("an owner is `0` or a GUID in braces, never the service's own: refused before anything is written", () => {
    for (const ownerId of ["abc", "{not-a-guid}", SERVICE_OWNER_ID, SERVICE_OWNER_ID.toLowerCase()]) {
      refuses(
        () =>
          validateTypedInput(op(), {
            pathParams: { id: "80000001-1" },
            body: { operation: "update", ownerId, name: "Tier", value: "Gold" },
          }),
        "INVALID_PARAMETER",
        "ownerId",
      );
    }
    const privateOwner = messageOf(op(), {
      pathParams: { id: "80000001-1" },
      body: { operation: "add", ownerId: "{11111111-2222-3333-4444-555555555555}", name: "Ref", value: "x" },
    });
    assert.equal(privateOwner.name, "DataExtAddRq");
  });

  test("a name and a value are text: outside the code page or too long is refused, naming the field (issue 25)", () => {
    const body = (fields: Record<string, unknown>) => ({
      pathParams: { id: "80000001-1" },
      body: { operation: "update", name: "Tier", value: "Gold", ...fields },
    });
    refuses(() => validateTypedInput(op(), body({ name: "Tier 😀" })), "UNSUPPORTED_CHARACTER", "name");
    refuses(() => validateTypedInput(op(), body({ value: "😀" })), "UNSUPPORTED_CHARACTER", "value");
    refuses(() => validateTypedInput(op(), body({ name: "x".repeat(32) })), "STRING_TOO_LONG", "name");
    refuses(() => validateTypedInput(op(), body({ value: "x".repeat(4096) })), "STRING_TOO_LONG", "value");
    refuses(() => validateTypedInput(op(), body({ name: "" })), "INVALID_PARAMETER", "name");
    // Decomposed accents are composed first, as in every text field.
    const message = messageOf(op(), body({ value: "Cafe\u0301" }));
    const value = message.children[0]?.children.find((c) => c.name === "DataExtValue")?.text;
    assert.equal(value, "Caf\u00e9");
  });

  test("the delete answer carries the field's own owner and name (DataExtDelRet); type and value null", () => {
    const owner = "{11111111-2222-3333-4444-555555555555}";
    const deleted = op().decodeMessage(
      answer("DataExtDelRs", [
        node("DataExtDelRet", [
          leaf("OwnerID", owner),
          leaf("DataExtName", "Secret"),
          leaf("ListDataExtType", "Vendor"),
          node("ListObjRef", [leaf("ListID", "80000001-1")]),
          leaf("TimeDeleted", "2026-01-15T07:00:00-05:00"),
        ]),
      ]),
      NO_REQUEST,
    ).result;
    assert.deepEqual(deleted, {
      objectType: "ledger_custom_field_value",
      ownerId: owner,
      name: "Secret",
      type: null,
      value: null,
    });
  });
});

describe("canBuild (inventory assembly items)", () => {
  test("derived from the schema's can-build query; a read with a required date", () => {
    const groups = allResources()
      .filter((r) => r.actions.includes("canBuild"))
      .map((r) => r.entry.resource);
    assert.deepEqual(groups, ["inventoryAssemblyItems"]);
    const op = operation("ledger.inventoryAssemblyItems.canBuild");
    assert.deepEqual(
      [op.access, op.http.method, op.http.path],
      ["read", "GET", "/v1/ledger-desktop/inventory-assembly-items/:id/can-build"],
    );
    refuses(
      () => validateTypedInput(op, { pathParams: { id: "80000001-1" } }),
      "INVALID_PARAMETER",
      "transactionDate",
    );
    refuses(
      () =>
        validateTypedInput(op, {
          pathParams: { id: "80000001-1" },
          query: { transactionDate: "2026-02-30" },
        }),
      "INVALID_PARAMETER",
      "transactionDate",
    );
    const message = messageOf(op, {
      pathParams: { id: "80000001-1" },
      query: { transactionDate: "2026-01-15" },
    });
    assert.equal(message.name, "ItemAssembliesCanBuildQueryRq");
    assert.equal(childText(child(message, "ItemInventoryAssemblyRef") ?? message, "ListID"), "80000001-1");
    assert.equal(childText(message, "TxnDate"), "2026-01-15");
    const result = op.decodeMessage(
      answer("ItemAssembliesCanBuildQueryRs", [
        node("ItemAssembliesCanBuildRet", [
          node("ItemInventoryAssemblyRef", [leaf("ListID", "80000001-1"), leaf("FullName", "Kit")]),
          leaf("TxnDate", "2026-01-15"),
          leaf("QuantityCanBuild", "3"),
        ]),
      ]),
      NO_REQUEST,
    ).result;
    assert.deepEqual(result, {
      objectType: "ledger_inventory_assembly_item_can_build",
      inventoryAssemblyItem: { id: "80000001-1", fullName: "Kit" },
      transactionDate: "2026-01-15",
      quantityCanBuild: 3,
    });
  });
});

describe("custom field definitions", () => {
  const id = (action: string): TypedOperation => operation(`ledger.customFieldDefinitions.${action}`);

  test("list, create, update and delete, from the application's DataExtDef requests", () => {
    assert.deepEqual(resourceByPath("custom-field-definitions")?.actions, [
      "list",
      "create",
      "update",
      "delete",
    ]);
    const list = messageOf(id("list"), {});
    assert.deepEqual(
      [list.name, childrenNamed(list, "OwnerID").map((c) => c.text)],
      ["DataExtDefQueryRq", ["0"]],
    );
    const owners = messageOf(id("list"), {
      query: { ownerIds: ["0", "{11111111-2222-3333-4444-555555555555}"] },
    });
    assert.equal(childrenNamed(owners, "OwnerID").length, 2);

    const created = messageOf(id("create"), { body: { name: "Tier", objectTypes: ["customer", "item"] } });
    const add = child(created, "DataExtDefAdd") ?? created;
    assert.deepEqual(
      add.children.map((c) => [c.name, c.text]),
      [
        ["OwnerID", "0"],
        ["DataExtName", "Tier"],
        ["DataExtType", "STR255TYPE"],
        ["AssignToObject", "Customer"],
        ["AssignToObject", "Item"],
      ],
    );

    const updated = messageOf(id("update"), {
      pathParams: { id: "Tier" },
      body: { name: "Level", addObjectTypes: ["vendor"], removeObjectTypes: ["item"] },
    });
    const mod = child(updated, "DataExtDefMod") ?? updated;
    assert.deepEqual(
      mod.children.map((c) => [c.name, c.text]),
      [
        ["OwnerID", "0"],
        ["DataExtName", "Tier"],
        ["DataExtNewName", "Level"],
        ["AssignToObject", "Vendor"],
        ["RemoveFromObject", "Item"],
      ],
    );

    const deleted = messageOf(id("delete"), { pathParams: { id: "Tier" }, query: { confirm: "true" } });
    assert.deepEqual(
      deleted.children.map((c) => [c.name, c.text]),
      [
        ["OwnerID", "0"],
        ["DataExtName", "Tier"],
      ],
    );
  });

  test("bad input is refused before anything is written, naming the parameter", () => {
    refuses(
      () => validateTypedInput(id("create"), { body: { name: "Tier" } }),
      "INVALID_PARAMETER",
      "objectTypes",
    );
    refuses(
      () => validateTypedInput(id("create"), { body: { name: "Tier", objectTypes: ["planet"] } }),
      "INVALID_PARAMETER",
      "objectTypes[0]",
    );
    refuses(
      () =>
        validateTypedInput(id("create"), {
          body: { name: "Tier", objectTypes: ["customer"], ownerId: SERVICE_OWNER_ID },
        }),
      "INVALID_PARAMETER",
      "ownerId",
    );
    refuses(
      () => validateTypedInput(id("list"), { query: { ownerIds: SERVICE_OWNER_ID } }),
      "INVALID_PARAMETER",
      "ownerIds",
    );
    refuses(
      () => validateTypedInput(id("list"), { query: { ownerIds: "anyone" } }),
      "INVALID_PARAMETER",
      "ownerIds",
    );
    refuses(
      () => validateTypedInput(id("delete"), { pathParams: { id: "Tier" }, query: { confirm: "yes" } }),
      "INVALID_PARAMETER",
      "confirm",
    );
    refuses(
      () => validateTypedInput(id("update"), { pathParams: { id: "Tier" }, body: { revisionNumber: "1" } }),
      "UNKNOWN_PARAMETER",
      "revisionNumber",
    );
  });

  test("a definition's id is its name; the delete answer names owner and name", () => {
    const definition = node("DataExtDefRet", [
      leaf("OwnerID", "0"),
      leaf("DataExtID", "4"),
      leaf("DataExtName", "Tier"),
      leaf("DataExtType", "STR255TYPE"),
      leaf("AssignToObject", "Customer"),
      leaf("DataExtListRequire", "false"),
      leaf("DataExtTxnRequire", "false"),
      leaf("DataExtFormatString", ""),
    ]);
    assert.deepEqual(id("create").decodeMessage(answer("DataExtDefAddRs", [definition]), NO_REQUEST).result, {
      id: "Tier",
      objectType: "ledger_custom_field_definition",
      ownerId: "0",
      definitionNumber: 4,
      name: "Tier",
      type: "string_255_type",
      objectTypes: ["customer"],
      isRequiredOnLists: false,
      isRequiredOnTransactions: false,
      formatString: "",
      externalId: null,
      customFields: [],
    });
    const listed = id("list").decodeMessage(answer("DataExtDefQueryRs", [definition, definition]), NO_REQUEST)
      .result as { data: unknown[] };
    assert.equal(listed.data.length, 2);
    const none = id("list").decodeMessage(answer("DataExtDefQueryRs", [], "1"), NO_REQUEST).result as {
      data: unknown[];
    };
    assert.deepEqual(none.data, [], "no match is an empty list");
    assert.deepEqual(
      id("delete").decodeMessage(
        answer("DataExtDefDelRs", [
          node("DataExtDefDelRet", [
            leaf("OwnerID", "0"),
            leaf("DataExtName", "Tier"),
            leaf("TimeDeleted", "2026-01-15T07:00:00-05:00"),
          ]),
        ]),
        NO_REQUEST,
      ).result,
      {
        id: "Tier",
        objectType: "ledger_custom_field_definition",
        ownerId: "0",
        name: "Tier",
        deletedAt: "2026-01-15T07:00:00-05:00",
        deleted: true,
      },
    );
  });
});
