import { z } from "zod";
import type { BodyRule } from "../../ledger/action-table.ts";
import {
  reportOperations,
  typedOperations,
  unsupportedOperations,
  type TypedOperation,
} from "../../ledger/operations.ts";
import type { JsonSchema } from "../../ledger/resources/json-schema.ts";
import { paramJsonSchema } from "../../ledger/typed/filters.ts";
import { DEFAULT_TIMEOUT_SECONDS, parseCallOptions } from "../../requests/call-options.ts";
import { prepareTypedCall, validateTypedInput } from "../../requests/typed-call.ts";
import { mirrorableGroups } from "../../mirror/groups.ts";
import { answerFromMirror, parseMaxStaleness } from "../../mirror/read.ts";
import { BATCH_PATH, batchBody, prepareBatch } from "../../requests/batch.ts";
import { BATCH_OPERATION, batchResponseSchema } from "../../ledger/batch.ts";
import { APPLICATION_HEADERS, APPLICATION_WRITE_HEADERS, MAX_STALENESS_HEADER_DOC } from "../app-headers.ts";
import { runApplicationOperation } from "../application.ts";
import { answeredBy } from "../server-timing.ts";
import { defineRoute, type RouteContext, type RouteDefinition, type RouteResult } from "../route.ts";

/**
 * Every typed operation's route, generated from the operation table (house style §2.3: no
 * per-resource handler code). A route only carries HTTP: it hands the path, query and body to the
 * typed-call core (requests/typed-call.ts), which validates them with the action table's inputs,
 * writes the message and returns the Submission; the request engine runs it.
 */
async function handle(ctx: RouteContext<unknown, unknown>, operation: TypedOperation): Promise<RouteResult> {
  const { deps, principal, request, reply } = ctx;
  const mirrored = await fromMirror(ctx, operation);
  if (mirrored) {
    answeredBy(request, "mirror");
    return mirrored;
  }
  const call = await prepareTypedCall(
    deps,
    operation,
    { pathParams: ctx.params, query: request.query, body: request.body },
    {
      principal,
      call: parseCallOptions(request.headers, { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS }),
    },
  );
  if (call.kind === "answer") return { status: call.status, body: call.result };
  return runApplicationOperation(
    deps,
    request,
    call.submission,
    (result) => ({ status: call.status, body: result }),
    reply,
  );
}

/**
 * A typed read that accepts staleness (issue 26): answered from the end user's mirror when the
 * caller allows its age (`Svc-Max-Staleness-Seconds`), else null and the call goes live. The
 * headers and the input are checked first, exactly as the live call checks them.
 */
async function fromMirror(
  ctx: RouteContext<unknown, unknown>,
  operation: TypedOperation,
): Promise<RouteResult | null> {
  if (!readsMirror(operation)) return null;
  const maxStalenessSeconds = parseMaxStaleness(ctx.request.headers);
  if (maxStalenessSeconds === null) return null;
  const call = parseCallOptions(ctx.request.headers, { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS });
  if (call.async) return null;
  const input = validateTypedInput(operation, { pathParams: ctx.params, query: ctx.request.query });
  return answerFromMirror(ctx.deps, {
    tenant: ctx.principal,
    endUserId: call.endUserId,
    operation,
    input,
    maxStalenessSeconds,
  });
}

/** The operations `Svc-Max-Staleness-Seconds` applies to: list and retrieve of a mirrorable group. */
function readsMirror(operation: TypedOperation): boolean {
  return (
    (operation.action === "list" || operation.action === "retrieve") &&
    operation.resource !== null &&
    mirrorableGroups().get(operation.resource.entry.path) === operation.resource
  );
}

/** The request body's JSON Schema: a named component for JSON bodies, an empty object otherwise. */
function requestBodyOf(
  operation: TypedOperation,
  rule: BodyRule,
  components: Record<string, JsonSchema>,
): JsonSchema | undefined {
  if (rule.type === "none") return undefined;
  if (rule.type === "empty") return { type: "object", additionalProperties: false, maxProperties: 0 };
  const name = `${operation.operationId.replace(/^ledger\./, "").replace(/\./g, "_")}_body`;
  const schema = z.toJSONSchema(rule.schema(), { io: "input", unrepresentable: "any" }) as JsonSchema;
  delete schema.$schema;
  components[name] = schema;
  return { $ref: `#/components/schemas/${name}` };
}

