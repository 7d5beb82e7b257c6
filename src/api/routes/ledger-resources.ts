import { APPLICATION_HEADERS, APPLICATION_WRITE_HEADERS } from "../app-headers.ts";
import { z } from "zod";
import { ServiceError } from "../../errors/service-error.ts";
import {
  newCursorId,
  resumeCursor,
  startCursor,
  CURSOR_PAGE_SIZE_MAX,
  pageRequestId,
} from "../../ledger/cursors.ts";
import {
  reportOperations,
  typedOperations,
  type ReportOperation,
  type TypedOperation,
} from "../../ledger/operations.ts";
import { reportFilters, reportMessage } from "../../ledger/reports.ts";
import { allResources, type ResourceDefinition } from "../../ledger/resources/definitions.ts";
import { outputSchemaRef, type JsonSchema } from "../../ledger/resources/json-schema.ts";
import type { Shape } from "../../ledger/resources/shape.ts";
import {
  createMessage,
  customFieldMessage,
  deleteMessage,
  lineFamilies,
  mergeMessage,
  retrieveMessage,
  updateMessage,
  voidMessage,
  type CustomFieldBody,
  type MergeBody,
} from "../../ledger/typed/actions.ts";
import { listFilters, parseParam, type FilterParam, type ParamValue } from "../../ledger/typed/filters.ts";
import { inputSchema } from "../../ledger/typed/input.ts";
import { inSchemaOrder } from "../../ledger/typed/list-query.ts";
import { exampleBody } from "../../ledger/resources/examples.ts";
import { newerFieldPath } from "../../ledger/typed/versions.ts";
import { HIGHEST_XML_VERSION, messageSet } from "../../ledger/xml/message-set.ts";
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import { messageProblem } from "../../ledger/xml/validate-tree.ts";
import { DEFAULT_TIMEOUT_SECONDS, parseCallOptions, type CallOptions } from "../../requests/call-options.ts";
import { submit } from "../../requests/submit.ts";
import { SERVICE_OWNER_ID } from "../../tenancy/auth-sessions.ts";
import type { ConnectionRow } from "../../store/connections.ts";
import { runApplicationOperation } from "../application.ts";
import { defineRoute, type RouteContext, type RouteDefinition, type RouteResult } from "../route.ts";

/**
 * Every typed operation's route, generated from the operation table (house style §2.3: no
 * per-resource handler code). Each handler validates its input with the resource's shapes, writes
 * the message with the generic writer, checks it against the request schema and submits it as a
 * Request; the generic decoders read the answer on whichever instance receives it.
 */
const BASE = "/v1/ledger-desktop";

const APP_HEADERS = APPLICATION_HEADERS;
const WRITE_HEADERS = APPLICATION_WRITE_HEADERS;

type Ctx = RouteContext<unknown, unknown>;

interface TypedCall {
  operation: TypedOperation | ReportOperation;
  message: XmlElement;
  isWrite: boolean;
  fingerprintBody: unknown;
  status?: number;
  /** JSON path of a field that needs the newer message version, when the body uses one. */
  newerField?: string | null;
  beforeQueue?: (connection: ConnectionRow | null) => Promise<void>;
  options?: CallOptions;
}

/** A message the engine wrote that the schema refuses is a bug in a definition, never the caller's fault. */
function checkMessage(message: XmlElement): void {
  const problem = messageProblem(ledgerSchema(), message);
  if (problem) {
    throw new ServiceError("INTERNAL_ERROR", {
      cause: new Error(`typed message refused by the schema: ${problem}`),
    });
  }
}

function versionCheck(
  path: string | null | undefined,
): ((connection: ConnectionRow | null) => Promise<void>) | undefined {
  if (!path) return undefined;
  return async (connection) => {
    const version = connection?.xml_version;
    if (version && Number.parseFloat(version) < Number.parseFloat(HIGHEST_XML_VERSION)) {
      throw new ServiceError("LEDGER_FIELD_UNSUPPORTED_BY_VERSION", {
        param: path,
        details: { minimumXmlVersion: HIGHEST_XML_VERSION, xmlVersion: version },
        message: `\`${path}\` needs message version ${HIGHEST_XML_VERSION}; this company file's application speaks ${version}.`,
      });
    }
  };
}

