import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { resourceByPath, type ResourceDefinition } from "../../src/ledger/resources/definitions.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { TypedFactory } from "../../src/testing/typed-factory.ts";
import { countRequests, bringOnline, E2E_CONFIG, callAsEndUser, type JsonAnswer } from "./helpers.ts";

/**
 * Custom fields, their definitions and assemblies' can-build through HTTP, the SOAP protocol and the
 * simulated application (issue 15 §2): a value written with `setCustomField` is read back on the
 * record (retrieve and list ask the application for the public owner's values), `update` of a public
 * field works before it has a value, the delete answer names the field; definitions are listed,
 * created, renamed and deleted; can-build counts the components on hand; all of them as batch members
 * in one message set too.
 */
let sys: System;
let eu: ConnectedEndUser;
let factory: TypedFactory;
type Json = Record<string, unknown>;

/** Every request document the simulated application processed, in order. */
const documents: string[] = [];

const call = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<JsonAnswer> =>
  callAsEndUser(sys, eu, method, path, body);

const BASE = "/v1/ledger-desktop";
const DEFINITIONS = `${BASE}/custom-field-definitions`;

function group(path: string): ResourceDefinition {
  const resource = resourceByPath(path);
  assert.ok(resource, path);
  return resource;
}

function ok(result: JsonAnswer, status: number, label: string): Json {
  assert.equal(result.status, status, `${label}: ${JSON.stringify(result.body)}`);
  return result.body;
}

function error(result: JsonAnswer, status: number, code: string): Json {
  assert.equal(result.status, status, JSON.stringify(result.body));
  const body = result.body.error as Json;
  assert.equal(body.code, code, JSON.stringify(body));
  return body;
}

const requestCount = (): Promise<number> => countRequests(sys);

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  watchApplication(sys, (xml) => void documents.push(xml));
  eu = await sys.connectEndUser({ companyName: "Custom Fields Co" });
  await bringOnline(sys, eu);
  factory = new TypedFactory(call);
});
after(() => sys.close());

async function define(name: string, objectTypes: string[], extra: Json = {}): Promise<Json> {
  return ok(await call("POST", DEFINITIONS, { name, objectTypes, ...extra }), 201, `define ${name}`);
}

