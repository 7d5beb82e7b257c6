import { z } from "zod";
import { ServiceError } from "../errors/service-error.ts";
import { CURSOR_PAGE_SIZE_MAX, pageRequestId } from "./cursors.ts";
import type { FinishContext, NextStep } from "./operations.ts";
import { id, text } from "./fields.ts";
import { ownerIdKind } from "./owner-id.ts";
import {
  decodeReport,
  reportFilters,
  reportMessage,
  reportRecordSchema,
  type ReportKind,
} from "./reports.ts";
import type { ResourceAction } from "./resources/catalogue.ts";
import type { ResourceDefinition } from "./resources/definitions.ts";
import { exampleBody } from "./resources/examples.ts";
import { outputSchemaRef, type JsonSchema } from "./resources/json-schema.ts";
import type { Shape } from "./resources/shape.ts";
import {
  CAN_BUILD_OBJECT_TYPE,
  canBuildMessage,
  canBuildShape,
  createMessage,
  customFieldMessage,
  decodeCanBuild,
  decodeCustomField,
  decodeDelete,
  decodeMerge,
  decodeRecord,
  decodeVoid,
  deleteMessage,
  lineFamilies,
  mergeMessage,
  PUBLIC_OWNER_ID,
  publicOwnerElements,
  retrieveMessage,
  updateMessage,
  voidMessage,
  type CustomFieldBody,
  type Decoded,
  type MergeBody,
  type ResponseMessage,
} from "./typed/actions.ts";
import {
  dateParam,
  enumParam,
  integerParam,
  listFilters,
  textParam,
  type FilterParam,
  type ParamValue,
  type QueryParam,
} from "./typed/filters.ts";
import { inputSchema } from "./typed/input.ts";
import { inSchemaOrder } from "./typed/list-query.ts";
import * as definitions from "./typed/custom-field-definitions.ts";
import { finishListPage, decodeListPage, type ListPage } from "./typed/lists.ts";
import type { RequestRow } from "../store/requests.ts";
import { leaf, node, type XmlElement } from "./xml/tree.ts";
import { messageSet } from "./xml/message-set.ts";
import { findExternalId } from "../store/external-ids.ts";
import {
  decodeUpsert,
  firstProgram,
  messageOf,
  nextOf,
  upsertBodySchema,
  upsertExample,
  upsertProgramOf,
  type UpsertAnswer,
  type UpsertBody,
  type UpsertStep,
} from "./typed/upsert.ts";

/**
 * The action table (issue 14; house style §2.1 "the catalogue is data"): for each action a typed
 * operation can take — list, retrieve, create, update, delete, void, merge, setCustomField, canBuild
 * and the report queries — its HTTP shape, whether it reads or writes, its inputs (path, query and body, in
 * the one validation vocabulary of field kinds), the request message it writes, how its answer is
 * decoded and its response schema. Routes (api/routes/ledger-resources.ts), the OpenAPI document,
 * the operation table the engine decodes answers with (operations.ts), the change feed and batch
 * all read this table; nothing else switches over actions. A group whose messages follow none of
 * the generic patterns (custom field definitions: no ListID, named by owner and name) has its own
 * specs of the same actions here (`GROUP_ACTIONS`, chosen by `actionSpecOf`).
 *
 * Two actions need the store around their message, and say so as data for the core
 * (requests/typed-call.ts) to plan: a list that pages starts or continues an application cursor
 * (`paging`), and an update that sends only some line arrays of one family reads the record first
 * (`readFirst`).
 */

/** The actions: a group's (the catalogue's list), and the report queries'. */
export type ActionName = ResourceAction | "report";

/** A request body rule: none (GET), empty (`{}` or no body at all), or a JSON object schema. */
export type BodyRule =
  | { readonly type: "none" }
  | { readonly type: "empty" }
  | {
      readonly type: "json";
      schema(): z.ZodType<Record<string, unknown>>;
      /** Valid bodies by name (OpenAPI examples; the contract suites send them). */
      examples(): Record<string, unknown>;
    };

