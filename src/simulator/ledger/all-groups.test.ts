/**
 * Every resource group of the service's registry against the simulated application: create,
 * retrieve, list, update, delete, void, merge and custom fields with the service's own message
 * builders and minimal bodies derived from the input shapes. Every answer must be valid against the
 * application's response schema, and every action must succeed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { typedOperation } from "../../ledger/operations.ts";
import { allResources, type ResourceDefinition } from "../../ledger/resources/definitions.ts";
import { validateTypedInput, type TypedCallInput } from "../../requests/typed-call.ts";
import { shapeOf, type Field, type Shape } from "../../ledger/resources/shape.ts";
import { writeElements } from "../../ledger/typed/writer.ts";
import {
  createMessage,
  customFieldMessage,
  deleteMessage,
  mergeMessage,
  retrieveMessage,
  updateMessage,
  voidMessage,
} from "../../ledger/typed/actions.ts";
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { messageProblem } from "../../ledger/xml/validate-tree.ts";
import { attr, childText, leaf, node, renderDocument, type XmlElement } from "../../ledger/xml/tree.ts";
import { sampleBody } from "../../ledger/resources/examples.ts";
import type { ApplicationSession } from "../application.ts";
import { refTarget } from "./refs.ts";
import { send, setup } from "./test-support.ts";

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

function xmlOf(element: XmlElement): string {
  return renderDocument(element).replace(/^<\?xml[^>]*>\n/, "");
}

/** Sends one request, checks the answer against the response schema and returns its Rs. */
async function exchange(
  session: ApplicationSession,
  request: XmlElement,
  label: string,
): Promise<XmlElement> {
  assert.equal(
    messageProblem(ledgerSchema(), request),
    null,
    `${label}: request invalid:\n${xmlOf(request)}`,
  );
  const response = await send(session, xmlOf(request));
  const rs = response.rs[0];
  assert.ok(rs !== undefined, `${label}: no answer`);
  const problem = messageProblem(ledgerSchema(), rs);
  assert.equal(problem, null, `${label}: answer invalid against the response schema:\n${xmlOf(rs)}`);
  return rs;
}

function status(rs: XmlElement): string {
  return `${attr(rs, "statusCode") ?? "?"} ${attr(rs, "statusMessage") ?? ""}`;
}

function recordOf(rs: XmlElement): XmlElement {
  const ret = rs.children[0];
  assert.ok(ret !== undefined, `no record in ${xmlOf(rs)}`);
  return ret;
}

/** Creates records on demand: a fresh one of a fitting type for every reference. */
class Factory {
  private readonly random = seeded(7);
  private depth = 0;
  private count = 0;
  readonly serial = (): number => ++this.count;

  constructor(private readonly session: ApplicationSession) {}

  /** Creates one record of `resource`; returns its Ret. */
  async create(resource: ResourceDefinition): Promise<XmlElement> {
    const shape = resource.create;
    assert.ok(shape !== null, `${resource.entry.resource} has no create`);
    this.depth++;
    assert.ok(this.depth < 8, `reference chain too deep at ${resource.entry.resource}`);
    const pending: Array<Promise<void>> = [];
    const refs = new Map<string, string>();
    const txns = new Map<string, string>();
    const key = (path: readonly string[]): string => path.join("/");
    // First pass collects what is needed; IDs are created, then the body is built again with them.
    sampleBody(shape, {
      random: this.random,
      serial: this.serial,
      refId: (field, path) => {
        pending.push(this.refFor(resource, field).then((id) => void refs.set(key(path), id)));
        return "";
      },
      txnId: (_field, path) => {
        pending.push(this.txnFor(resource, path).then((id) => void txns.set(key(path), id)));
        return "";
      },
    });
    for (const p of pending) await p;
    const body = sampleBody(shape, {
      random: this.random,
      serial: this.serial,
      refId: (_field, path) => refs.get(key(path)) ?? "",
      txnId: (_field, path) => txns.get(key(path)) ?? "",
    });
    const rs = await exchange(
      this.session,
      createMessage(resource, body),
      `${resource.entry.resource} create`,
    );
    this.depth--;
    assert.equal(
      attr(rs, "statusCode"),
      "0",
      `${resource.entry.resource} create: ${status(rs)}\n${JSON.stringify(body)}`,
    );
    return recordOf(rs);
  }