describe("custom field values written, then read back on the record", () => {
  test("a public field on a customer: update before any value, read by retrieve and list, delete", async () => {
    await define("Tier", ["customer"]);
    const customer = await factory.create(group("customers"));
    const id = String(customer.id);
    assert.deepEqual(customer.customFields, []);

    const set = ok(
      await call("POST", `${BASE}/customers/${id}/custom-fields`, {
        operation: "update",
        name: "Tier",
        value: "Gold",
      }),
      200,
      "update a public field that has no value yet",
    );
    assert.deepEqual(set, {
      objectType: "ledger_custom_field_value",
      ownerId: "0",
      name: "Tier",
      type: "string_255_type",
      value: "Gold",
    });
    const expected = [{ ownerId: "0", name: "Tier", type: "string_255_type", value: "Gold" }];
    const read = ok(await call("GET", `${BASE}/customers/${id}`), 200, "retrieve");
    assert.deepEqual(read.customFields, expected);
    const listed = ok(await call("GET", `${BASE}/customers?ids=${id}`), 200, "list by id");
    assert.deepEqual((listed.data as Json[])[0]?.customFields, expected);
    const paged = ok(await call("GET", `${BASE}/customers?limit=150`), 200, "list page");
    assert.deepEqual((paged.data as Json[]).find((r) => r.id === id)?.customFields, expected);

    const again = ok(
      await call("POST", `${BASE}/customers/${id}/custom-fields`, {
        operation: "update",
        name: "tier",
        value: "Platinum",
      }),
      200,
      "update an existing value",
    );
    assert.deepEqual([again.name, again.value], ["Tier", "Platinum"]);

    const cleared = ok(
      await call("POST", `${BASE}/customers/${id}/custom-fields`, { operation: "delete", name: "TIER" }),
      200,
      "delete the value",
    );
    assert.deepEqual(
      [cleared.ownerId, cleared.name, cleared.type, cleared.value],
      ["0", "Tier", null, null],
      "the field's own owner and name, from the application's answer",
    );
    const after = ok(await call("GET", `${BASE}/customers/${id}`), 200, "retrieve after delete");
    assert.deepEqual(after.customFields, []);
  });

  test("a private field: add gives the first value, and reads show only the public fields", async () => {
    const owner = "{0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D}";
    await define("Sync Ref", ["vendor"], { ownerId: owner });
    await define("Region", ["vendor"]);
    const vendor = await factory.create(group("vendors"));
    const id = String(vendor.id);
    const path = `${BASE}/vendors/${id}/custom-fields`;
    error(
      await call("POST", path, { operation: "update", ownerId: owner, name: "Sync Ref", value: "x" }),
      404,
      "LEDGER_OBJECT_NOT_FOUND",
    );
    const added = ok(
      await call("POST", path, { operation: "add", ownerId: owner, name: "Sync Ref", value: "ext-42" }),
      200,
      "add a private value",
    );
    assert.equal(added.ownerId, owner);
    ok(await call("POST", path, { operation: "update", name: "Region", value: "North" }), 200, "public");
    const read = ok(await call("GET", `${BASE}/vendors/${id}`), 200, "retrieve");
    assert.deepEqual(
      (read.customFields as Json[]).map((f) => [f.ownerId, f.name, f.value]),
      [["0", "Region", "North"]],
    );
    const deleted = ok(
      await call("POST", path, { operation: "delete", ownerId: owner, name: "Sync Ref" }),
      200,
      "delete a private value",
    );
    assert.deepEqual([deleted.ownerId, deleted.name], [owner, "Sync Ref"]);
  });

  test("a transaction's field and its externalId come back too", async () => {
    await define("Project Code", ["invoice"]);
    const externalId = "5f0c7a2e-1b3d-4c5e-8f9a-0b1c2d3e4f5a";
    const body = await factory.body(group("invoices"), group("invoices").create ?? assert.fail());
    const invoice = ok(await call("POST", `${BASE}/invoices`, { ...body, externalId }), 201, "invoice");
    const id = String(invoice.id);
    ok(
      await call("POST", `${BASE}/invoices/${id}/custom-fields`, {
        operation: "update",
        name: "Project Code",
        value: "P-7",
      }),
      200,
      "set",
    );
    const read = ok(await call("GET", `${BASE}/invoices/${id}`), 200, "retrieve");
    assert.equal(read.externalId, externalId);
    assert.deepEqual(
      (read.customFields as Json[]).map((f) => [f.name, f.value]),
      [["Project Code", "P-7"]],
    );
  });
});