/** Every input of an operation: what is validated before anything is queued. */
export interface ActionInputs {
  /** Path parameters: `id` (the record) where the path names one. */
  readonly path: readonly "id"[];
  readonly query: readonly QueryParam[];
  readonly body: BodyRule;
  /** The list filters among `query` (their combination rules are checked too). */
  readonly filters?: readonly FilterParam[];
}

/** A call's input after validation. */
export interface CallInput {
  /** The record's ID from the path (null when the path names none). */
  readonly id: string | null;
  readonly query: ReadonlyMap<string, ParamValue>;
  /** The JSON body (`{}` when the operation takes none). */
  readonly body: Readonly<Record<string, unknown>>;
}

/** Which page of a list a message asks for. */
export type PageRequest =
  /** One query: no iterator; `max` caps the count where the query allows (null: everything). */
  | { readonly kind: "single"; readonly max: number | null }
  /** The first page of a new application cursor. */
  | { readonly kind: "start"; readonly cursorId: string; readonly size: number }
  /** A further page of an open cursor. */
  | {
      readonly kind: "continue";
      readonly cursorId: string;
      readonly page: number;
      readonly iteratorId: string;
      readonly size: number;
    };

/** What the core learned before the message is written (see `paging` and `readFirst`). */
export interface MessageContext {
  readonly page: PageRequest | null;
  /** Update: per line array the caller left out of a family it partly sent, the lines to keep. */
  readonly kept: Readonly<Record<string, readonly string[]>>;
}

/** Update: line arrays left out of a family the body partly sends (spec "Update", rule 5). */
export interface ReadFirst {
  /** The body's omitted line arrays (input JSON name → output JSON name of the record read). */
  readonly arrays: ReadonlyArray<{ readonly input: string; readonly output: string }>;
}

export interface ActionSpec<S> {
  readonly name: ActionName;
  readonly access: "read" | "write";
  readonly http: { readonly method: "GET" | "POST" | "PUT" | "DELETE"; readonly status: 200 | 201 };
  /** The route, Fastify style (`/v1/ledger-desktop/invoices/:id/void`). */
  path(subject: S): string;
  summary(subject: S): string;
  inputs(subject: S): ActionInputs;
  /** Lists: whether this call pages with an application cursor (else one query). */
  paging?(subject: S, input: CallInput): "cursor" | "single";
  /** Updates: the lines to read first, or null when the body needs no read. */
  readFirst?(subject: S, input: CallInput): ReadFirst | null;
  /** The request message. */
  message(subject: S, input: CallInput, context: MessageContext): XmlElement;
  /** The identity of the call for an Idempotency-Key fingerprint (the body and the path's ID). */
  fingerprint(input: CallInput): unknown;
  /**
   * The input shape of the body's record (create/update): the connection gate names the body's
   * field when an element is newer than the connection's version or lacking in its edition.
   */
  bodyShape?(subject: S): Shape | null;
  /** Reads the answer's response message. */
  decode(subject: S, message: ResponseMessage, request: RequestRow): Decoded;
  /**
   * Books what the answer changes outside the Request (list pages: the cursor), on completion; an
   * operation of several message sets (upsert) decides its next set here (decision 0046).
   */
  finish?(subject: S, context: FinishContext, request: RequestRow, result: unknown): Promise<DecodedResult>;
  /** An operation of several message sets: what its Request keeps between them, to start with. */
  program?(subject: S, input: CallInput): unknown;
  /** The success response's JSON Schema; shared records go to `components`. */
  response(subject: S, components: Record<string, JsonSchema>): JsonSchema;
}

/** A finished answer: the result, or the error the application's answer means. */
export type DecodedResult =
  | { ok: true; result: unknown; warnings: Decoded["warnings"]; next?: NextStep }
  | { ok: false; error: ServiceError };

export const LEDGER_BASE = "/v1/ledger-desktop";

const base = (resource: ResourceDefinition): string => `${LEDGER_BASE}/${resource.entry.path}`;
const label = (resource: ResourceDefinition): string =>
  resource.entry.objectType.replace(/^ledger_/, "").replace(/_/g, " ");
