import assert from "node:assert/strict";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { createApiKey, createProject } from "../../src/tenancy/api-keys.ts";
import { moveConnection } from "../../src/connections/status.ts";
import { buildTestApp, type TestApp } from "../../src/testing/harness.ts";
import { expectStatus } from "./helpers.ts";
import { validValue } from "./schema-values.ts";

/**
 * The API surface as the OpenAPI document publishes it, and a world of tenants to call it with.
 * The shared security suite (security.test.ts) and the bad-input suite
 * (bad-input.property.test.ts) iterate over every operation of the served `/openapi.json`, so a new
 * route, typed operation or parameter is covered as soon as it is documented.
 */

/** A JSON Schema as the document states it. */
export type JsonSchema = Record<string, unknown>;

/** A documented parameter of an operation. */
export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  operationId: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** OpenAPI path template, for example `/v1/end-users/{id}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /**
   * Query parameters every call needs, each with a value its schema accepts (`confirm=true` on
   * deletes, a report's `reportType`), as `name=value` pairs.
   */
  requiredQuery: string[];
  headers: string[];
  /** Every documented parameter (path, query and header) with its schema. */
  parameters: Parameter[];
  /** The operation documents a request body (false: it takes none). */
  takesBody: boolean;
  /** The JSON request body's schema (a top-level `$ref` resolved), or null. */
  bodySchema: JsonSchema | null;
  /**
   * The document gives the operation no success answer: the application cannot do it, and every
   * call is refused with 422 LEDGER_OPERATION_UNSUPPORTED before its input is read.
   */
  alwaysRefused: boolean;
  /** Valid JSON bodies by name (the request body's `examples`). */
  examples: Record<string, unknown>;
}

interface OpenApiOperation {
  operationId: string;
  parameters?: { name: string; in: Parameter["in"]; required?: boolean; schema?: JsonSchema }[];
  requestBody?: {
    content?: Record<string, { schema?: JsonSchema; examples?: Record<string, { value: unknown }> }>;
  };
  responses?: Record<string, unknown>;
}

type OpenApiPaths = Record<string, Record<string, OpenApiOperation>>;

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** The number of operations the served OpenAPI document has (its paths' HTTP methods). */
export async function documentOperationCount(h: TestApp): Promise<number> {
  const res = await h.app.inject({ method: "GET", url: "/openapi.json" });
  const { paths } = expectStatus<{ paths: Record<string, Record<string, unknown>> }>(res, 200);
  return Object.values(paths).reduce(
    (count, methods) => count + Object.keys(methods).filter((m) => HTTP_METHODS.has(m)).length,
    0,
  );
}

/** Every operation of the served OpenAPI document. */
export async function operationsOf(h: TestApp): Promise<Operation[]> {
  const res = await h.app.inject({ method: "GET", url: "/openapi.json" });
  const document = expectStatus<{
    paths: OpenApiPaths;
    components?: { schemas?: Record<string, JsonSchema> };
  }>(res, 200);
  const resolve = (schema: JsonSchema | undefined): JsonSchema | null => {
    const ref = schema?.$ref;
    if (typeof ref !== "string") return schema ?? null;
    return document.components?.schemas?.[ref.replace("#/components/schemas/", "")] ?? null;
  };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!HTTP_METHODS.has(method)) continue;
      const parameters = operation.parameters ?? [];
      const json = operation.requestBody?.content?.["application/json"]?.examples ?? {};
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase() as Operation["method"],
        path,
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === "query").map((p) => p.name),
        requiredQuery: parameters
          .filter((p) => p.in === "query" && p.required)
          .map((p) => `${p.name}=${percentEncode(validValue(p.schema ?? {}))}`),
        headers: parameters.filter((p) => p.in === "header").map((p) => p.name.toLowerCase()),
        parameters: parameters.map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema: p.schema ?? {},
        })),
        takesBody: operation.requestBody !== undefined,
        bodySchema: resolve(operation.requestBody?.content?.["application/json"]?.schema),
        alwaysRefused: !Object.keys(operation.responses ?? {}).some((status) => /^2\d\d$/.test(status)),
        examples: Object.fromEntries(Object.entries(json).map(([name, example]) => [name, example.value])),
      });
    }
  }
  return operations;
}

/** An application operation: it takes the end user's company file (sync or async). */
export const isApplicationOperation = (op: Operation): boolean => op.headers.includes("prefer");
/** Names the end user in the `Svc-End-User-Id` header. */
export const takesEndUserHeader = (op: Operation): boolean => op.headers.includes("svc-end-user-id");
/** The body decides read or write (passthrough): it names a `read` and a `write` example. */
export const hasReadAndWrite = (op: Operation): boolean => "read" in op.examples && "write" in op.examples;
/** Refused to read-only keys (with its `write` example when the body decides). */
export const isWrite = (op: Operation): boolean => op.method !== "GET" || hasReadAndWrite(op);
/** A list: a GET without a path object. */
export const isList = (op: Operation): boolean =>
  op.method === "GET" && op.pathParams.length === 0 && !isApplicationOperation(op);

/** Which object a path parameter names: the suites fill it with the tenant's own. */
export type PathObject =
  | "endUser"
  | "request"
  | "ledgerRecord"
  | "integrationSlug"
  | "webhookEndpoint"
  | "webhookDelivery"
  | "changeFeedSubscription"
  | "apiKey";

/**
 * How each path parameter is filled. A platform path the table does not know fails loudly, so a new
 * platform resource cannot slip past the suites: add its owner here (and to {@link Tenant}).
 */
export function pathObjectOf(op: Operation, param: string): PathObject {
  if (param === "integrationSlug") return "integrationSlug";
  if (op.path.startsWith("/v1/ledger-desktop/")) return "ledgerRecord";
  if (param === "id" && op.path.startsWith("/v1/end-users/{id}")) return "endUser";
  if (param === "id" && op.path.startsWith("/v1/requests/{id}")) return "request";
  if (param === "id" && op.path.startsWith("/v1/webhook-endpoints/{id}")) return "webhookEndpoint";
  if (param === "id" && op.path.startsWith("/v1/change-feed-subscriptions/{id}"))
    return "changeFeedSubscription";
  if (param === "id" && op.path.startsWith("/v1/api-keys/{id}")) return "apiKey";
  if (param === "deliveryId" && op.path.startsWith("/v1/webhook-endpoints/{id}/deliveries/")) {
    return "webhookDelivery";
  }
  throw new Error(`the contract suites do not know what \`{${param}}\` of ${op.method} ${op.path} names`);
}