  /** A minimal body for `shape` whose references name fresh records. */
  async body(owner: ResourceDefinition, shape: Shape): Promise<Record<string, unknown>> {
    const refs = new Map<string, string>();
    const pending: Array<Promise<void>> = [];
    const sources = {
      random: this.random,
      serial: this.serial,
      refId: (field: Field, path: readonly string[]) => {
        pending.push(this.refFor(owner, field).then((id) => void refs.set(path.join("/"), id)));
        return "";
      },
      txnId: () => "",
    };
    sampleBody(shape, sources);
    for (const p of pending) await p;
    return sampleBody(shape, { ...sources, refId: (_field, path) => refs.get(path.join("/")) ?? "" });
  }

  private async refFor(owner: ResourceDefinition, field: Field): Promise<string> {
    const { objects } = refTarget(field.slot.name, owner.entry.object);
    const target = allResources().find((r) => r.create !== null && objects.includes(r.entry.object));
    assert.ok(
      target !== undefined,
      `no resource can create a ${field.slot.name} for ${owner.entry.resource}`,
    );
    return childText(await this.create(target), "ListID") ?? "";
  }

  /** A transaction an applied-to element can name: bills for bill payments, invoices or credits else. */
  private async txnFor(owner: ResourceDefinition, path: readonly string[]): Promise<string> {
    const object = owner.entry.object.startsWith("BillPayment")
      ? "Bill"
      : path.some((p) => p.startsWith("Refund"))
        ? "CreditMemo"
        : "Invoice";
    const target = allResources().find((r) => r.entry.object === object);
    assert.ok(target !== undefined);
    return childText(await this.create(target), "TxnID") ?? "";
  }
}

/** A group's own operations (custom field definitions): create, list, update, delete, all answered. */
async function ownActions(session: ApplicationSession, resource: ResourceDefinition): Promise<void> {
  const name = resource.entry.resource;
  const run = async (action: string, input: TypedCallInput): Promise<XmlElement> => {
    const operation = typedOperation(`${resource.operationPrefix}.${action}`);
    assert.ok(operation, `${name}.${action}`);
    const message = operation.message(validateTypedInput(operation, input), { page: null, kept: {} });
    const rs = await exchange(session, message, `${name} ${action}`);
    assert.equal(attr(rs, "statusCode"), "0", `${name} ${action}: ${status(rs)}`);
    return rs;
  };
  for (const [action, input] of [
    ["create", { body: { name: "Colour", objectTypes: ["customer", "invoice"] } }],
    ["list", {}],
    ["update", { pathParams: { id: "Colour" }, body: { name: "Hue", removeObjectTypes: ["invoice"] } }],
    ["delete", { pathParams: { id: "Hue" }, query: { confirm: "true" } }],
  ] as const) {
    await run(action, input);
  }
}

const ok = (rs: XmlElement): boolean => ["0", "1"].includes(attr(rs, "statusCode") ?? "");