async function run(ctx: Ctx, call: TypedCall): Promise<RouteResult> {
  checkMessage(call.message);
  const { deps, principal, request, reply } = ctx;
  const options =
    call.options ?? parseCallOptions(request.headers, { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS });
  const checks = [versionCheck(call.newerField), call.beforeQueue].filter((c) => c !== undefined);
  return runApplicationOperation(
    deps,
    request,
    {
      principal,
      operationId: call.operation.operationId,
      method: request.method,
      path: request.url.split("?")[0] ?? request.url,
      isWrite: call.isWrite,
      document: messageSet([call.message]),
      fingerprintBody: call.fingerprintBody,
      options,
      ...(checks.length > 0
        ? {
            beforeQueue: async (connection: ConnectionRow | null) => {
              for (const check of checks) await check(connection);
            },
          }
        : {}),
    },
    (result) => ({ status: call.status ?? 200, body: result }),
    reply,
  );
}

const idParam = (ctx: Ctx): string => {
  const id = ctx.params.id ?? "";
  if (id.length < 1 || id.length > 36) {
    throw new ServiceError("LEDGER_OBJECT_NOT_FOUND", {
      param: "id",
      message: "No record with this ID exists.",
    });
  }
  return id;
};

const OMIT_ID: ReadonlySet<string> = new Set(["id"]);

const confirmQuery = z.strictObject({
  confirm: z.literal("true", { error: "`confirm` must be `true`: deleting is permanent." }),
});

const mergeBody = z.strictObject({
  revisionNumber: z.string().min(1).max(16),
  mergeIntoId: z.string().min(1).max(36),
  mergeIntoRevisionNumber: z.string().min(1).max(16),
  allowDifferentShippingAddresses: z.boolean().optional(),
});

const customFieldBody = z
  .strictObject({
    operation: z.enum(["add", "update", "delete"]),
    ownerId: z
      .string()
      .max(38)
      .refine((value) => value.toUpperCase() !== SERVICE_OWNER_ID, {
        error: "This owner is reserved by the service.",
      })
      .default("0"),
    name: z.string().min(1).max(31),
    value: z.string().max(4095).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.operation === "delete" && body.value !== undefined) {
      ctx.addIssue({ code: "custom", message: "`value` is not sent with `delete`.", path: ["value"] });
    } else if (body.operation !== "delete" && body.value === undefined) {
      ctx.addIssue({ code: "custom", message: "`value` is required.", path: ["value"] });
    }
  });

/** The query of a list: filters, plus `limit` and `cursor` where the group pages. */
function listQuerySchema(resource: ResourceDefinition): z.ZodType {
  const raw = z.union([z.string(), z.array(z.string())]).optional();
  const entries: Record<string, z.ZodType> = {};
  for (const param of listFilters(resource).params) entries[param.name] = raw.describe(param.description);
  if (resource.queryElements.has("MaxReturned")) entries.limit = raw.describe("Page size (1 to 150).");
  if (resource.pages) entries.cursor = raw.describe("The `nextCursor` of the latest page.");
  return z.strictObject(entries);
}