const NONE: BodyRule = { type: "none" };
const EMPTY: BodyRule = { type: "empty" };
const ID_PATH: readonly "id"[] = ["id"];
const NO_PATH: readonly "id"[] = [];
const OMIT_ID: ReadonlySet<string> = new Set(["id"]);
const byId = (input: CallInput): unknown => ({ id: input.id });
const withBody = (input: CallInput): unknown => ({ id: input.id, body: input.body });

/** The record's ID, which the path validated (the core refuses a missing one). */
function idOf(input: CallInput): string {
  return input.id ?? "";
}

function jsonBody(schema: () => z.ZodType<Record<string, unknown>>, examples: () => unknown): BodyRule {
  return { type: "json", schema, examples: () => ({ minimal: examples() }) };
}

// ---------------------------------------------------------------------------------------------
// response schemas

function recordSchema(resource: ResourceDefinition, components: Record<string, JsonSchema>): JsonSchema {
  // Named by the objectType each record is read with (a group's records may all differ from the
  // group's own objectType: items, entities).
  const refs = [...resource.records.values()].map((r) => outputSchemaRef(r.shape, components, r.objectType));
  return refs.length === 1 && refs[0] ? refs[0] : { oneOf: refs };
}

function summarySchema(resource: ResourceDefinition, extra: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: {
      id: { type: ["string", "null"] },
      objectType: { type: "string", const: resource.entry.objectType },
      ...extra,
    },
  };
}

/** Spec: list envelope `{objectType:'list', url, data[], nextCursor, hasMore, remainingCount, cursorExpiresAt}`, and `source` (issue 26). */
function listEnvelope(items: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: {
      objectType: { type: "string", const: "list" },
      url: { type: "string" },
      data: { type: "array", items },
      nextCursor: { type: ["string", "null"] },
      hasMore: { type: "boolean" },
      remainingCount: { type: ["integer", "null"] },
      cursorExpiresAt: { type: ["string", "null"], format: "date-time" },
      source: {
        type: "string",
        enum: ["live", "mirror"],
        description:
          "`live`: the application answered this call; `mirror`: the end user's mirror did, as of `Svc-Data-As-Of` (a call with `Svc-Max-Staleness-Seconds`)",
      },
    },
    required: LIST_ENVELOPE_REQUIRED,
  };
}

const LIST_ENVELOPE_REQUIRED = [
  "objectType",
  "url",
  "data",
  "nextCursor",
  "hasMore",
  "remainingCount",
  "cursorExpiresAt",
  "source",
];

// ---------------------------------------------------------------------------------------------
// the actions

const limitParam = (max: number): QueryParam => ({
  name: "limit",
  kind: integerParam(1, max),
  array: false,
  description: `Page size, 1 to ${max} (default ${max}).`,
});
const cursorParam: QueryParam = {
  name: "cursor",
  kind: textParam(200),
  array: false,
  description: "The `nextCursor` of the latest page.",
};

const confirmParam: QueryParam = {
  name: "confirm",
  kind: enumParam(["true"]),
  array: false,
  required: true,
  description: "Must be `true`: deleting is permanent.",
};

/** Whether the filters given name records one by one (ids, names…): one complete answer, no cursor. */
function namesRecords(query: ReadonlyMap<string, ParamValue>): boolean {
  return ["ids", "fullNames", "names", "refNumbers"].some((name) => query.has(name));
}

