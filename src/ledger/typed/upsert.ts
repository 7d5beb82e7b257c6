import { z } from "zod";
import { ServiceError } from "../../errors/service-error.ts";
import type { ResourceDefinition } from "../resources/definitions.ts";
import { upsertKeys } from "../resources/definitions.ts";
import { exampleBody } from "../resources/examples.ts";
import type { Shape } from "../resources/shape.ts";
import { ledgerSchema } from "../xml/schema.ts";
import { leaf, node, type XmlElement } from "../xml/tree.ts";
import {
  createMessage,
  decodeRecord,
  decodeRecords,
  publicOwnerElements,
  retrieveMessage,
  updateMessage,
  type Decoded,
  type ResponseMessage,
} from "./actions.ts";
import { inputSchema } from "./input.ts";
import { inSchemaOrder } from "./list-query.ts";

/**
 * Upsert by key (issue 27, decision 0046): `PUT /v1/ledger-desktop/{group}/by-key` with
 * `{key: {fullName} | {externalId}, fields}` finds the record and modifies it with `fields` (its
 * revision read by the service), or adds it. It is ONE Request of several message sets, each decided
 * by the previous answer (`requests.program`, the engine's `next_step`): the Request keeps its place
 * at the head of its connection's queue between its sets, so two upserts of one key run one after
 * the other — the second finds what the first created. Every set is sent once (at most once holds
 * set by set; a lost answer is recovered before the next set is decided).
 *
 *   find (by FullName, or by the ID the service knows for the externalId)
 *     ├─ found ─────────────────────────────▶ update (Mod with the record's ID and revision)
 *     ├─ a job's parent to resolve ─▶ parent ─▶ create (Add under the parent's ID)
 *     └─ not found ──────────────────────────▶ create (Add, named by the key or holding the externalId)
 *
 * An `externalId` is found through the service's index of the externalIds it wrote or read
 * (`external_ids`), never through the caller: its first set is a no-op query that only takes the
 * Request's turn in the queue; the index is read when that answer arrives.
 */

export type UpsertKey = { readonly fullName: string } | { readonly externalId: string };

export type UpsertPhase = "find" | "parent" | "create" | "update";

/** What an upsert keeps between its message sets (`requests.program`). */
export interface UpsertProgram {
  readonly kind: "upsert";
  readonly key: UpsertKey;
  /** What the set in flight does. */
  readonly phase: UpsertPhase;
  /** `find` by ID: the ID asked for (an externalId's record as the index knew it); else null. */
  readonly askedId: string | null;
  /** The body of the Add, validated (the key's name or externalId in it; a job's parent added later). */
  readonly create: Readonly<Record<string, unknown>>;
  /** The body of the Mod, validated, without `revisionNumber` (read in `find`). */
  readonly update: Readonly<Record<string, unknown>>;
}

/** The answer of an upsert (`objectType: "upsert"`). */
export interface UpsertResult {
  readonly objectType: "upsert";
  readonly action: "created" | "updated";
  readonly data: unknown;
}

/** The body of an upsert, validated: the key and the two bodies it may send. */
export interface UpsertBody {
  readonly key: UpsertKey;
  readonly create: Record<string, unknown>;
  readonly update: Record<string, unknown>;
}

/** What a step decided: the next set's message and the program, or the Request's result. */
export type UpsertStep =
  | {
      readonly kind: "next";
      readonly message: XmlElement;
      readonly program: UpsertProgram;
      readonly detail: string;
    }
  | { readonly kind: "done"; readonly result: UpsertResult };

const FULL_NAME_MAX = 209;
const REVISION_PLACEHOLDER = "0";
/** The ID of a line to add in a Mod (spec "Update", rule 2). */
const NEW_LINE_ID = "-1";

/** The keys an upsert of `resource` accepts (empty: the group has no upsert). */
export function keysOf(resource: ResourceDefinition): Array<"fullName" | "externalId"> {
  return upsertKeys(ledgerSchema(), resource.entry.object, resource.queryRequest);
}