async function list(ctx: Ctx, operation: TypedOperation): Promise<RouteResult> {
  const resource = operation.resource;
  const query = (ctx.query ?? {}) as Record<string, unknown>;
  const filters = listFilters(resource);
  const values = parseQueryValues(filters.params, query);
  const limit =
    query.limit === undefined
      ? null
      : (parseParam(
          { name: "limit", kind: { type: "integer", min: 1, max: CURSOR_PAGE_SIZE_MAX }, array: false },
          query.limit,
        ) as number);
  const cursorToken =
    query.cursor === undefined
      ? null
      : parseParam({ name: "cursor", kind: { type: "text", max: 200 }, array: false }, query.cursor);
  const options = parseCallOptions(ctx.request.headers, { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS });
  const requestName = resource.queryRequest;
  const includeDefaults: XmlElement[] = [];
  if (resource.queryElements.has("IncludeLineItems") && !values.has("includeLineItems")) {
    includeDefaults.push(leaf("IncludeLineItems", "true"));
  }

  if (typeof cursorToken === "string") {
    const resumption = await resumeCursor(ctx.deps.db, {
      tenant: ctx.principal,
      endUserId: options.endUserId,
      operationId: operation.operationId,
      token: cursorToken,
      filters: Object.fromEntries(values),
      nowMs: ctx.deps.clock.now(),
    });
    if (resumption.kind === "repeat") return { body: resumption.result };
    const { cursor, page } = resumption;
    const stored = new Map(Object.entries(cursor.filters) as [string, ParamValue][]);
    const message = node(
      requestName,
      inSchemaOrder(requestName, [
        ...filters.build(stored),
        leaf("MaxReturned", String(limit ?? cursor.page_size)),
        ...(stored.has("includeLineItems") ? [] : includeDefaults),
      ]),
      [
        ["requestID", pageRequestId(cursor.id, page)],
        ["iterator", "Continue"],
        ["iteratorID", cursor.iterator_id ?? ""],
      ],
    );
    return run(ctx, { operation, message, isWrite: false, fingerprintBody: null, options });
  }

  const usesIdList = ["ids", "fullNames", "names", "refNumbers"].some((name) => values.has(name));
  const paged = resource.pages && !usesIdList && resource.queryElements.has("MaxReturned");
  const children = [...filters.build(values), ...includeDefaults];
  if (!usesIdList && resource.queryElements.has("MaxReturned") && (paged || limit !== null)) {
    children.push(leaf("MaxReturned", String(limit ?? CURSOR_PAGE_SIZE_MAX)));
  }
  if (!paged) {
    const message = node(requestName, inSchemaOrder(requestName, children));
    return run(ctx, { operation, message, isWrite: false, fingerprintBody: null, options });
  }
  const cursorId = newCursorId();
  const message = node(requestName, inSchemaOrder(requestName, children), [
    ["requestID", pageRequestId(cursorId, 1)],
    ["iterator", "Start"],
  ]);
  const pageSize = limit ?? CURSOR_PAGE_SIZE_MAX;
  return run(ctx, {
    operation,
    message,
    isWrite: false,
    fingerprintBody: null,
    options,
    beforeQueue: async (connection) => {
      if (!connection) return;
      await startCursor(ctx.deps.db, {
        id: cursorId,
        tenant: ctx.principal,
        endUserId: options.endUserId,
        connectionId: connection.id,
        operationId: operation.operationId,
        filters: Object.fromEntries(values),
        pageSize,
        nowMs: ctx.deps.clock.now(),
      });
    },
  });
}

/**
 * Update (spec "Update", rules 2–5): a line array that is sent replaces that kind of line; when only
 * some arrays of one schema family are sent, the record is read first (a separate Request) and the
 * omitted arrays' lines are kept by ID.
 */
async function update(ctx: Ctx, operation: TypedOperation): Promise<RouteResult> {
  const resource = operation.resource;
  const id = idParam(ctx);
  const body = ctx.body as Record<string, unknown>;
  const shape = resource.update;
  if (!shape) throw new ServiceError("INTERNAL_ERROR");
  const partial = lineFamilies(shape).filter(
    (family) =>
      family.length > 1 &&
      family.some((f) => body[f.json] !== undefined) &&
      family.some((f) => body[f.json] === undefined),
  );
  let kept: Record<string, string[]> = {};
  if (partial.length > 0) {
    const current = await readCurrent(ctx, resource, id);
    const output = resource.output.fields;
    kept = Object.fromEntries(
      partial.flatMap((family) =>
        family
          .filter((f) => body[f.json] === undefined)
          .map((f) => {
            const outputName =
              output.find((o) => o.slot.name === f.slot.name.replace(/Mod$/, "Ret"))?.json ?? f.json;
            const lines = (current[outputName] ?? []) as { id: string }[];
            return [f.json, lines.map((line) => line.id)];
          }),
      ),
    );
  }
  return run(ctx, {
    operation,
    message: updateMessage(resource, id, body, kept),
    isWrite: true,
    fingerprintBody: { id, body },
    newerField: newerFieldPath(shape, body),
  });
}