/** One key's view: a project in one mode, with objects of its own. */
export interface Tenant {
  name: string;
  projectId: string;
  mode: "live" | "test";
  key: string;
  readOnlyKey: string;
  publishableKey: string;
  /** Two end users whose connections are online (no connector: async calls stay queued). */
  endUser: string;
  otherEndUser: string;
  /** A webhook endpoint of its own, and a (pending) delivery of it. */
  webhookEndpoint: string;
  webhookDelivery: string;
  /** A change feed subscription of its own. */
  changeFeedSubscription: string;
  /** A spare secret key of its own (not one the suites call with). */
  apiKey: string;
}

export interface World {
  h: TestApp;
  /** Every operation of the served document, in its order. */
  operations: Operation[];
  /** How many operations the document has (counted apart from {@link operations}). */
  documentOperations: number;
  /** Project A, live. */
  live: Tenant;
  /** Project A, test: another mode of the same project. */
  test: Tenant;
  /** Project B, live: another project. */
  other: Tenant;
}

/** Builds the world: three tenants, each with two online end users. */
export async function buildWorld(): Promise<World> {
  // Every suite creates webhook endpoints through the create operation's examples, and queues
  // async Requests no connector ever takes: no cap on either here (a full queue is refused at
  // admission with 429 and a recorded Request, which the bad-input suite would count as bad input).
  const h = await buildTestApp(null, {
    config: {
      RATE_LIMIT_MAX: "1000000",
      WEBHOOK_ENDPOINT_LIMIT: "1000000",
      CONNECTION_QUEUE_CAPACITY: "1000000",
    },
  });
  const otherProject = await createProject(h.deps, { name: "Other project" });
  const tenant = async (
    name: string,
    projectId: string,
    mode: "live" | "test",
    key: string,
    publishableKey: string,
  ): Promise<Tenant> => {
    const readOnly = await createApiKey(h.deps, projectId, { kind: "secret", mode, readOnly: true });
    const partial = { name, projectId, mode, key, readOnlyKey: readOnly.secret, publishableKey };
    const webhookEndpoint = await newWebhookEndpoint(h, partial);
    return {
      ...partial,
      endUser: await onlineEndUser(h, partial, `${name}-1`),
      otherEndUser: await onlineEndUser(h, partial, `${name}-2`),
      webhookEndpoint,
      webhookDelivery: await testDelivery(h, partial, webhookEndpoint),
      changeFeedSubscription: await newSubscription(h, partial),
      apiKey: (await createApiKey(h.deps, projectId, { kind: "secret", mode })).key.id,
    };
  };
  const keys = h.project.keys;
  const id = h.project.project.id;
  return {
    h,
    operations: await operationsOf(h),
    documentOperations: await documentOperationCount(h),
    live: await tenant("live", id, "live", keys.secretLive, keys.publishableLive),
    test: await tenant("test", id, "test", keys.secretTest, keys.publishableTest),
    other: await tenant(
      "other",
      otherProject.project.id,
      "live",
      otherProject.keys.secretLive,
      otherProject.keys.publishableLive,
    ),
  };
}