const list: ActionSpec<ResourceDefinition> = {
  name: "list",
  access: "read",
  http: { method: "GET", status: 200 },
  path: base,
  summary: (resource) => `List ${resource.entry.path.replace(/-/g, " ")}`,
  inputs(resource) {
    const filters = listFilters(resource).params;
    const query: QueryParam[] = [...filters];
    if (resource.queryElements.has("MaxReturned")) query.push(limitParam(CURSOR_PAGE_SIZE_MAX));
    if (resource.pages) query.push(cursorParam);
    return { path: NO_PATH, query, body: NONE, filters };
  },
  paging: (resource, input) =>
    resource.pages && resource.queryElements.has("MaxReturned") && !namesRecords(input.query)
      ? "cursor"
      : "single",
  message(resource, input, context) {
    const requestName = resource.queryRequest;
    const filters = new Map([...input.query].filter(([name]) => name !== "limit" && name !== "cursor"));
    const children = listFilters(resource).build(filters);
    if (resource.queryElements.has("IncludeLineItems") && !filters.has("includeLineItems")) {
      children.push(leaf("IncludeLineItems", "true"));
    }
    const page = context.page ?? { kind: "single", max: null };
    const max = page.kind === "single" ? page.max : page.size;
    if (max !== null && resource.queryElements.has("MaxReturned") && !namesRecords(filters)) {
      children.push(leaf("MaxReturned", String(max)));
    }
    children.push(...publicOwnerElements(requestName, children));
    const attributes: Array<readonly [string, string]> =
      page.kind === "start"
        ? [
            ["requestID", pageRequestId(page.cursorId, 1)],
            ["iterator", "Start"],
          ]
        : page.kind === "continue"
          ? [
              ["requestID", pageRequestId(page.cursorId, page.page)],
              ["iterator", "Continue"],
              ["iteratorID", page.iteratorId],
            ]
          : [];
    return node(requestName, inSchemaOrder(requestName, children), attributes);
  },
  fingerprint: () => null,
  decode: (resource, message) => decodeListPage(resource, message),
  finish: (resource, context, request, result) => finishListPage(resource, context, request, result),
  response: (resource, components) => listEnvelope(recordSchema(resource, components)),
};

const retrieve: ActionSpec<ResourceDefinition> = {
  name: "retrieve",
  access: "read",
  http: { method: "GET", status: 200 },
  path: (resource) => (resource.entry.singleton ? base(resource) : `${base(resource)}/:id`),
  summary: (resource) => `Retrieve ${resource.entry.singleton ? "the" : "a"} ${label(resource)}`,
  inputs: (resource) => ({ path: resource.entry.singleton ? NO_PATH : ID_PATH, query: [], body: NONE }),
  message: (resource, input) => retrieveMessage(resource, idOf(input)),
  fingerprint: () => null,
  decode: (resource, message) => decodeRecord(resource, message, true),
  response: recordSchema,
};

function shapeOrFail(shape: Shape | null, what: string): Shape {
  if (!shape) throw new Error(`no ${what} shape`);
  return shape;
}

const create: ActionSpec<ResourceDefinition> = {
  name: "create",
  access: "write",
  http: { method: "POST", status: 201 },
  path: base,
  summary: (resource) => `Create a ${label(resource)}`,
  inputs: (resource) => ({
    path: NO_PATH,
    query: [],
    body: jsonBody(
      () => inputSchema(shapeOrFail(resource.create, "create")),
      () => exampleBody(shapeOrFail(resource.create, "create")),
    ),
  }),
  message: (resource, input) => createMessage(resource, input.body),
  fingerprint: (input) => input.body,
  bodyShape: (resource) => resource.create,
  decode: (resource, message) => decodeRecord(resource, message, false),
  response: recordSchema,
};

