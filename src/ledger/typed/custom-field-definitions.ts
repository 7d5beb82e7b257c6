import { z } from "zod";
import { ServiceError } from "../../errors/service-error.ts";
import { strictObject, text, type AnyFieldKind } from "../fields.ts";
import { ownerIdKind } from "../owner-id.ts";
import { outputSchemaRef, type JsonSchema } from "../resources/json-schema.ts";
import { recordShape, shapeOf, type Shape } from "../resources/shape.ts";
import { leaf, node, type XmlElement } from "../xml/tree.ts";
import {
  PUBLIC_OWNER_ID,
  statusError,
  statusWarnings,
  type Decoded,
  type ResponseMessage,
} from "./actions.ts";
import { readRecord, type ReadWarning } from "./reader.ts";
import { writeElements } from "./writer.ts";

/**
 * Custom field definitions (spec: batch operation index, `customFieldDefinitions`; the application's
 * data extension definitions, `DataExtDef…Rq`). A definition has no ListID: the application names it
 * by its owner (`0` for a public field the user sees, or an application's GUID) and its name, so the
 * record's `id` is its name (the market's rule: it changes when the definition is renamed) and the
 * owner travels beside it (`ownerId`, default `0`). The JSON fields come from the schema's types
 * through the name table (`objectTypes`, `isRequiredOnLists`…); the bodies are written here because
 * their defaults (owner `0`, type `string_255_type`) and the update's rename (the path names the
 * current name, the body's `name` the new one) follow no generic pattern.
 */

export const DEFINITION_OBJECT_TYPE = "ledger_custom_field_definition";
const DEFAULT_TYPE = "string_255_type";

const shape = (key: string, direction: "input" | "output"): Shape => shapeOf(key, direction);
const record = (): Shape => recordShape("DataExtDefRet");

/** The field kind of `json` in an input shape (enumerations carry the application's spelling). */
function kindOf(typeKey: string, json: string): AnyFieldKind {
  const field = shape(typeKey, "input").fields.find((f) => f.json === json);
  if (!field?.kind) throw new Error(`${typeKey} has no field ${json}`);
  return field.kind;
}

/** An owner: `0` (public) or an application's GUID, never the service's own marker owner. */
export const ownerKind: AnyFieldKind = ownerIdKind;
const ownerId = ownerKind.schema;
const definitionName = text({ max: 31, min: 1 });

function objectTypes(typeKey: string, json: string, min: number): z.ZodType {
  return z.array(kindOf(typeKey, json).schema).min(min).max(100);
}

let create: z.ZodType<Record<string, unknown>> | null = null;
let update: z.ZodType<Record<string, unknown>> | null = null;

/** `POST /custom-field-definitions`: a name and the kinds of record it applies to; owner and type optional. */
export function createBody(): z.ZodType<Record<string, unknown>> {
  create ??= strictObject(
    {
      name: definitionName,
      objectTypes: objectTypes("DataExtDefAdd", "objectTypes", 1),
      ownerId: ownerId.default(PUBLIC_OWNER_ID),
      type: kindOf("DataExtDefAdd", "type"),
      isRequiredOnLists: kindOf("DataExtDefAdd", "isRequiredOnLists"),
      isRequiredOnTransactions: kindOf("DataExtDefAdd", "isRequiredOnTransactions"),
      formatString: kindOf("DataExtDefAdd", "formatString"),
    },
    { required: ["name", "objectTypes"] },
  ) as unknown as z.ZodType<Record<string, unknown>>;
  return create;
}

/** `POST /custom-field-definitions/{id}`: rename, add or remove kinds of record, requirements. */
export function updateBody(): z.ZodType<Record<string, unknown>> {
  update ??= strictObject({
    ownerId: ownerId.default(PUBLIC_OWNER_ID),
    name: definitionName,
    addObjectTypes: objectTypes("DataExtDefMod", "addObjectTypes", 1),
    removeObjectTypes: objectTypes("DataExtDefMod", "removeObjectTypes", 1),
    isRequiredOnLists: kindOf("DataExtDefMod", "isRequiredOnLists"),
    isRequiredOnTransactions: kindOf("DataExtDefMod", "isRequiredOnTransactions"),
    formatString: kindOf("DataExtDefMod", "formatString"),
  }) as unknown as z.ZodType<Record<string, unknown>>;
  return update;
}

// ---------------------------------------------------------------------------------------------
// messages

export function listMessage(owners: readonly string[]): XmlElement {
  const given = owners.length > 0 ? owners : [PUBLIC_OWNER_ID];
  return node(
    "DataExtDefQueryRq",
    given.map((owner) => leaf("OwnerID", owner)),
  );
}