describe("custom field definitions", () => {
  test("list, create, update (rename, add and remove record types) and delete", async () => {
    const created = await define("Rating", ["customer", "vendor"]);
    assert.deepEqual(
      [created.id, created.objectType, created.ownerId, created.name, created.type, created.objectTypes],
      ["Rating", "ledger_custom_field_definition", "0", "Rating", "string_255_type", ["customer", "vendor"]],
    );
    error(
      await call("POST", DEFINITIONS, { name: "rating", objectTypes: ["item"] }),
      409,
      "LEDGER_DUPLICATE_NAME",
    );

    const listed = ok(await call("GET", DEFINITIONS), 200, "list");
    assert.equal(listed.objectType, "list");
    assert.equal(listed.nextCursor, null);
    assert.ok((listed.data as Json[]).some((d) => d.id === "Rating"));

    const updated = ok(
      await call("POST", `${DEFINITIONS}/Rating`, {
        name: "Grade",
        addObjectTypes: ["item"],
        removeObjectTypes: ["vendor"],
      }),
      200,
      "update",
    );
    assert.deepEqual(
      [updated.id, updated.name, updated.objectTypes],
      ["Grade", "Grade", ["customer", "item"]],
    );
    error(await call("POST", `${DEFINITIONS}/Rating`, { name: "Other" }), 404, "LEDGER_OBJECT_NOT_FOUND");

    const before = await requestCount();
    error(await call("DELETE", `${DEFINITIONS}/Grade?confirm=yes`), 400, "INVALID_PARAMETER");
    error(
      await call("POST", DEFINITIONS, { name: "Bad", objectTypes: ["planet"] }),
      400,
      "INVALID_PARAMETER",
    );
    assert.equal(await requestCount(), before, "refused input is never queued");

    const deleted = ok(await call("DELETE", `${DEFINITIONS}/Grade?confirm=true`), 200, "delete");
    assert.deepEqual(
      [deleted.id, deleted.objectType, deleted.ownerId, deleted.name, deleted.deleted],
      ["Grade", "ledger_custom_field_definition", "0", "Grade", true],
    );
    assert.equal(typeof deleted.deletedAt, "string");
    const after = ok(await call("GET", DEFINITIONS), 200, "list after delete");
    assert.ok(!(after.data as Json[]).some((d) => d.id === "Grade"));
    error(await call("DELETE", `${DEFINITIONS}/Grade?confirm=true`), 404, "LEDGER_OBJECT_NOT_FOUND");
  });

  test("a private owner's definitions are listed when asked for by owner", async () => {
    const owner = "{1A2B3C4D-5E6F-4A7B-8C9D-0E1F2A3B4C5D}";
    await define("Private Ref", ["item"], { ownerId: owner });
    const publicOnly = ok(await call("GET", DEFINITIONS), 200, "public");
    assert.ok(!(publicOnly.data as Json[]).some((d) => d.id === "Private Ref"));
    const mine = ok(
      await call("GET", `${DEFINITIONS}?ownerIds=${encodeURIComponent(owner)}`),
      200,
      "private",
    );
    assert.deepEqual(
      (mine.data as Json[]).map((d) => [d.id, d.ownerId]),
      [["Private Ref", owner]],
    );
    ok(
      await call(
        "DELETE",
        `${DEFINITIONS}/${encodeURIComponent("Private Ref")}?confirm=true&ownerId=${encodeURIComponent(owner)}`,
      ),
      200,
      "delete a private definition",
    );
  });
});

/** An inventory assembly `name` of 2 bolts (7 on hand) and 4 nuts (20 on hand): 3 can be built. */
async function makeKit(name: string): Promise<string> {
  const items = group("inventory-items");
  const component = async (part: string, quantityOnHand: number): Promise<string> => {
    const body = await factory.body(items, items.create ?? assert.fail());
    const created = ok(
      await call("POST", `${BASE}/inventory-items`, { ...body, name: `${name} ${part}`, quantityOnHand }),
      201,
      part,
    );
    return String(created.id);
  };
  const bolt = await component("bolt", 7);
  const nut = await component("nut", 20);
  const assemblies = group("inventory-assembly-items");
  const body = await factory.body(assemblies, assemblies.create ?? assert.fail());
  const kit = ok(
    await call("POST", `${BASE}/inventory-assembly-items`, {
      ...body,
      name,
      lines: [
        { inventoryItemId: bolt, quantity: 2 },
        { inventoryItemId: nut, quantity: 4 },
      ],
    }),
    201,
    "assembly",
  );
  return String(kit.id);
}