const update: ActionSpec<ResourceDefinition> = {
  name: "update",
  access: "write",
  http: { method: "POST", status: 200 },
  path: (resource) => `${base(resource)}/:id`,
  summary: (resource) => `Update a ${label(resource)}`,
  inputs: (resource) => ({
    path: ID_PATH,
    query: [],
    body: jsonBody(
      () => inputSchema(shapeOrFail(resource.update, "update"), { omit: OMIT_ID }),
      () => {
        const { id: _id, ...body } = exampleBody(shapeOrFail(resource.update, "update"));
        return { ...body, revisionNumber: "1700000000" };
      },
    ),
  }),
  // Spec "Update", rules 2–5: a line array that is sent replaces that kind of line; when only some
  // arrays of one schema family are sent, the record is read first and the omitted arrays' lines are
  // kept by ID.
  readFirst(resource, input) {
    const shape = shapeOrFail(resource.update, "update");
    const body = input.body;
    const output = resource.output.fields;
    const arrays = lineFamilies(shape)
      .filter(
        (family) =>
          family.length > 1 &&
          family.some((f) => body[f.json] !== undefined) &&
          family.some((f) => body[f.json] === undefined),
      )
      .flatMap((family) =>
        family
          .filter((f) => body[f.json] === undefined)
          .map((f) => ({
            input: f.json,
            output: output.find((o) => o.slot.name === f.slot.name.replace(/Mod$/, "Ret"))?.json ?? f.json,
          })),
      );
    return arrays.length > 0 ? { arrays } : null;
  },
  message: (resource, input, context) => updateMessage(resource, idOf(input), input.body, context.kept),
  fingerprint: withBody,
  bodyShape: (resource) => resource.update,
  decode: (resource, message) => decodeRecord(resource, message, true),
  response: recordSchema,
};

/** Upsert by key (issue 27, decision 0046): one Request of several message sets (typed/upsert.ts). */
const upsert: ActionSpec<ResourceDefinition> = {
  name: "upsert",
  access: "write",
  http: { method: "PUT", status: 200 },
  path: (resource) => `${base(resource)}/by-key`,
  summary: (resource) => `Create or update a ${label(resource)} found by key`,
  inputs: (resource) => ({
    path: NO_PATH,
    query: [],
    body: jsonBody(
      () => upsertBodySchema(resource),
      () => upsertExample(resource),
    ),
  }),
  program: (_resource, input) => firstProgram(input.body as unknown as UpsertBody),
  message: (resource, input) => messageOf(resource, firstProgram(input.body as unknown as UpsertBody)),
  fingerprint: (input) => input.body,
  bodyShape: (resource) => resource.create,
  decode(resource, message, request) {
    const program = upsertProgramOf(request.program);
    if (!program) throw new ServiceError("INTERNAL_ERROR", { message: "An upsert without its program." });
    return decodeUpsert(resource, program, message);
  },
  async finish(resource, context, request, result) {
    const program = upsertProgramOf(request.program);
    if (!program) throw new ServiceError("INTERNAL_ERROR", { message: "An upsert without its program." });
    const answer = result as UpsertAnswer;
    const indexed =
      "externalId" in program.key && answer.phase === "find" && request.end_user_id
        ? await findExternalId(context.db, request.end_user_id, resource.entry.path, program.key.externalId)
        : null;
    let step: UpsertStep;
    try {
      step = nextOf(resource, program, answer, indexed);
    } catch (error) {
      if (error instanceof ServiceError) return { ok: false, error: error as ServiceError };
      throw error;
    }
    if (step.kind === "done") return { ok: true, result: step.result, warnings: [] };
    const found = "found" in answer ? answer.found : null;
    return {
      ok: true,
      result: null,
      warnings: [],
      next: {
        document: messageSet([step.message]),
        program: step.program,
        writeTargets: step.program.phase === "update" && found ? [found.id] : null,
        detail: step.detail,
      },
    };
  },
  response: (resource, components) => ({
    type: "object",
    required: ["objectType", "action", "data"],
    properties: {
      objectType: { type: "string", const: "upsert" },
      action: {
        type: "string",
        enum: ["created", "updated"],
        description:
          "`created`: no record had the key, one was added; `updated`: the record with the key was modified.",
      },
      data: recordSchema(resource, components),
    },
  }),
};

const del: ActionSpec<ResourceDefinition> = {
  name: "delete",
  access: "write",
  http: { method: "DELETE", status: 200 },
  path: (resource) => `${base(resource)}/:id`,
  summary: (resource) => `Delete a ${label(resource)} (permanent; needs confirm=true)`,
  inputs: () => ({
    path: ID_PATH,
    query: [confirmParam],
    body: EMPTY,
  }),
  message: (resource, input) => deleteMessage(resource, idOf(input)),
  fingerprint: byId,
  decode: (resource, message) => decodeDelete(resource, message),
  response: (resource) =>
    summarySchema(
      resource,
      resource.entry.kind === "transaction"
        ? { refNumber: { type: ["string", "null"] }, deleted: { type: "boolean", const: true } }
        : {
            fullName: { type: ["string", "null"] },
            deletedAt: { type: ["string", "null"] },
            deleted: { type: "boolean", const: true },
          },
    ),
};

