import { ServiceError } from "../../errors/service-error.ts";
import type { ResourceDefinition } from "../resources/definitions.ts";
import { jsonEnumValue, nameTable } from "../resources/names.ts";
import { shapeOf, type Field, type Shape } from "../resources/shape.ts";
import { maskSecretsInMessage } from "../xml/redact.ts";
import { ledgerSchema } from "../xml/schema.ts";
import { excludes, slotsOf } from "../xml/slots.ts";
import { errorCodeForStatus } from "../xml/status-codes.ts";
import { attr, leaf, node, type XmlElement } from "../xml/tree.ts";
import { inSchemaOrder } from "./list-query.ts";
import { readRecord, type ReadWarning } from "./reader.ts";
import { writeElements } from "./writer.ts";

/**
 * The request messages of each typed action and the reading of their answers. Generic over the
 * registry: no resource name appears here.
 */

/** A warning on a Request (spec: Request `warnings`). */
export interface RequestWarning {
  code: string;
  statusCode: number | null;
  message: string;
  path: string | null;
}

/** One `*Rs` of an answer, with its status. */
export interface ResponseMessage {
  readonly element: XmlElement;
  readonly statusCode: number;
  readonly statusSeverity: string;
  readonly statusMessage: string;
}

export function responseMessage(element: XmlElement): ResponseMessage {
  return {
    element,
    statusCode: Number(attr(element, "statusCode") ?? "0"),
    statusSeverity: attr(element, "statusSeverity") ?? "Info",
    // A refused secret value quoted back by the application is masked (decision 0032).
    statusMessage: maskSecretsInMessage(attr(element, "statusMessage") ?? ""),
  };
}

/** The application's error status as a catalogue error (spec: Errors, "integrationCode"). */
export function statusError(message: ResponseMessage, param: string | null = null): ServiceError {
  return new ServiceError(errorCodeForStatus(message.statusCode), {
    integrationCode: String(message.statusCode),
    message: message.statusMessage
      ? `The application answered: ${message.statusMessage}`
      : `The application answered with status ${message.statusCode}.`,
    param,
  });
}

/** A Warn-severity status becomes a LEDGER_WARNING on the Request (data is still returned). */
export function statusWarnings(message: ResponseMessage): RequestWarning[] {
  if (message.statusSeverity !== "Warn") return [];
  return [
    { code: "LEDGER_WARNING", statusCode: message.statusCode, message: message.statusMessage, path: null },
  ];
}

// ---------------------------------------------------------------------------------------------
// request messages

const rq = (name: string, children: XmlElement[], attrs: Array<readonly [string, string]> = []): XmlElement =>
  node(name, children, attrs);

export function createMessage(
  resource: ResourceDefinition,
  body: Readonly<Record<string, unknown>>,
): XmlElement {
  const object = resource.entry.object;
  if (!resource.create) throw new Error(`${resource.entry.resource} has no create`);
  return rq(`${object}AddRq`, [node(`${object}Add`, writeElements(resource.create, body))]);
}

/** Query elements that exist on the group's query: line items and linked transactions included. */
function includeFlags(resource: ResourceDefinition, linked: boolean): XmlElement[] {
  const names = queryElementNames(resource);
  const out: XmlElement[] = [];
  if (names.has("IncludeLineItems")) out.push(leaf("IncludeLineItems", "true"));
  if (linked && names.has("IncludeLinkedTxns")) out.push(leaf("IncludeLinkedTxns", "true"));
  return out;
}

function queryElementNames(resource: ResourceDefinition): ReadonlySet<string> {
  return resource.queryElements;
}

/** The owner of public custom fields (spec: "`ownerId` '0' means a public field"). */
export const PUBLIC_OWNER_ID = "0";

/**
 * `<OwnerID>0</OwnerID>` where a query takes an owner and none of `children` excludes it: the
 * application answers custom field values (`DataExtRet`, read as `customFields`) only for the owners a
 * query names, so every query that can asks for the public fields.
 */