/** `Acme:Job 1` → name `Job 1` under parent `Acme`. */
function splitFullName(fullName: string): { name: string; parent: string | null } {
  const at = fullName.lastIndexOf(":");
  return at < 0
    ? { name: fullName, parent: null }
    : { name: fullName.slice(at + 1), parent: fullName.slice(0, at) };
}

/** The parent reference of a group's Add (`parentId`), when it has one. */
function parentField(shape: Shape): string | null {
  return shape.fields.some((field) => field.json === "parentId") ? "parentId" : null;
}

/** Fields the key gives, which `fields` may not give too. */
function keyFields(resource: ResourceDefinition, key: UpsertKey): string[] {
  if ("externalId" in key) return ["externalId"];
  const parent = resource.create ? parentField(resource.create) : null;
  return parent ? ["name", parent] : ["name"];
}

function shapeOf(shape: Shape | null, what: string): Shape {
  if (!shape) throw new Error(`no ${what} shape`);
  return shape;
}

type Issue = { path: PropertyKey[]; message: string };

/** Validates `body` with `schema`; issues are returned with their paths under `under`. */
function issuesOf(
  schema: z.ZodType,
  body: unknown,
  under: PropertyKey[],
): { data: unknown; issues: Issue[] } {
  const parsed = schema.safeParse(body, { reportInput: true });
  if (parsed.success) return { data: parsed.data, issues: [] };
  const issues: Issue[] = [];
  for (const issue of parsed.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const name of issue.keys) {
        issues.push({ path: [...under, ...issue.path, name], message: issue.message });
      }
    } else issues.push({ path: [...under, ...issue.path], message: issue.message });
  }
  return { data: null, issues };
}

/** The request body's schema: `{key, fields}`, `fields` checked as the Add's and the Mod's body. */
export function upsertBodySchema(resource: ResourceDefinition): z.ZodType<Record<string, unknown>> {
  const keys = keysOf(resource);
  const create = inputSchema(shapeOf(resource.create, "create"));
  const update = inputSchema(shapeOf(resource.update, "update"), { omit: new Set(["id"]) });
  const createNames = new Set(shapeOf(resource.create, "create").fields.map((field) => field.json));
  const updateNames = new Set(shapeOf(resource.update, "update").fields.map((field) => field.json));
  // Line arrays of the Mod (their lines carry IDs), with the fields a Mod line takes.
  const lineArrays = new Map(
    shapeOf(resource.update, "update")
      .fields.filter((field) => field.array && field.shape?.fields.some((line) => line.json === "id"))
      .map((field) => [field.json, new Set(field.shape?.fields.map((line) => line.json))]),
  );
  const keyShapes = keys.map((key) =>
    key === "fullName"
      ? z.strictObject({ fullName: z.string().min(1).max(FULL_NAME_MAX) })
      : z.strictObject({ externalId: z.uuid({ error: "`externalId` is a UUID." }) }),
  );
  const keySchema = keyShapes.length === 1 && keyShapes[0] ? keyShapes[0] : z.union(keyShapes);
  return z
    .strictObject({
      key: keySchema.meta({
        description: `How the record is found: ${keys.map((k) => `\`{"${k}": …}\``).join(" or ")}.`,
      }),
      fields: z.record(z.string(), z.unknown()).optional(),
    })
    .transform((value, ctx) => {
      const key = value.key;
      const fields = value.fields ?? {};
      const issues: Issue[] = [];
      for (const name of keyFields(resource, key)) {
        if (name in fields) {
          issues.push({
            path: ["fields", name],
            message: `\`${name}\` is given by the key; leave it out of \`fields\`.`,
          });
        }
      }
      // A field only the Add takes (an opening balance, a payee) is set when the record is created;
      // one only the Mod takes, when it is updated; one neither takes is refused by the Add's schema.
      const createBody: Record<string, unknown> = {};
      const updateBody: Record<string, unknown> = { revisionNumber: REVISION_PLACEHOLDER };
      for (const [name, given] of Object.entries(fields)) {
        if (updateNames.has(name) && !createNames.has(name)) updateBody[name] = given;
        else createBody[name] = given;
        if (updateNames.has(name) && createNames.has(name)) updateBody[name] = given;
      }
      // Lines given without an ID are new lines when the record is updated (spec "Update", rule 2:
      // the lines sent replace those of their kind) — the record ends as \`fields\` describe it; a
      // line's field only the Add's line takes is set when it is created, like the record's own.
      for (const [name, given] of Object.entries(updateBody)) {
        const lineNames = lineArrays.get(name);
        if (!lineNames || !Array.isArray(given)) continue;
        updateBody[name] = given.map((line: unknown) =>
          typeof line === "object" && line !== null && !Array.isArray(line) && !("id" in line)
            ? {
                ...Object.fromEntries(Object.entries(line).filter(([field]) => lineNames.has(field))),
                id: NEW_LINE_ID,
              }
            : line,
        );
      }
      if ("externalId" in key) createBody.externalId = key.externalId;
      else createBody.name = splitFullName(key.fullName).name;
      const created = issuesOf(create, createBody, ["fields"]);
      // A key's value that the Add refuses is the key's fault.
      for (const issue of created.issues) {
        const field = issue.path[1];
        if (field === "name" && "fullName" in key) issue.path = ["key", "fullName"];
        if (field === "externalId" && "externalId" in key) issue.path = ["key", "externalId"];
      }
      const updated = issuesOf(update, updateBody, ["fields"]);
      for (const issue of [...issues, ...created.issues, ...updated.issues]) {
        ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
      }
      if (ctx.issues.length > 0) return z.NEVER;
      const { revisionNumber: _revision, ...updateFields } = updated.data as Record<string, unknown>;
      return { key, create: created.data as Record<string, unknown>, update: updateFields };
    });
}