/** The separate read before a partial line update: a Request of its own, waited for synchronously. */
async function readCurrent(
  ctx: Ctx,
  resource: ResourceDefinition,
  id: string,
): Promise<Record<string, unknown>> {
  const options = parseCallOptions(ctx.request.headers, { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS });
  const message = retrieveMessage(resource, id);
  checkMessage(message);
  const outcome = await submit(ctx.deps, {
    principal: ctx.principal,
    operationId: `${resource.operationPrefix}.retrieve`,
    method: "GET",
    path: `${BASE}/${resource.entry.path}/${id}`,
    isWrite: false,
    document: messageSet([message]),
    fingerprintBody: null,
    options: { ...options, async: false, idempotencyKey: null },
  });
  const row = outcome.row;
  if (outcome.kind === "settled" && row.status === "succeeded") return row.result as Record<string, unknown>;
  if (outcome.kind === "timeout_sent")
    throw new ServiceError("LEDGER_REQUEST_TIMEOUT", { details: { requestId: row.id } });
  const stored = row.error as { code?: string; message?: string } | null;
  throw new ServiceError("LEDGER_REQUEST_ERROR", {
    message: `Reading the record before the update failed: ${stored?.message ?? stored?.code ?? row.status}`,
  });
}

/** A query parameter's JSON Schema from its kind (repeated keys for arrays). */
function paramSchema(param: Pick<FilterParam, "kind" | "array">): JsonSchema {
  const kind = param.kind;
  const single: JsonSchema =
    kind.type === "enum"
      ? { type: "string", enum: kind.values }
      : kind.type === "boolean"
        ? { type: "boolean" }
        : kind.type === "integer"
          ? { type: "integer", minimum: kind.min, maximum: kind.max }
          : kind.type === "date"
            ? { type: "string", format: "date" }
            : kind.type === "text"
              ? { type: "string", maxLength: kind.max }
              : kind.type === "id"
                ? { type: "string", maxLength: 36 }
                : { type: "string" };
  return param.array ? { type: "array", items: single, minItems: 1, maxItems: 100 } : single;
}

function listParameters(
  resource: ResourceDefinition,
): NonNullable<NonNullable<RouteDefinition["openapi"]>["queryParameters"]> {
  const params = listFilters(resource).params.map((p) => ({
    name: p.name,
    required: false,
    description: p.description,
    schema: paramSchema(p),
  }));
  if (resource.queryElements.has("MaxReturned")) {
    params.push({
      name: "limit",
      required: false,
      description: "Page size, 1 to 150 (default 150).",
      schema: { type: "integer", minimum: 1, maximum: CURSOR_PAGE_SIZE_MAX },
    });
  }
  if (resource.pages) {
    params.push({
      name: "cursor",
      required: false,
      description: "The `nextCursor` of the latest page.",
      schema: { type: "string", maxLength: 200 },
    });
  }
  return params;
}