export function publicOwnerElements(requestName: string, children: readonly XmlElement[]): XmlElement[] {
  const slots = slotsOf(ledgerSchema(), requestName);
  const owner = slots.find((slot) => slot.name === "OwnerID");
  if (!owner) return [];
  const conflicts = children.some((child) => {
    const slot = slots.find((s) => s.name === child.name);
    return slot !== undefined && excludes(owner, slot);
  });
  return conflicts ? [] : [leaf("OwnerID", PUBLIC_OWNER_ID)];
}

export function retrieveMessage(resource: ResourceDefinition, id: string): XmlElement {
  const request = resource.queryRequest;
  const children = resource.entry.singleton
    ? []
    : [leaf(resource.idElement, id), ...includeFlags(resource, true)];
  return rq(request, inSchemaOrder(request, [...children, ...publicOwnerElements(request, children)]));
}

/** The line arrays of an update shape, grouped by schema family (arrays written as one run). */
export function lineFamilies(shape: Shape): Field[][] {
  const families = new Map<number, Field[]>();
  const single: Field[][] = [];
  for (const field of shape.fields) {
    if (
      field.form !== "object" ||
      !field.array ||
      !field.shape?.fields.some((f) => f.slot.name === "TxnLineID")
    )
      continue;
    if (field.slot.family === null) single.push([field]);
    else families.set(field.slot.family, [...(families.get(field.slot.family) ?? []), field]);
  }
  return [...families.values(), ...single];
}

/**
 * The Mod message. `kept` holds, per line array the caller left out of a family it partly sent,
 * the IDs of the lines to keep (read first: spec "Update", rule 5).
 */
export function updateMessage(
  resource: ResourceDefinition,
  id: string,
  body: Readonly<Record<string, unknown>>,
  kept: Readonly<Record<string, readonly string[]>> = {},
): XmlElement {
  const object = resource.entry.object;
  if (!resource.update) throw new Error(`${resource.entry.resource} has no update`);
  const value: Record<string, unknown> = { ...body, id };
  for (const [json, ids] of Object.entries(kept)) value[json] = ids.map((lineId) => ({ id: lineId }));
  // An empty array clears that kind of line through its `Clear…` element where the schema has one.
  for (const field of resource.update.fields) {
    const given = value[field.json];
    if (!field.array || !Array.isArray(given) || given.length > 0) continue;
    const clear = resource.update.fields.find(
      (f) => f.slot.name === `Clear${field.slot.name.replace(/Mod$/, "s")}`,
    );
    if (clear) value[clear.json] = true;
    delete value[field.json];
  }
  return rq(`${object}ModRq`, [node(`${object}Mod`, writeElements(resource.update, value))]);
}

export function deleteMessage(resource: ResourceDefinition, id: string): XmlElement {
  if (resource.entry.kind === "transaction") {
    return rq("TxnDelRq", [leaf("TxnDelType", resource.delType ?? ""), leaf("TxnID", id)]);
  }
  return rq("ListDelRq", [leaf("ListDelType", resource.delType ?? ""), leaf("ListID", id)]);
}

export function voidMessage(resource: ResourceDefinition, id: string): XmlElement {
  return rq("TxnVoidRq", [leaf("TxnVoidType", resource.voidType ?? ""), leaf("TxnID", id)]);
}

export interface MergeBody {
  revisionNumber: string;
  mergeIntoId: string;
  mergeIntoRevisionNumber: string;
  allowDifferentShippingAddresses?: boolean | undefined;
}

export function mergeMessage(resource: ResourceDefinition, id: string, body: MergeBody): XmlElement {
  return rq("ListMergeRq", [
    leaf("ListMergeType", resource.mergeType ?? ""),
    node("MergeFrom", [leaf("ListID", id), leaf("EditSequence", body.revisionNumber)]),
    node("MergeTo", [leaf("ListID", body.mergeIntoId), leaf("EditSequence", body.mergeIntoRevisionNumber)]),
    ...(body.allowDifferentShippingAddresses === undefined
      ? []
      : [leaf("SameShipAddrOk", body.allowDifferentShippingAddresses ? "true" : "false")]),
  ]);
}