/**
 * An end user created through the API whose connection (made through an auth session with the
 * tenant's publishable key) is marked online as if its connector had just checked in.
 */
export async function onlineEndUser(
  h: TestApp,
  tenant: { key: string; publishableKey: string },
  sourceId: string,
): Promise<string> {
  const auth = { authorization: `Bearer ${tenant.key}` };
  const created = await h.app.inject({
    method: "POST",
    url: "/v1/end-users",
    headers: auth,
    payload: { companyName: `Company ${sourceId}`, sourceId },
  });
  const endUser = expectStatus<{ id: string }>(created, 201).id;
  const session = await h.app.inject({
    method: "POST",
    url: "/v1/auth-sessions",
    headers: auth,
    payload: { publishableKey: tenant.publishableKey, endUserId: endUser },
  });
  expectStatus(session, 201);
  const retrieved = await h.app.inject({ method: "GET", url: `/v1/end-users/${endUser}`, headers: auth });
  const connection = expectStatus<{ integrationConnections: { id: string }[] }>(retrieved, 200)
    .integrationConnections[0];
  assert.ok(connection, "the auth session made a connection");
  const now = new Date(h.clock.now());
  await moveConnection(h.deps, connection.id, "online", {
    last_seen_at: now,
    last_check_in_at: now,
    company_name: `Company ${sourceId}`,
    product: "Simulated",
    xml_version: "16.0",
  });
  return endUser;
}

/** A change feed subscription of the tenant, made through the API. */
async function newSubscription(h: TestApp, tenant: { key: string }): Promise<string> {
  const res = await h.app.inject({
    method: "POST",
    url: "/v1/change-feed-subscriptions",
    headers: { authorization: `Bearer ${tenant.key}` },
    payload: { resources: ["customers"] },
  });
  return expectStatus<{ id: string }>(res, 201).id;
}

/** A webhook endpoint of the tenant, made through the API (no dispatcher runs: nothing is sent). */
async function newWebhookEndpoint(h: TestApp, tenant: { key: string }): Promise<string> {
  const res = await h.app.inject({
    method: "POST",
    url: "/v1/webhook-endpoints",
    headers: { authorization: `Bearer ${tenant.key}` },
    payload: { url: "https://hooks.example.com/ledger", eventTypes: ["request.*"] },
  });
  return expectStatus<{ id: string }>(res, 201).id;
}

/** A delivery of the endpoint: the test operation queues one (it stays pending). */
async function testDelivery(h: TestApp, tenant: { key: string }, endpoint: string): Promise<string> {
  const res = await h.app.inject({
    method: "POST",
    url: `/v1/webhook-endpoints/${endpoint}/test`,
    headers: { authorization: `Bearer ${tenant.key}` },
  });
  return expectStatus<{ id: string }>(res, 200).id;
}

/** Number of Request rows in the store (every project and mode). */
export async function requestCount(h: TestApp): Promise<number> {
  const result = await sql<{ n: string }>`select count(*) as n from requests`.execute(h.deps.db);
  return Number(result.rows[0]?.n ?? 0);
}

/** A queued Request of the tenant (an async health check), for request paths. */
export async function queuedRequest(h: TestApp, tenant: Tenant, endUser = tenant.endUser): Promise<string> {
  const res = await h.app.inject({
    method: "GET",
    url: "/v1/ledger-desktop/health-check",
    headers: {
      authorization: `Bearer ${tenant.key}`,
      "svc-end-user-id": endUser,
      prefer: "respond-async",
    },
  });
  return expectStatus<{ id: string }>(res, 202).id;
}

/**
 * The path objects `op` needs that must be made first: a queued Request of the tenant, a fresh
 * end user or webhook endpoint for a DELETE and a fresh key to revoke (the world's objects must
 * survive every test).
 */
export async function objectsFor(
  world: World,
  op: Operation,
  tenant: Tenant,
): Promise<Partial<Record<PathObject, string>>> {
  const kinds = op.pathParams.map((p) => pathObjectOf(op, p));
  const objects: Partial<Record<PathObject, string>> = {};
  if (kinds.includes("request")) objects.request = await queuedRequest(world.h, tenant);
  if (kinds.includes("endUser") && op.method === "DELETE") {
    objects.endUser = await onlineEndUser(world.h, tenant, `disposable-${++disposable}`);
  }
  if (kinds.includes("webhookEndpoint") && op.method === "DELETE") {
    objects.webhookEndpoint = await newWebhookEndpoint(world.h, tenant);
  }
  if (kinds.includes("changeFeedSubscription") && op.method === "DELETE") {
    objects.changeFeedSubscription = await newSubscription(world.h, tenant);
  }
  // Revoking is the only operation on a key: each call gets a fresh one.
  if (kinds.includes("apiKey")) {
    objects.apiKey = (
      await createApiKey(world.h.deps, tenant.projectId, { kind: "secret", mode: tenant.mode })
    ).key.id;
  }
  return objects;
}
let disposable = 0;