/** The OpenAPI fragments of a typed operation: shared record components, request and response bodies. */
function openapiOf(operation: TypedOperation): NonNullable<RouteDefinition["openapi"]> {
  const resource = operation.resource;
  const components: Record<string, JsonSchema> = {};
  const record = (): JsonSchema => {
    const refs = [...resource.records.entries()].map(([name, r]) =>
      outputSchemaRef(r.shape, components, name === resource.ret ? resource.entry.objectType : r.objectType),
    );
    return refs.length === 1 && refs[0] ? refs[0] : { oneOf: refs };
  };
  const input = (shape: Shape | null, suffix: string, options = {}): JsonSchema | undefined => {
    if (!shape) return undefined;
    const name = `${resource.entry.objectType}_${suffix}`;
    components[name] = z.toJSONSchema(inputSchema(shape, options), {
      io: "input",
      unrepresentable: "any",
    });
    delete components[name].$schema;
    return { $ref: `#/components/schemas/${name}` };
  };
  const summaryOf = (extra: JsonSchema): JsonSchema => ({
    type: "object",
    properties: {
      id: { type: ["string", "null"] },
      objectType: { type: "string", const: resource.entry.objectType },
      ...extra,
    },
  });
  switch (operation.action) {
    case "list":
      return {
        components,
        queryParameters: listParameters(resource),
        responseBody: {
          type: "object",
          properties: {
            objectType: { type: "string", const: "list" },
            url: { type: "string" },
            data: { type: "array", items: record() },
            nextCursor: { type: ["string", "null"] },
            hasMore: { type: "boolean" },
            remainingCount: { type: ["integer", "null"] },
            cursorExpiresAt: { type: ["string", "null"], format: "date-time" },
          },
          required: [
            "objectType",
            "url",
            "data",
            "nextCursor",
            "hasMore",
            "remainingCount",
            "cursorExpiresAt",
          ],
        },
      };
    case "retrieve":
      return { components, responseBody: record() };
    case "create": {
      const requestBody = input(resource.create, "create");
      return { components, responseBody: record(), ...(requestBody ? { requestBody } : {}) };
    }
    case "update": {
      const requestBody = input(resource.update, "update", { omit: OMIT_ID });
      return { components, responseBody: record(), ...(requestBody ? { requestBody } : {}) };
    }
    case "delete":
      return {
        components,
        responseBody: summaryOf(
          resource.entry.kind === "transaction"
            ? { refNumber: { type: ["string", "null"] }, deleted: { type: "boolean", const: true } }
            : {
                fullName: { type: ["string", "null"] },
                deletedAt: { type: ["string", "null"] },
                deleted: { type: "boolean", const: true },
              },
        ),
      };
    case "void":
      return {
        components,
        responseBody: summaryOf({
          createdAt: { type: ["string", "null"] },
          updatedAt: { type: ["string", "null"] },
          refNumber: { type: ["string", "null"] },
          voided: { type: "boolean", const: true },
        }),
      };
    case "merge":
      return {
        components,
        responseBody: summaryOf({
          fullName: { type: ["string", "null"] },
          mergedFrom: { type: ["object", "null"] },
        }),
      };
    case "setCustomField":
      return {
        components,
        responseBody: {
          type: "object",
          properties: {
            objectType: { type: "string", const: "ledger_custom_field_value" },
            ownerId: { type: ["string", "null"] },
            name: { type: ["string", "null"] },
            type: { type: ["string", "null"] },
            value: { type: ["string", "null"] },
          },
        },
      };
  }
}

function routeFor(operation: TypedOperation): RouteDefinition {
  return withOpenApi(routeWithoutDocs(operation), () => openapiOf(operation));
}

/** Attaches OpenAPI fragments computed on first use (building them all costs time at start-up). */
function withOpenApi(
  route: RouteDefinition,
  build: () => NonNullable<RouteDefinition["openapi"]>,
): RouteDefinition {
  let built: RouteDefinition["openapi"];
  return Object.defineProperty(route, "openapi", {
    get: () => (built ??= build()),
    enumerable: true,
  });
}