export interface CustomFieldBody {
  operation: "add" | "update" | "delete";
  ownerId: string;
  name: string;
  value?: string | undefined;
}

export function customFieldMessage(
  resource: ResourceDefinition,
  id: string,
  body: CustomFieldBody,
): XmlElement {
  const owner =
    resource.entry.kind === "transaction"
      ? [leaf("TxnDataExtType", resource.dataExtType ?? ""), leaf("TxnID", id)]
      : [leaf("ListDataExtType", resource.dataExtType ?? ""), node("ListObjRef", [leaf("ListID", id)])];
  const head = [leaf("OwnerID", body.ownerId), leaf("DataExtName", body.name)];
  if (body.operation === "delete") return rq("DataExtDelRq", [node("DataExtDel", [...head, ...owner])]);
  const name = body.operation === "add" ? "DataExtAdd" : "DataExtMod";
  return rq(`${name}Rq`, [node(name, [...head, ...owner, leaf("DataExtValue", body.value ?? "")])]);
}

/** The object type of a can-build answer (`GET …/inventory-assembly-items/{id}/can-build`). */
export const CAN_BUILD_OBJECT_TYPE = "ledger_inventory_assembly_item_can_build";

/** The output shape of a group's can-build answer (`ItemAssembliesCanBuildRet`). */
export function canBuildShape(resource: ResourceDefinition): Shape {
  if (!resource.canBuild) throw new Error(`${resource.entry.resource} has no canBuild`);
  return shapeOf(resource.canBuild.ret, "output");
}

/** How many of the record its components on hand allow building on `date`. */
export function canBuildMessage(resource: ResourceDefinition, id: string, date: string): XmlElement {
  if (!resource.canBuild) throw new Error(`${resource.entry.resource} has no canBuild`);
  return rq(resource.canBuild.request, [
    node(`${resource.entry.object}Ref`, [leaf("ListID", id)]),
    leaf("TxnDate", date),
  ]);
}

// ---------------------------------------------------------------------------------------------
// answers

export interface Decoded {
  result: unknown;
  warnings: RequestWarning[];
}

/** The first `*Rs` of a response document's message set. */
export function firstResponse(root: XmlElement): ResponseMessage | null {
  const msgs = root.children.find((c) => c.name === "QBXMLMsgsRs");
  const first = msgs?.children[0];
  return first ? responseMessage(first) : null;
}

/** Reads one record from a create, update or retrieve answer. */
export function decodeRecord(
  resource: ResourceDefinition,
  message: ResponseMessage,
  notFound: boolean,
): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const ret = message.element.children.find((c) => resource.records.has(c.name));
  if (!ret) {
    if (notFound) {
      throw new ServiceError("LEDGER_OBJECT_NOT_FOUND", {
        integrationCode: String(message.statusCode),
        message: "No record with this ID exists in the company file.",
      });
    }
    throw new ServiceError("LEDGER_RESPONSE_UNREADABLE", { message: "The answer holds no record." });
  }
  const warnings: ReadWarning[] = [];
  const record = resource.records.get(ret.name);
  const result = readRecord(
    record?.shape ?? resource.output,
    ret,
    "",
    warnings,
    record?.objectType ?? resource.entry.objectType,
  );
  return { result, warnings: [...statusWarnings(message), ...warnings] };
}

/** Reads every record of a query answer (one page). */
export function decodeRecords(
  resource: ResourceDefinition,
  message: ResponseMessage,
): {
  data: Record<string, unknown>[];
  warnings: RequestWarning[];
  iteratorId: string | null;
  remaining: number | null;
} {
  if (message.statusSeverity === "Error") throw statusError(message);
  const warnings: ReadWarning[] = [];
  const data: Record<string, unknown>[] = [];
  for (const child of message.element.children) {
    const record = resource.records.get(child.name);
    if (!record) continue;
    data.push(readRecord(record.shape, child, `data[${data.length}]`, warnings, record.objectType));
  }
  const remaining = attr(message.element, "iteratorRemainingCount");
  return {
    data,
    warnings: [...statusWarnings(message), ...warnings],
    iteratorId: attr(message.element, "iteratorID") ?? null,
    remaining: remaining === undefined ? null : Number(remaining),
  };
}