/** The OpenAPI fragments of a typed operation, all from the action table. */
function openapiOf(operation: TypedOperation): NonNullable<RouteDefinition["openapi"]> {
  const components: Record<string, JsonSchema> = {};
  const inputs = operation.inputs();
  const requestBody = requestBodyOf(operation, inputs.body, components);
  return {
    components,
    queryParameters: inputs.query.map((param) => ({
      name: param.name,
      required: param.required ?? false,
      description: param.description,
      schema: paramJsonSchema(param),
    })),
    ...(operation.unsupported ? {} : { responseBody: operation.response(components) }),
    ...(requestBody ? { requestBody } : {}),
  };
}

/** The route of one typed operation; its documentation is derived on first use (start-up cost). */
function routeFor(operation: TypedOperation): RouteDefinition {
  const write = operation.access === "write";
  let built: RouteDefinition["openapi"];
  let examples: Record<string, unknown> | undefined;
  const route = defineRoute<unknown, unknown>({
    operationId: operation.operationId,
    tag: operation.resource?.entry.resource ?? "reports",
    method: operation.http.method,
    url: operation.http.path,
    pathParams: operation.http.path.includes(":id") ? ["id"] : [],
    summary: operation.summary,
    write,
    idempotency: "request",
    // The core validates the query and the body (batch members take the same path).
    input: "raw",
    headers: write
      ? APPLICATION_WRITE_HEADERS
      : readsMirror(operation)
        ? [...APPLICATION_HEADERS, MAX_STALENESS_HEADER_DOC]
        : APPLICATION_HEADERS,
    response: operation.unsupported
      ? { status: 422, description: "LEDGER_OPERATION_UNSUPPORTED with `details.alternatives`" }
      : { status: operation.http.status, description: operation.summary },
    handler: (ctx) => handle(ctx, operation),
  });
  return Object.defineProperties(route, {
    openapi: { get: () => (built ??= openapiOf(operation)), enumerable: true },
    examples: {
      get: () => {
        const body = operation.inputs().body;
        return body.type === "json" ? (examples ??= body.examples()) : undefined;
      },
      enumerable: true,
    },
  });
}

/** The batch route (decision 0014): a loop over the same core, one Request for every member. */
function batchRoute(): RouteDefinition {
  let built: RouteDefinition["openapi"];
  const route = defineRoute<unknown, unknown>({
    operationId: BATCH_OPERATION,
    tag: "batch",
    method: "POST",
    url: BATCH_PATH,
    summary: "Run up to 25 typed operations in one round trip (one message set, one Request)",
    // Reads-only batches are reads: the core refuses a read-only key's write member, naming it.
    write: false,
    idempotency: "request",
    input: "rawBody",
    headers: APPLICATION_WRITE_HEADERS,
    examples: {
      minimal: {
        onError: "stopOnError",
        requests: [
          { operationId: "ledger.customers.create", body: { name: "Example Co" } },
          { operationId: "ledger.customers.list", query: { limit: 5 } },
        ],
      },
    },
    response: {
      status: 200,
      description: "One result per member, in order: its data or its error, with its status",
    },
    handler: async ({ deps, principal, request, reply }) =>
      runApplicationOperation(
        deps,
        request,
        await prepareBatch(deps, request.body ?? {}, {
          principal,
          call: parseCallOptions(request.headers, { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS }),
        }),
        (result) => ({ status: 200, body: result }),
        reply,
      ),
  });
  return Object.defineProperty(route, "openapi", {
    get: () => {
      if (built) return built;
      const components: Record<string, JsonSchema> = {};
      const operations = [...typedOperations(), ...reportOperations()];
      const body = z.toJSONSchema(batchBody, { io: "input", unrepresentable: "any" }) as JsonSchema;
      delete body.$schema;
      const items = (body.properties as Record<string, JsonSchema>).requests?.items as JsonSchema;
      (items.properties as Record<string, JsonSchema>).operationId = {
        type: "string",
        enum: operations.map((op) => op.operationId),
      };
      built = { components, requestBody: body, responseBody: batchResponseSchema(operations, components) };
      return built;
    },
    enumerable: true,
  });
}

/** Every typed operation's route: the groups' actions, the reports, the unsupported actions, batch. */
export function ledgerResourceRoutes(): RouteDefinition[] {
  return [
    ...[...typedOperations(), ...reportOperations(), ...unsupportedOperations()].map(routeFor),
    batchRoute(),
  ];
}