function routeWithoutDocs(operation: TypedOperation): RouteDefinition {
  const resource = operation.resource;
  const base = `${BASE}/${resource.entry.path}`;
  const tag = resource.entry.resource;
  const common = { operationId: operation.operationId, tag, pathParams: [] as string[] };
  const name = resource.entry.objectType.replace(/^ledger_/, "").replace(/_/g, " ");
  switch (operation.action) {
    case "list":
      return defineRoute<undefined, unknown>({
        ...common,
        method: "GET",
        url: base,
        summary: `List ${resource.entry.path.replace(/-/g, " ")}`,
        get query() {
          return listQuerySchema(resource);
        },
        headers: APP_HEADERS,
        response: { status: 200, description: "A list envelope" },
        handler: (ctx) => list(ctx, operation),
      });
    case "retrieve":
      if (resource.entry.singleton) {
        return defineRoute({
          ...common,
          method: "GET",
          url: base,
          summary: `Retrieve the ${name}`,
          headers: APP_HEADERS,
          response: { status: 200, description: `The ${name}` },
          handler: (ctx) =>
            run(ctx as Ctx, {
              operation,
              message: retrieveMessage(resource, ""),
              isWrite: false,
              fingerprintBody: null,
            }),
        });
      }
      return defineRoute({
        ...common,
        method: "GET",
        url: `${base}/:id`,
        pathParams: ["id"],
        summary: `Retrieve a ${name}`,
        headers: APP_HEADERS,
        response: { status: 200, description: `The ${name}` },
        handler: (ctx) =>
          run(ctx as Ctx, {
            operation,
            message: retrieveMessage(resource, idParam(ctx as Ctx)),
            isWrite: false,
            fingerprintBody: null,
          }),
      });
    case "create": {
      const shape = (): Shape => {
        if (!resource.create) throw new Error(`${operation.operationId}: no create shape`);
        return resource.create;
      };
      return defineRoute<Record<string, unknown>, undefined>({
        ...common,
        method: "POST",
        url: base,
        summary: `Create a ${name}`,
        write: true,
        idempotency: "request",
        // Derived on first use (start-up would otherwise build every shape).
        get body() {
          return inputSchema(shape());
        },
        get examples() {
          return { minimal: exampleBody(shape()) };
        },
        headers: WRITE_HEADERS,
        response: { status: 201, description: `The created ${name}` },
        handler: (ctx) =>
          run(ctx, {
            operation,
            message: createMessage(resource, ctx.body),
            isWrite: true,
            fingerprintBody: ctx.body,
            status: 201,
            newerField: newerFieldPath(shape(), ctx.body),
          }),
      });
    }
    case "update": {
      return defineRoute<Record<string, unknown>, undefined>({
        ...common,
        method: "POST",
        url: `${base}/:id`,
        pathParams: ["id"],
        summary: `Update a ${name}`,
        write: true,
        idempotency: "request",
        get body() {
          if (!resource.update) throw new Error(`${operation.operationId}: no update shape`);
          return inputSchema(resource.update, { omit: OMIT_ID });
        },
        get examples() {
          if (!resource.update) throw new Error(`${operation.operationId}: no update shape`);
          const { id: _id, ...body } = exampleBody(resource.update);
          return { minimal: { ...body, revisionNumber: "1700000000" } };
        },
        headers: WRITE_HEADERS,
        response: { status: 200, description: `The updated ${name}` },
        handler: (ctx) => update(ctx, operation),
      });
    }
    case "delete":
      return defineRoute<undefined, { confirm: "true" }>({
        ...common,
        method: "DELETE",
        url: `${base}/:id`,
        pathParams: ["id"],
        summary: `Delete a ${name} (permanent; needs confirm=true)`,
        write: true,
        idempotency: "request",
        query: confirmQuery,
        headers: WRITE_HEADERS,
        response: { status: 200, description: "The deleted record's summary" },
        handler: (ctx) =>
          run(ctx, {
            operation,
            message: deleteMessage(resource, idParam(ctx)),
            isWrite: true,
            fingerprintBody: { id: ctx.params.id },
          }),
      });
    case "void":
      return defineRoute({
        ...common,
        method: "POST",
        url: `${base}/:id/void`,
        pathParams: ["id"],
        summary: `Void a ${name}`,
        write: true,
        idempotency: "request",
        headers: WRITE_HEADERS,
        response: { status: 200, description: "The voided record's summary" },
        handler: (ctx) =>
          run(ctx as Ctx, {
            operation,
            message: voidMessage(resource, idParam(ctx as Ctx)),
            isWrite: true,
            fingerprintBody: { id: ctx.params.id },
          }),
      });
    case "merge":
      return defineRoute<MergeBody, undefined>({
        ...common,
        method: "POST",
        url: `${base}/:id/merge`,
        pathParams: ["id"],
        summary: `Merge a ${name} into another (the first is deleted)`,
        write: true,
        idempotency: "request",
        body: mergeBody,
        examples: {
          minimal: {
            revisionNumber: "1700000000",
            mergeIntoId: "80000002-1700000000",
            mergeIntoRevisionNumber: "1700000000",
          },
        },
        headers: WRITE_HEADERS,
        response: { status: 200, description: "The merge result" },
        handler: (ctx) =>
          run(ctx, {
            operation,
            message: mergeMessage(resource, idParam(ctx), ctx.body),
            isWrite: true,
            fingerprintBody: { id: ctx.params.id, body: ctx.body },
          }),
      });
    case "setCustomField":
      return defineRoute<CustomFieldBody, undefined>({
        ...common,
        method: "POST",
        url: `${base}/:id/custom-fields`,
        pathParams: ["id"],
        summary: `Set a custom field of a ${name}`,
        write: true,
        idempotency: "request",
        body: customFieldBody,
        examples: { minimal: { operation: "update", name: "Colour", value: "Blue" } },
        headers: WRITE_HEADERS,
        response: { status: 200, description: "The custom field value" },
        handler: (ctx) =>
          run(ctx, {
            operation,
            message: customFieldMessage(resource, idParam(ctx), ctx.body),
            isWrite: true,
            fingerprintBody: { id: ctx.params.id, body: ctx.body },
          }),
      });
  }
}