const voidAction: ActionSpec<ResourceDefinition> = {
  name: "void",
  access: "write",
  http: { method: "POST", status: 200 },
  path: (resource) => `${base(resource)}/:id/void`,
  summary: (resource) => `Void a ${label(resource)}`,
  inputs: () => ({ path: ID_PATH, query: [], body: EMPTY }),
  message: (resource, input) => voidMessage(resource, idOf(input)),
  fingerprint: byId,
  decode: (resource, message) => decodeVoid(resource, message),
  response: (resource) =>
    summarySchema(resource, {
      createdAt: { type: ["string", "null"] },
      updatedAt: { type: ["string", "null"] },
      refNumber: { type: ["string", "null"] },
      voided: { type: "boolean", const: true },
    }),
};

const mergeBody = z.strictObject({
  revisionNumber: text({ max: 16, min: 1 }).schema,
  mergeIntoId: id().schema,
  mergeIntoRevisionNumber: text({ max: 16, min: 1 }).schema,
  allowDifferentShippingAddresses: z.boolean().optional(),
});

const merge: ActionSpec<ResourceDefinition> = {
  name: "merge",
  access: "write",
  http: { method: "POST", status: 200 },
  path: (resource) => `${base(resource)}/:id/merge`,
  summary: (resource) => `Merge a ${label(resource)} into another (the first is deleted)`,
  inputs: () => ({
    path: ID_PATH,
    query: [],
    body: jsonBody(
      () => mergeBody,
      () => ({
        revisionNumber: "1700000000",
        mergeIntoId: "80000002-1700000000",
        mergeIntoRevisionNumber: "1700000000",
      }),
    ),
  }),
  message: (resource, input) => mergeMessage(resource, idOf(input), input.body as unknown as MergeBody),
  fingerprint: withBody,
  decode: (resource, message) => decodeMerge(resource, message),
  response: (resource) =>
    summarySchema(resource, {
      fullName: { type: ["string", "null"] },
      mergedFrom: { type: ["object", "null"] },
    }),
};

/** A custom field's name (spec: "up to 31 characters") and value, as body text fields. */
const customFieldName = text({ max: 31, min: 1 });
const customFieldValue = text({ max: 4095 });

const customFieldBody = z
  .strictObject({
    operation: z.enum(["add", "update", "delete"]),
    ownerId: ownerIdKind.schema.default(PUBLIC_OWNER_ID),
    // Text kinds (spec "Conventions"): composed to NFC, characters outside the application's code
    // page refused as UNSUPPORTED_CHARACTER, over-long text as STRING_TOO_LONG, before anything is
    // written (issue 25: any string was sent on as it came).
    name: customFieldName.schema,
    value: customFieldValue.schema.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.operation === "delete" && body.value !== undefined) {
      ctx.addIssue({ code: "custom", message: "`value` is not sent with `delete`.", path: ["value"] });
    } else if (body.operation !== "delete" && body.value === undefined) {
      ctx.addIssue({ code: "custom", message: "`value` is required.", path: ["value"] });
    }
  });

const setCustomField: ActionSpec<ResourceDefinition> = {
  name: "setCustomField",
  access: "write",
  http: { method: "POST", status: 200 },
  path: (resource) => `${base(resource)}/:id/custom-fields`,
  summary: (resource) => `Set a custom field of a ${label(resource)}`,
  inputs: () => ({
    path: ID_PATH,
    query: [],
    body: jsonBody(
      () => customFieldBody,
      () => ({ operation: "update", name: "Colour", value: "Blue" }),
    ),
  }),
  message: (resource, input) =>
    customFieldMessage(resource, idOf(input), input.body as unknown as CustomFieldBody),
  fingerprint: withBody,
  decode: (_resource, message) => decodeCustomField(message),
  response: () => ({
    type: "object",
    properties: {
      objectType: { type: "string", const: "ledger_custom_field_value" },
      ownerId: { type: ["string", "null"] },
      name: { type: ["string", "null"] },
      type: { type: ["string", "null"] },
      value: { type: ["string", "null"] },
    },
  }),
};