/** A valid body (OpenAPI example, the contract suites): the create example's fields but the key's. */
export function upsertExample(resource: ResourceDefinition): Record<string, unknown> {
  const [first] = keysOf(resource);
  const example = exampleBody(shapeOf(resource.create, "create"));
  const key: UpsertKey =
    first === "fullName"
      ? { fullName: typeof example.name === "string" ? example.name : "Example" }
      : { externalId: "6b063959-81b0-4b4c-9f5f-0c0b8c9c5e21" };
  const given = new Set(keyFields(resource, key));
  const fields = Object.fromEntries(Object.entries(example).filter(([name]) => !given.has(name)));
  return { key, fields };
}

/** The program an upsert starts with. */
export function firstProgram(body: UpsertBody): UpsertProgram {
  return {
    kind: "upsert",
    key: body.key,
    phase: "find",
    askedId: null,
    create: body.create,
    update: body.update,
  };
}

/** The program of an upsert Request (null for any other). */
export function upsertProgramOf(program: unknown): UpsertProgram | null {
  const value = program as UpsertProgram | null;
  return value && value.kind === "upsert" ? value : null;
}

function byFullName(resource: ResourceDefinition, fullName: string): XmlElement {
  const request = resource.queryRequest;
  const children = [leaf("FullName", fullName)];
  return node(request, inSchemaOrder(request, [...children, ...publicOwnerElements(request, children)]));
}

/** A query that only takes the Request's turn in the queue (the host's product and version). */
const TURN_MESSAGE: XmlElement = node("HostQueryRq", []);

/** The message of the set a program's phase sends. */
export function messageOf(resource: ResourceDefinition, program: UpsertProgram, found?: Found): XmlElement {
  switch (program.phase) {
    case "find":
      if ("fullName" in program.key) return byFullName(resource, program.key.fullName);
      return program.askedId === null ? TURN_MESSAGE : retrieveMessage(resource, program.askedId);
    case "parent":
      return byFullName(resource, splitFullName((program.key as { fullName: string }).fullName).parent ?? "");
    case "create":
      return createMessage(resource, program.create);
    case "update":
      return updateMessage(resource, found?.id ?? "", {
        ...program.update,
        revisionNumber: found?.revisionNumber,
      });
  }
}