/** A new online end user of the tenant (a connection with an empty queue). */
export async function freshEndUser(world: World, tenant: Tenant): Promise<string> {
  return onlineEndUser(world.h, tenant, `fresh-${++disposable}`);
}

export interface CallOptions {
  /** The key to send (null: no Authorization header). Defaults to the tenant's secret key. */
  key?: string | null;
  /** Objects to use for the path and end user (defaults to the tenant's own). */
  objects?: Partial<Record<PathObject, string>> & { endUserHeader?: string | null };
  /** Example body to send (defaults to `write` when present, else the first). */
  example?: string;
  body?: unknown;
  query?: string;
  headers?: Record<string, string>;
  /** Application operations are called async unless this is set. */
  sync?: boolean;
}

/** The tenant's own objects that the world keeps for every test (Requests are made per test). */
const ownObjects = (tenant: Tenant): Partial<Record<PathObject, string>> => ({
  endUser: tenant.endUser,
  webhookEndpoint: tenant.webhookEndpoint,
  webhookDelivery: tenant.webhookDelivery,
  changeFeedSubscription: tenant.changeFeedSubscription,
  apiKey: tenant.apiKey,
  integrationSlug: "ledger_desktop",
  ledgerRecord: "80000001-1700000000",
});

/** A valid call of `op` as `tenant` (async for application operations), with overrides. */
export async function call(
  world: World,
  op: Operation,
  tenant: Tenant,
  options: CallOptions = {},
): Promise<LightMyRequestResponse> {
  const objects = options.objects ?? {};
  let url = op.path;
  for (const param of op.pathParams) {
    const kind = pathObjectOf(op, param);
    const value =
      objects[kind] ??
      ownObjects(tenant)[kind] ??
      assert.fail(`${op.operationId}: pass a ${kind} (see objectsFor)`);
    url = url.replace(`{${param}}`, percentEncode(value));
  }
  // A parameter the caller sets replaces the required one of the same name.
  const given = new Set(new URLSearchParams(options.query ?? "").keys());
  const required = op.requiredQuery.filter((pair) => !given.has(pair.split("=")[0] ?? ""));
  const query = [...required, options.query ?? ""].filter((part) => part !== "").join("&");
  if (query !== "") url += `?${query}`;
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? tenant.key : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (takesEndUserHeader(op)) {
    const header = objects.endUserHeader === undefined ? tenant.endUser : objects.endUserHeader;
    if (header !== null) headers["svc-end-user-id"] = header;
  }
  if (isApplicationOperation(op) && !options.sync) headers.prefer = "respond-async";
  Object.assign(headers, options.headers);
  const inject: InjectOptions = { method: op.method, url, headers };
  const body = options.body === undefined ? exampleBody(op, tenant, options.example) : options.body;
  if (body !== undefined) inject.payload = body as NonNullable<InjectOptions["payload"]>;
  return world.h.app.inject(inject);
}

let uniqueSequence = 0;

/**
 * The operation's example body for the tenant: `endUserId` and `publishableKey` are its own, and a
 * `sourceId` (unique per project and mode) is made unique so that a create can succeed again.
 */
export function exampleBody(op: Operation, tenant: Tenant, name?: string): unknown {
  const names = Object.keys(op.examples);
  const chosen = name ?? (names.includes("write") ? "write" : names[0]);
  if (chosen === undefined) return undefined;
  const example = op.examples[chosen];
  assert.ok(example !== undefined, `${op.operationId} has an example named ${chosen}`);
  if (example === null || typeof example !== "object" || Array.isArray(example)) return example;
  const body = { ...(example as Record<string, unknown>) };
  if ("endUserId" in body) body.endUserId = tenant.endUser;
  if ("publishableKey" in body) body.publishableKey = tenant.publishableKey;
  if (typeof body.sourceId === "string") body.sourceId = `${body.sourceId}-${++uniqueSequence}`;
  return body;
}

/**
 * Percent-encodes the UTF-8 bytes of a value (a lone surrogate becomes U+FFFD's bytes, as any
 * HTTP client would send it; `encodeURIComponent` would throw).
 */
export function percentEncode(value: string): string {
  return [...Buffer.from(value, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}

/** `{op} ({method} {path})`, for test names. */
export const label = (op: Operation): string => `${op.operationId} (${op.method} ${op.path})`;