const canBuild: ActionSpec<ResourceDefinition> = {
  name: "canBuild",
  access: "read",
  http: { method: "GET", status: 200 },
  path: (resource) => `${base(resource)}/:id/can-build`,
  summary: (resource) => `How many of an ${label(resource)} the components on hand allow building`,
  inputs: () => ({
    path: ID_PATH,
    // The application's query requires the date (as bills to pay require their vendor).
    query: [
      {
        name: "transactionDate",
        kind: dateParam,
        array: false,
        required: true,
        description: "The date to count the components on hand at.",
      },
    ],
    body: NONE,
  }),
  message: (resource, input) =>
    canBuildMessage(resource, idOf(input), dateParam.toXml(input.query.get("transactionDate"))),
  fingerprint: () => null,
  decode: (resource, message) => decodeCanBuild(resource, message),
  response: (resource, components) =>
    outputSchemaRef(canBuildShape(resource), components, CAN_BUILD_OBJECT_TYPE),
};

const report: ActionSpec<ReportKind> = {
  name: "report",
  access: "read",
  http: { method: "GET", status: 200 },
  path: (kind) => `${LEDGER_BASE}/reports/${kind.path}`,
  summary: (kind) => `Run a ${kind.path.replace(/-/g, " ")} report`,
  inputs: (kind) => {
    const filters = reportFilters(kind).params.map((p) => (p.slot.min > 0 ? { ...p, required: true } : p));
    return { path: NO_PATH, query: filters, body: NONE, filters };
  },
  message: (kind, input) => reportMessage(kind, input.query),
  fingerprint: () => null,
  decode: (kind, message) => decodeReport(kind, message),
  response: (_kind, components) => {
    components.ledger_report ??= reportRecordSchema();
    return { $ref: "#/components/schemas/ledger_report" };
  },
};

// ---------------------------------------------------------------------------------------------
// custom field definitions: a group whose messages follow no generic pattern (catalogue `actionSet`)

const definitionList: ActionSpec<ResourceDefinition> = {
  name: "list",
  access: "read",
  http: { method: "GET", status: 200 },
  path: base,
  summary: () => "List custom field definitions",
  inputs: () => ({
    path: NO_PATH,
    query: [
      {
        name: "ownerIds",
        kind: definitions.ownerKind,
        array: true,
        description:
          "Owners whose definitions to list: `0` (public fields, the default) or applications' GUIDs.",
      },
    ],
    body: NONE,
  }),
  paging: () => "single",
  message: (_resource, input) => definitions.listMessage((input.query.get("ownerIds") as string[]) ?? []),
  fingerprint: () => null,
  decode: (_resource, message) => {
    const { data, warnings } = definitions.decodeDefinitions(message);
    const page: ListPage = {
      data,
      iteratorId: null,
      remaining: null,
      requestId: null,
      iteratorLost: false,
    };
    return { result: page, warnings };
  },
  finish: (resource, context, request, result) => finishListPage(resource, context, request, result),
  response: (_resource, components) => listEnvelope(definitions.definitionSchema(components)),
};

const definitionCreate: ActionSpec<ResourceDefinition> = {
  name: "create",
  access: "write",
  http: { method: "POST", status: 201 },
  path: base,
  summary: () => "Create a custom field definition",
  inputs: () => ({
    path: NO_PATH,
    query: [],
    body: jsonBody(definitions.createBody, () => definitions.CREATE_EXAMPLE),
  }),
  message: (_resource, input) => definitions.createMessage(input.body),
  fingerprint: (input) => input.body,
  decode: (_resource, message) => definitions.decodeDefinition(message),
  response: (_resource, components) => definitions.definitionSchema(components),
};