/** A record a `find` or `parent` set found: what the next set needs of it. */
export interface Found {
  readonly id: string;
  readonly revisionNumber: string | null;
  readonly externalId: string | null;
}

/** What a set's answer says, read by the phase that asked (the engine decodes every answer). */
export type UpsertAnswer =
  | { readonly phase: "find" | "parent"; readonly found: Found | null }
  | { readonly phase: "create" | "update"; readonly record: unknown };

/** Reads a set's response message by the program's phase. */
export function decodeUpsert(
  resource: ResourceDefinition,
  program: UpsertProgram,
  message: ResponseMessage,
): Decoded {
  switch (program.phase) {
    case "find":
    case "parent": {
      if (program.phase === "find" && "externalId" in program.key && program.askedId === null) {
        return { result: { phase: "find", found: null } satisfies UpsertAnswer, warnings: [] };
      }
      let data: Record<string, unknown>[] = [];
      try {
        data = decodeRecords(resource, message).data;
      } catch (error) {
        // An ID the index knew that the company file no longer has: not found.
        if (!(error instanceof ServiceError && error.code === "LEDGER_OBJECT_NOT_FOUND")) throw error;
      }
      const [record] = data;
      const found: Found | null = record
        ? {
            id: String(record.id),
            revisionNumber: typeof record.revisionNumber === "string" ? record.revisionNumber : null,
            externalId: typeof record.externalId === "string" ? record.externalId : null,
          }
        : null;
      return { result: { phase: program.phase, found } satisfies UpsertAnswer, warnings: [] };
    }
    case "create":
    case "update": {
      const decoded = decodeRecord(resource, message, program.phase === "update");
      return {
        result: { phase: program.phase, record: decoded.result } satisfies UpsertAnswer,
        warnings: decoded.warnings,
      };
    }
  }
}

/**
 * Decides what follows a set's answer: the next set, or the result. `indexed` is the ID the
 * service's index holds for an externalId key now (read when the answer arrived: an upsert that ran
 * before this one in the queue has written it by then).
 */
export function nextOf(
  resource: ResourceDefinition,
  program: UpsertProgram,
  answer: UpsertAnswer,
  indexed: string | null,
): UpsertStep {
  const go = (
    phase: UpsertPhase,
    detail: string,
    changes: Partial<UpsertProgram> = {},
    found?: Found,
  ): UpsertStep => {
    const next: UpsertProgram = { ...program, ...changes, phase };
    return { kind: "next", message: messageOf(resource, next, found), program: next, detail };
  };
  if ("record" in answer) {
    return {
      kind: "done",
      result: {
        objectType: "upsert",
        action: answer.phase === "create" ? "created" : "updated",
        data: answer.record,
      },
    };
  }
  const found = answer.found;
  if (answer.phase === "parent") {
    if (!found) {
      throw new ServiceError("LEDGER_OBJECT_NOT_FOUND", {
        param: "key.fullName",
        message: `No record is named \`${splitFullName((program.key as { fullName: string }).fullName).parent ?? ""}\`, the parent the full name gives: create the parent first.`,
      });
    }
    const parent = resource.create ? parentField(resource.create) : null;
    return go("create", "the parent was found: the record is added under it", {
      create: { ...program.create, ...(parent ? { [parent]: found.id } : {}) },
    });
  }
  if (
    found &&
    ("fullName" in program.key || found.externalId?.toLowerCase() === program.key.externalId.toLowerCase())
  ) {
    return go("update", `found ${found.id}: it is modified`, {}, found);
  }
  if ("externalId" in program.key && indexed !== null && indexed !== program.askedId) {
    return go("find", `the externalId is known as ${indexed}: that record is read`, { askedId: indexed });
  }
  if ("fullName" in program.key && splitFullName(program.key.fullName).parent !== null) {
    return go("parent", "not found: its parent is looked up");
  }
  return go("create", "not found: it is added");
}