describe("canBuild (inventory assembly items)", () => {
  test("counts the components on hand; a build uses them", async () => {
    const id = await makeKit("Kit");
    const canBuild = `${BASE}/inventory-assembly-items/${id}/can-build?transactionDate=2026-01-15`;
    const first = ok(await call("GET", canBuild), 200, "can build");
    assert.deepEqual(first, {
      objectType: "ledger_inventory_assembly_item_can_build",
      inventoryAssemblyItem: { id, fullName: "Kit" },
      transactionDate: "2026-01-15",
      quantityCanBuild: 3,
    });
    ok(
      await call("POST", `${BASE}/build-assemblies`, {
        inventoryAssemblyItemId: id,
        transactionDate: "2026-01-15",
        quantityToBuild: 2,
      }),
      201,
      "build two",
    );
    assert.equal(ok(await call("GET", canBuild), 200, "after the build").quantityCanBuild, 1);

    const before = await requestCount();
    error(await call("GET", `${BASE}/inventory-assembly-items/${id}/can-build`), 400, "INVALID_PARAMETER");
    error(
      await call("GET", `${BASE}/inventory-assembly-items/${id}/can-build?transactionDate=2026-02-30`),
      400,
      "INVALID_PARAMETER",
    );
    assert.equal(await requestCount(), before, "refused input is never queued");
    error(
      await call(
        "GET",
        `${BASE}/inventory-assembly-items/80FFFFFF-1700000000/can-build?transactionDate=2026-01-15`,
      ),
      404,
      "LEDGER_OBJECT_NOT_FOUND",
    );
  });
});

describe("as batch members", () => {
  test("definitions, a custom field, a read back and can-build in one message set", async () => {
    const customer = await factory.create(group("customers"));
    const kit = await makeKit("Batch kit");
    const seen = documents.length;
    const response = await sys.call("POST", `${BASE}/batch`, {
      endUserId: eu.endUserId,
      body: {
        requests: [
          {
            operationId: "ledger.customFieldDefinitions.create",
            body: { name: "Batch Field", objectTypes: ["customer"] },
          },
          {
            operationId: "ledger.customers.setCustomField",
            pathParams: { id: customer.id },
            body: { operation: "update", name: "Batch Field", value: "B" },
          },
          { operationId: "ledger.customers.retrieve", pathParams: { id: customer.id } },
          {
            operationId: "ledger.inventoryAssemblyItems.canBuild",
            pathParams: { id: kit },
            query: { transactionDate: "2026-01-15" },
          },
          { operationId: "ledger.customFieldDefinitions.list" },
          {
            operationId: "ledger.customFieldDefinitions.update",
            pathParams: { id: "Batch Field" },
            body: { addObjectTypes: ["vendor"] },
          },
          {
            operationId: "ledger.customFieldDefinitions.delete",
            pathParams: { id: "Batch Field" },
            query: { confirm: "true" },
          },
        ],
      },
    });
    const body = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(body));
    const results = body.results as Json[];
    assert.deepEqual(
      results.map((r) => r.status),
      Array.from({ length: 7 }, () => "succeeded"),
      JSON.stringify(results),
    );
    assert.equal((results[0]?.data as Json).id, "Batch Field");
    assert.equal((results[1]?.data as Json).value, "B");
    assert.deepEqual(
      ((results[2]?.data as Json).customFields as Json[]).map((f) => [f.name, f.value]),
      [["Batch Field", "B"]],
    );
    assert.equal((results[3]?.data as Json).quantityCanBuild, 3);
    assert.ok(((results[4]?.data as Json).data as Json[]).some((d) => d.id === "Batch Field"));
    assert.deepEqual((results[5]?.data as Json).objectTypes, ["customer", "vendor"]);
    assert.equal((results[6]?.data as Json).deleted, true);
    const carried = documents.slice(seen).filter((xml) => xml.includes("DataExtDefAddRq"));
    assert.equal(carried.length, 1, "one message set");
    assert.match(
      carried[0] ?? "",
      /DataExtDefAddRq[\s\S]*DataExtModRq[\s\S]*CustomerQueryRq[\s\S]*ItemAssembliesCanBuildQueryRq[\s\S]*DataExtDefQueryRq[\s\S]*DataExtDefModRq[\s\S]*DataExtDefDelRq/,
    );
  });
});