/** The query schema of a parameter set: raw strings or repeated keys, checked per kind in the handler. */
function rawQuery(params: readonly { name: string; description: string }[]): z.ZodType {
  const raw = z.union([z.string(), z.array(z.string())]).optional();
  return z.strictObject(Object.fromEntries(params.map((p) => [p.name, raw.describe(p.description)])));
}

function parseQueryValues(
  params: readonly FilterParam[],
  query: Record<string, unknown>,
): Map<string, ParamValue> {
  const values = new Map<string, ParamValue>();
  for (const param of params) {
    if (query[param.name] !== undefined) values.set(param.name, parseParam(param, query[param.name]));
  }
  return values;
}

function reportRoute(operation: ReportOperation): RouteDefinition {
  const kind = operation.report;
  const route = defineRoute<undefined, unknown>({
    operationId: operation.operationId,
    tag: "reports",
    method: "GET",
    url: `${BASE}/reports/${kind.path}`,
    summary: `Run a ${kind.path.replace(/-/g, " ")} report`,
    get query() {
      return rawQuery(reportFilters(kind).params);
    },
    headers: APP_HEADERS,
    response: { status: 200, description: "A report" },
    handler: (ctx) => {
      const values = parseQueryValues(
        reportFilters(kind).params,
        (ctx.query ?? {}) as Record<string, unknown>,
      );
      return run(ctx, {
        operation,
        message: reportMessage(kind, values),
        isWrite: false,
        fingerprintBody: null,
      });
    },
  });
  return withOpenApi(route, () => ({
    queryParameters: reportFilters(kind).params.map((p) => ({
      name: p.name,
      required: p.slot.min > 0,
      description: p.description,
      schema: paramSchema(p),
    })),
    responseBody: { type: "object", properties: { objectType: { type: "string", const: "ledger_report" } } },
  }));
}

const ACTION_ROUTES: Readonly<Record<string, { method: "GET" | "POST" | "DELETE"; suffix: string }>> = {
  void: { method: "POST", suffix: "/:id/void" },
  update: { method: "POST", suffix: "/:id" },
  delete: { method: "DELETE", suffix: "/:id" },
  create: { method: "POST", suffix: "" },
};

/**
 * An action the market offers but the application cannot do (no request family in its schema):
 * 422 LEDGER_OPERATION_UNSUPPORTED naming what the group can do instead; nothing is queued.
 */
function unsupportedRoute(resource: ResourceDefinition, action: string): RouteDefinition | null {
  const route = ACTION_ROUTES[action];
  if (!route) return null;
  const alternatives = resource.actions
    .filter((a) => a !== "list" && a !== "retrieve")
    .map((a) => `${resource.operationPrefix}.${a}`);
  return defineRoute({
    operationId: `${resource.operationPrefix}.${action}`,
    tag: resource.entry.resource,
    method: route.method,
    url: `${BASE}/${resource.entry.path}${route.suffix}`,
    pathParams: route.suffix.includes(":id") ? ["id"] : [],
    summary: `Not supported by the application (answers LEDGER_OPERATION_UNSUPPORTED)`,
    write: true,
    idempotency: "request",
    headers: WRITE_HEADERS,
    response: { status: 422, description: "LEDGER_OPERATION_UNSUPPORTED with `details.alternatives`" },
    handler: () => {
      throw new ServiceError("LEDGER_OPERATION_UNSUPPORTED", {
        details: { alternatives },
        message: `The application has no ${action} for ${resource.entry.path}; see \`details.alternatives\`.`,
      });
    },
  });
}

/** Every typed operation's route, and the reports. */
export function ledgerResourceRoutes(): RouteDefinition[] {
  const unsupported = allResources().flatMap((resource) =>
    resource.unsupported.map((action) => unsupportedRoute(resource, action)).filter((r) => r !== null),
  );
  return [...typedOperations().map(routeFor), ...reportOperations().map(reportRoute), ...unsupported];
}