const definitionUpdate: ActionSpec<ResourceDefinition> = {
  name: "update",
  access: "write",
  http: { method: "POST", status: 200 },
  path: (resource) => `${base(resource)}/:id`,
  summary: () => "Update a custom field definition (the path names its current name)",
  inputs: () => ({
    path: ID_PATH,
    query: [],
    body: jsonBody(definitions.updateBody, () => definitions.UPDATE_EXAMPLE),
  }),
  message: (_resource, input) => definitions.updateMessage(idOf(input), input.body),
  fingerprint: withBody,
  decode: (_resource, message) => definitions.decodeDefinition(message),
  response: (_resource, components) => definitions.definitionSchema(components),
};

const definitionDelete: ActionSpec<ResourceDefinition> = {
  name: "delete",
  access: "write",
  http: { method: "DELETE", status: 200 },
  path: (resource) => `${base(resource)}/:id`,
  summary: () => "Delete a custom field definition (permanent; needs confirm=true)",
  inputs: () => ({
    path: ID_PATH,
    query: [
      confirmParam,
      {
        name: "ownerId",
        kind: definitions.ownerKind,
        array: false,
        description: "The definition's owner: `0` (a public field, the default) or an application's GUID.",
      },
    ],
    body: EMPTY,
  }),
  message: (_resource, input) =>
    definitions.deleteMessage(String(input.query.get("ownerId") ?? PUBLIC_OWNER_ID), idOf(input)),
  fingerprint: (input) => ({ id: input.id, ownerId: input.query.get("ownerId") ?? PUBLIC_OWNER_ID }),
  decode: (_resource, message) => definitions.decodeDeleted(message),
  response: () => definitions.deletedSchema(),
};

/**
 * Action sets of groups whose messages follow no generic pattern, by the catalogue's `actionSet`:
 * each replaces the generic action of the same name for that group.
 */
const GROUP_ACTIONS: Readonly<
  Record<
    NonNullable<ResourceDefinition["actionSet"]>,
    Partial<Record<ResourceActionName, ActionSpec<ResourceDefinition>>>
  >
> = {
  customFieldDefinitions: {
    list: definitionList,
    create: definitionCreate,
    update: definitionUpdate,
    delete: definitionDelete,
  },
};

/** The actions of typed resources, by name (data: read by routes, OpenAPI, the core and batch). */
export const RESOURCE_ACTIONS = {
  list,
  retrieve,
  create,
  update,
  upsert,
  delete: del,
  void: voidAction,
  merge,
  setCustomField,
  canBuild,
} as const satisfies Record<string, ActionSpec<ResourceDefinition>>;

export type ResourceActionName = keyof typeof RESOURCE_ACTIONS;

/** The action `action` of `resource`: its group's own, or the generic one. */
export function actionSpecOf(
  resource: ResourceDefinition,
  action: ResourceActionName,
): ActionSpec<ResourceDefinition> {
  return (
    (resource.actionSet ? GROUP_ACTIONS[resource.actionSet][action] : undefined) ?? RESOURCE_ACTIONS[action]
  );
}

/** The report action (one operation per report kind). */
export const REPORT_ACTION: ActionSpec<ReportKind> = report;

/**
 * The HTTP shape of an action the market offers for a group but the application cannot do: its
 * route answers LEDGER_OPERATION_UNSUPPORTED (see operations.ts `unsupportedOperations`).
 */
export function actionPath(resource: ResourceDefinition, action: ResourceActionName): string {
  return RESOURCE_ACTIONS[action].path(resource);
}

/** Throws the error of an operation the application cannot do. */
export function unsupportedError(resource: ResourceDefinition, action: string): ServiceError {
  const alternatives = resource.actions
    .filter((a) => a !== "list" && a !== "retrieve")
    .map((a) => `${resource.operationPrefix}.${a}`);
  return new ServiceError("LEDGER_OPERATION_UNSUPPORTED", {
    details: { alternatives },
    message: `The application has no ${action} for ${resource.entry.path}; see \`details.alternatives\`.`,
  });
}