/** The create message; the owner defaults to `0` (a public field) and the type to 255-character text. */
export function createMessage(body: Readonly<Record<string, unknown>>): XmlElement {
  const value = { ownerId: PUBLIC_OWNER_ID, type: DEFAULT_TYPE, ...body };
  return node("DataExtDefAddRq", [
    node("DataExtDefAdd", writeElements(shape("DataExtDefAdd", "input"), value)),
  ]);
}

/** The update message: the path names the current name, the body's `name` is the new one. */
export function updateMessage(name: string, body: Readonly<Record<string, unknown>>): XmlElement {
  const { name: newName, ...rest } = body;
  const value = { ownerId: PUBLIC_OWNER_ID, ...rest, name, ...(newName === undefined ? {} : { newName }) };
  return node("DataExtDefModRq", [
    node("DataExtDefMod", writeElements(shape("DataExtDefMod", "input"), value)),
  ]);
}

export function deleteMessage(owner: string, name: string): XmlElement {
  return node("DataExtDefDelRq", [leaf("OwnerID", owner), leaf("DataExtName", name)]);
}

// ---------------------------------------------------------------------------------------------
// answers

/** One definition: `{id (its name), objectType, ownerId, name, type, objectTypes, …}`. */
function readDefinition(element: XmlElement, path: string, warnings: ReadWarning[]): Record<string, unknown> {
  const fields = readRecord(record(), element, path, warnings, DEFINITION_OBJECT_TYPE);
  return { id: fields.name ?? null, ...fields };
}

/** Every definition of a query answer (no match is an empty list). */
export function decodeDefinitions(message: ResponseMessage): {
  data: Record<string, unknown>[];
  warnings: Decoded["warnings"];
} {
  if (message.statusSeverity === "Error") throw statusError(message);
  const warnings: ReadWarning[] = [];
  const data = message.element.children
    .filter((c) => c.name === "DataExtDefRet")
    .map((element, index) => readDefinition(element, `data[${index}]`, warnings));
  return { data, warnings: [...statusWarnings(message), ...warnings] };
}

/** A created or updated definition. */
export function decodeDefinition(message: ResponseMessage): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const ret = message.element.children.find((c) => c.name === "DataExtDefRet");
  if (!ret) throw new ServiceError("LEDGER_RESPONSE_UNREADABLE", { message: "The answer holds no record." });
  const warnings: ReadWarning[] = [];
  const result = readDefinition(ret, "", warnings);
  return { result, warnings: [...statusWarnings(message), ...warnings] };
}

/** Delete response: `{id, objectType, ownerId, name, deletedAt, deleted: true}`. */
export function decodeDeleted(message: ResponseMessage): Decoded {
  if (message.statusSeverity === "Error") throw statusError(message);
  const ret = message.element.children.find((c) => c.name === "DataExtDefDelRet");
  const text = (name: string): string | null => ret?.children.find((c) => c.name === name)?.text ?? null;
  return {
    result: {
      id: text("DataExtName"),
      objectType: DEFINITION_OBJECT_TYPE,
      ownerId: text("OwnerID"),
      name: text("DataExtName"),
      deletedAt: text("TimeDeleted"),
      deleted: true,
    },
    warnings: statusWarnings(message),
  };
}

/** The definition's JSON Schema (the record's, with `id` first). */
export function definitionSchema(components: Record<string, JsonSchema>): JsonSchema {
  const ref = outputSchemaRef(record(), components, DEFINITION_OBJECT_TYPE);
  const schema = components[DEFINITION_OBJECT_TYPE] as { properties: Record<string, JsonSchema> };
  if (!("id" in schema.properties)) {
    const properties = { id: { type: ["string", "null"] }, ...schema.properties };
    components[DEFINITION_OBJECT_TYPE] = {
      type: "object",
      properties,
      required: Object.keys(properties),
    };
  }
  return ref;
}

export function deletedSchema(): JsonSchema {
  return {
    type: "object",
    properties: {
      id: { type: ["string", "null"] },
      objectType: { type: "string", const: DEFINITION_OBJECT_TYPE },
      ownerId: { type: ["string", "null"] },
      name: { type: ["string", "null"] },
      deletedAt: { type: ["string", "null"] },
      deleted: { type: "boolean", const: true },
    },
  };
}

/** Valid bodies for the OpenAPI examples (the contract suites send them). */
export const CREATE_EXAMPLE = { name: "Customer Rating", objectTypes: ["customer"] };
export const UPDATE_EXAMPLE = { name: "Customer Tier", addObjectTypes: ["vendor"] };