describe("every resource group against the response schema", () => {
  for (const resource of allResources()) {
    const name = resource.entry.resource;
    it(`${name}: ${resource.actions.join(", ")}`, async () => {
      const { session } = await setup();
      const factory = new Factory(session);
      const queryShape = shapeOf(resource.queryRequest, "input");
      const filters = writeElements(queryShape, await factory.body(resource, queryShape));
      const list = await exchange(session, node(resource.queryRequest, filters), `${name} list`);
      assert.ok(ok(list), `${name} list: ${status(list)}`);
      if (resource.entry.singleton) {
        const one = await exchange(session, retrieveMessage(resource, ""), `${name} retrieve`);
        assert.equal(attr(one, "statusCode"), "0", status(one));
      }
      if (resource.actionSet) {
        // A group with its own messages runs them through its own operations.
        await ownActions(session, resource);
        return;
      }
      const sampled = list.children.find((c) => resource.records.has(c.name));
      if (!resource.entry.singleton && resource.actions.includes("retrieve") && sampled !== undefined) {
        const sampledId = childText(sampled, resource.idElement) ?? "";
        const one = await exchange(session, retrieveMessage(resource, sampledId), `${name} retrieve`);
        assert.equal(
          childText(recordOf(one), resource.idElement),
          sampledId,
          `${name} retrieve: ${status(one)}`,
        );
      }
      if (resource.create === null) return;
      const created = await factory.create(resource);
      const id = childText(created, resource.idElement) ?? "";
      const got = await exchange(session, retrieveMessage(resource, id), `${name} retrieve`);
      assert.equal(childText(recordOf(got), resource.idElement), id);
      const queryType = ledgerSchema().typeOf(resource.queryRequest, null);
      if (resource.entry.listKind === "cursor" && "iterator" in queryType.attributes) {
        const iterated = await exchange(
          session,
          node(resource.queryRequest, [leaf("MaxReturned", "1")], [["iterator", "Start"]]),
          `${name} iterator`,
        );
        assert.ok(ok(iterated), `${name} iterator: ${status(iterated)}`);
      }
      if (resource.update !== null) {
        const changes = await factory.body(resource, resource.update);
        const updated = await exchange(
          session,
          updateMessage(resource, id, { ...changes, revisionNumber: childText(created, "EditSequence") }),
          `${name} update`,
        );
        assert.equal(attr(updated, "statusCode"), "0", `${name} update: ${status(updated)}`);
      }
      if (resource.actions.includes("setCustomField") && resource.dataExtType !== null) {
        const def = node("DataExtDefAddRq", [
          node("DataExtDefAdd", [
            leaf("OwnerID", "0"),
            leaf("DataExtName", "Colour"),
            leaf("DataExtType", "STR255TYPE"),
            leaf("AssignToObject", resource.dataExtType),
          ]),
        ]);
        const defined = await exchange(session, def, `${name} custom field definition`);
        assert.equal(attr(defined, "statusCode"), "0", status(defined));
        for (const operation of ["add", "update", "delete"] as const) {
          const rs = await exchange(
            session,
            customFieldMessage(resource, id, { operation, ownerId: "0", name: "Colour", value: "blue" }),
            `${name} custom field ${operation}`,
          );
          assert.equal(attr(rs, "statusCode"), "0", `${name} custom field ${operation}: ${status(rs)}`);
        }
      }
      if (resource.voidType !== null) {
        const voided = await exchange(session, voidMessage(resource, id), `${name} void`);
        assert.equal(attr(voided, "statusCode"), "0", `${name} void: ${status(voided)}`);
      }
      if (resource.mergeType !== null) {
        const other = await factory.create(resource);
        const current = recordOf(await exchange(session, retrieveMessage(resource, id), `${name} retrieve`));
        const merged = await exchange(
          session,
          mergeMessage(resource, childText(other, "ListID") ?? "", {
            revisionNumber: childText(other, "EditSequence") ?? "",
            mergeIntoId: id,
            mergeIntoRevisionNumber: childText(current, "EditSequence") ?? "",
          }),
          `${name} merge`,
        );
        assert.equal(attr(merged, "statusCode"), "0", `${name} merge: ${status(merged)}`);
      }
      if (resource.delType !== null) {
        const deleted = await exchange(session, deleteMessage(resource, id), `${name} delete`);
        assert.equal(attr(deleted, "statusCode"), "0", `${name} delete: ${status(deleted)}`);
        const gone = await exchange(session, retrieveMessage(resource, id), `${name} retrieve deleted`);
        assert.equal(attr(gone, "statusCode"), "3120", status(gone));
      }
    });
  }
});