function text(element: XmlElement, name: string): string | null {
  return element.children.find((c) => c.name === name)?.text ?? null;
}

/** Spec "Delete response": `{id, objectType, fullName or refNumber, deletedAt (list objects only), deleted}`. */
export function decodeDelete(resource: ResourceDefinition, message: ResponseMessage): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const el = message.element;
  const id = text(el, resource.idElement);
  const result =
    resource.entry.kind === "transaction"
      ? { id, objectType: resource.entry.objectType, refNumber: text(el, "RefNumber"), deleted: true }
      : {
          id,
          objectType: resource.entry.objectType,
          fullName: text(el, "FullName"),
          deletedAt: text(el, "TimeDeleted"),
          deleted: true,
        };
  return { result, warnings: statusWarnings(message) };
}

export function decodeVoid(resource: ResourceDefinition, message: ResponseMessage): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const el = message.element;
  return {
    result: {
      id: text(el, "TxnID"),
      objectType: resource.entry.objectType,
      createdAt: text(el, "TimeCreated"),
      updatedAt: text(el, "TimeModified"),
      refNumber: text(el, "RefNumber"),
      voided: true,
    },
    warnings: statusWarnings(message),
  };
}

export function decodeMerge(resource: ResourceDefinition, message: ResponseMessage): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const from = message.element.children.find((c) => c.name === "MergedFrom");
  const to = message.element.children.find((c) => c.name === "MergedTo");
  return {
    result: {
      id: to ? text(to, "ListID") : null,
      objectType: resource.entry.objectType,
      fullName: to ? text(to, "FullName") : null,
      mergedFrom: from
        ? { id: text(from, "ListID"), fullName: text(from, "FullName"), deletedAt: text(from, "TimeDeleted") }
        : null,
    },
    warnings: statusWarnings(message),
  };
}

/**
 * Spec "Custom field value": `{objectType, ownerId, name, type, value}`; after a delete `type` and
 * `value` are null. The owner and name come from the application's answer (`DataExtRet` for an add or
 * an update, `DataExtDelRet` for a delete), so they are the field's own, not the defaults of the body.
 */
export function decodeCustomField(message: ResponseMessage): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const deleted = message.element.name === "DataExtDelRs";
  const ret = message.element.children.find((c) => c.name === (deleted ? "DataExtDelRet" : "DataExtRet"));
  const type = ret && !deleted ? text(ret, "DataExtType") : null;
  return {
    result: {
      objectType: "ledger_custom_field_value",
      ownerId: ret ? text(ret, "OwnerID") : null,
      name: ret ? text(ret, "DataExtName") : null,
      type: type === null ? null : jsonEnumValue(nameTable(), "DataExtType", type),
      value: ret && !deleted ? text(ret, "DataExtValue") : null,
    },
    warnings: statusWarnings(message),
  };
}

/** A can-build answer: `{objectType, inventoryAssemblyItem, transactionDate, quantityCanBuild}`. */
export function decodeCanBuild(resource: ResourceDefinition, message: ResponseMessage): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const ret = message.element.children.find((c) => c.name === resource.canBuild?.ret);
  if (!ret) {
    throw new ServiceError("LEDGER_OBJECT_NOT_FOUND", {
      integrationCode: String(message.statusCode),
      message: "No record with this ID exists in the company file.",
    });
  }
  const warnings: ReadWarning[] = [];
  const result = readRecord(canBuildShape(resource), ret, "", warnings, CAN_BUILD_OBJECT_TYPE);
  return { result, warnings: [...statusWarnings(message), ...warnings] };
}
