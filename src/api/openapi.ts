import { z } from "zod";
import { catalogue } from "../errors/catalogue.ts";
import { IDEMPOTENCY_HEADER } from "./app-headers.ts";
import type { RouteDefinition } from "./route.ts";
import { errorSchema, requestSchema } from "./response-schemas.ts";

/**
 * The OpenAPI 3.1 document, built from the same route declarations and Zod schemas the validator
 * uses (architecture §1). `openapi.json` is the committed copy; a test fails when it drifts.
 */
type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    target: "draft-2020-12",
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/**
 * A response body's schema, with the output types. Schemas named with `meta({id})` become shared
 * components (`$defs` hoisted to `components.schemas`). `additionalProperties: false` (Zod's
 * objects strip unknown keys) is left out: a later version may add response fields.
 */
export function toResponseSchema(schema: z.ZodType, shared: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: "output",
    unrepresentable: "any",
    target: "draft-2020-12",
  }) as JsonSchema;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  delete json.$defs;
  const fix = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(fix);
    if (typeof value !== "object" || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === "additionalProperties" && inner === false) continue;
      out[key] =
        key === "$ref" && typeof inner === "string"
          ? inner.replace(/^#\/\$defs\//, "#/components/schemas/")
          : fix(inner);
    }
    return out;
  };
  for (const [name, def] of Object.entries(defs)) {
    const converted = fix(def) as JsonSchema;
    const existing = shared[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(converted))
      throw new Error(`two different schemas are named ${name}`);
    shared[name] = converted;
  }
  return fix(json) as JsonSchema;
}

/** The error responses by status: each lists the catalogue's codes of that status. */
const ERROR_RESPONSE_NAMES: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  402: "PaymentRequired",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Gone",
  413: "ContentTooLarge",
  422: "UnprocessableContent",
  429: "TooManyRequests",
  500: "InternalServerError",
  502: "BadGateway",
  503: "ServiceUnavailable",
  504: "GatewayTimeout",
};

/** Headers on every response (spec: Headers on application operations; decision 0005). */
const responseHeaders = {
  "Svc-Request-Id": {
    description:
      "On an application operation that created or attached to a Request: that Request's ID (`req_...`; a replayed idempotent call returns the original Request's). Elsewhere a `call_...` ID that is never a Request.",
    schema: { type: "string", pattern: "^(req|call)_[0-9a-hjkmnp-tv-z]{26}$" },
  },
  "RateLimit-Limit": {
    description: "Requests allowed per window (per project)",
    schema: { type: "integer" },
  },
  "RateLimit-Remaining": { description: "Requests left in the window", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets", schema: { type: "integer" } },
  "Svc-Should-Retry": {
    description: "`true` when the identical request may succeed (the error's `retryable`)",
    schema: { type: "string", enum: ["true", "false"] },
  },
  "X-Should-Retry": {
    description:
      "The same value as `Svc-Should-Retry`, under the name generated SDKs obey: `false` stops their automatic retries (a write that may have been applied, a 409 stale revision), `true` allows one",
    schema: { type: "string", enum: ["true", "false"] },
  },
  "Retry-After": {
    description: "Seconds to wait before retrying (429, and a retryable 503)",
    schema: { type: "integer", minimum: 0 },
  },
  Location: {
    description: "The Request's URL (`/v1/requests/{id}`), to poll",
    schema: { type: "string", format: "uri" },
  },
  "Svc-Data-As-Of": {
    description:
      "On an answer from the end user's mirror (a read with `Svc-Max-Staleness-Seconds`): every change the application made before this time is in the answer (RFC 3339). Absent on a live answer.",
    schema: { type: "string", format: "date-time" },
  },
  Age: {
    description: "On an answer from the end user's mirror: whole seconds since `Svc-Data-As-Of`",
    schema: { type: "integer", minimum: 0 },
  },
  "Server-Timing": {
    description:
      'On every answer of an application operation, errors included (W3C Server Timing, decision 0047): where the call\'s time went, in milliseconds. `connector`: from admission until the Web Connector opened the session that took the Request (0 when it was open already); `queue`: the rest of the wait before the hand-over, in that session (behind other Requests, the company file opening, write spacing); `ledger`: from the hand-over to the application\'s answer; `svc`: the rest of this HTTP call\'s wall time, the service\'s own. The Request\'s `timings` carry the same figures (`queuedMs` = `connector` + `queue`, `connectorMs`, `ledgerMs`). A figure this answer cannot tell yet is left out and its `desc` says why: a 202 carries the wait so far as `queue`; an answer from the mirror, or a call refused before a Request existed, carries `svc` alone. Example: `queue;dur=1500;desc="in the session before hand-over", connector;dur=4000;desc="waiting for the Web Connector", ledger;dur=2500;desc="the application", svc;dur=3;desc="service"`',
    schema: { type: "string" },
  },
};
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const headerRefs = Object.fromEntries(
  ["Svc-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"].map((name) => [
    name,
    ref(name),
  ]),
);
const errorHeaderRefs = {
  ...headerRefs,
  "Svc-Should-Retry": ref("Svc-Should-Retry"),
  "X-Should-Retry": ref("X-Should-Retry"),
};

/** The shared responses: the async answer and one per error status. */
function sharedResponses(): Record<string, unknown> {
  const codes = new Map<number, string[]>();
  for (const [code, entry] of Object.entries(catalogue)) {
    if (entry.httpStatus !== null)
      codes.set(entry.httpStatus, [...(codes.get(entry.httpStatus) ?? []), code]);
  }
  const responses: Record<string, unknown> = {
    Accepted: {
      description: "`Prefer: respond-async`: the Request, queued; its `result` holds the success body later",
      headers: { ...headerRefs, Location: ref("Location"), "Server-Timing": ref("Server-Timing") },
      content: { "application/json": { schema: { $ref: "#/components/schemas/Request" } } },
    },
  };
  for (const [status, name] of Object.entries(ERROR_RESPONSE_NAMES)) {
    const listed = codes.get(Number(status)) ?? [];
    responses[name] = {
      description: `${listed.map((code) => `\`${code}\``).join(", ")} (the error's \`code\`; new codes may be added)`,
      headers: {
        ...errorHeaderRefs,
        ...(status === "429" || status === "503" ? { "Retry-After": ref("Retry-After") } : {}),
      },
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  return responses;
}

/** Statuses every route answers: bad input, no key, a disabled project or read-only key, limits, outages. */
const EVERY_ROUTE = [400, 401, 403, 429, 500, 503];
/**
 * Application operations add billing (402), the end user or record missing (404), the company file
 * or the record in conflict (409), the connection not set up or the application refusing (422), an
 * unreadable or lost answer (502), the connector or application unreachable (503) and timeouts (504).
 */
const APPLICATION = [402, 404, 409, 422, 502, 503, 504];

/** The error statuses of one route (the catalogue's statuses, section "Errors" of the spec). */
function errorStatusesOf(route: RouteDefinition, application: boolean, cursor: boolean): number[] {
  const statuses = new Set<number>([...EVERY_ROUTE, ...(route.errors ?? [])]);
  if (route.response.status >= 400) {
    // Always refused (an unsupported typed operation): its input is checked, then it is refused.
    if (route.method === "POST" || route.method === "PUT") statuses.add(413);
    return [...statuses.add(route.response.status)].sort((a, b) => a - b);
  }
  if ((route.pathParams ?? []).length > 0) statuses.add(404);
  // A body past 20 MiB (PAYLOAD_TOO_LARGE); an Idempotency-Key reused (IDEMPOTENCY_KEY_REUSED).
  if (route.method === "POST" || route.method === "PUT") statuses.add(413);
  if (route.method !== "GET") statuses.add(422);
  if (application) for (const status of APPLICATION) statuses.add(status);
  // An application cursor that expired: CURSOR_EXPIRED.
  if (application && cursor) statuses.add(410);
  return [...statuses].sort((a, b) => a - b);
}

export function buildOpenApi(routes: RouteDefinition[], serverUrl: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const shared: Record<string, JsonSchema> = {};
  // The error body and the Request (every async answer) are shared by every operation.
  toResponseSchema(errorSchema, shared);
  toResponseSchema(requestSchema, shared);
  for (const route of routes) {
    const path = route.url.replace(/:(\w+)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const name of route.pathParams ?? [])
      parameters.push({ name, in: "path", required: true, schema: { type: "string" } });
    const queryParameters = route.openapi?.queryParameters;
    if (queryParameters) {
      for (const q of queryParameters) parameters.push({ ...q, in: "query" });
    } else if (route.query) {
      const query = toSchema(route.query);
      const props = (query.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((query.required as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries(props)) {
        parameters.push({
          name,
          in: "query",
          required: required.has(name) && !("default" in schema),
          schema,
        });
      }
    }
    const writes = route.write ?? route.method !== "GET";
    const declared = new Set((route.headers ?? []).map((h) => h.name.toLowerCase()));
    const headers = [...(route.headers ?? [])];
    // Every platform write honours Idempotency-Key (api/register.ts).
    if (writes && !declared.has("idempotency-key"))
      headers.push({
        ...IDEMPOTENCY_HEADER,
        description: "1 to 255 printable ASCII characters: a repeat replays the first response",
      });
    for (const header of headers) {
      parameters.push({
        name: header.name,
        in: "header",
        required: header.required,
        description: header.description,
        schema: header.schema ?? { type: "string" },
      });
    }
    Object.assign(shared, route.openapi?.components);
    // Application operations (they take `Prefer`) answer 202 and the connection's errors, unless
    // they are always refused.
    const application = headers.some((header) => header.name === "Prefer") && route.response.status < 400;
    const cursor = parameters.some(
      (parameter) => (parameter as { name: string; in: string }).name === "cursor",
    );
    const responses: Record<string, unknown> = {};
    if (route.response.status < 400) {
      const responseSchema =
        route.openapi?.responseBody ??
        (route.response.schema ? toResponseSchema(route.response.schema, shared) : null);
      if (!responseSchema) throw new Error(`${route.operationId} declares no response schema`);
      const media = route.openapi?.responseMedia ?? {};
      // A read the mirror may answer says so in its headers (issue 26).
      const mirrored = headers.some((header) => header.name === "Svc-Max-Staleness-Seconds");
      responses[String(route.response.status)] = {
        description: route.response.description,
        headers: {
          ...headerRefs,
          ...(mirrored ? { "Svc-Data-As-Of": ref("Svc-Data-As-Of"), Age: ref("Age") } : {}),
          // Where the time went (issue 28, decision 0047).
          ...(application ? { "Server-Timing": ref("Server-Timing") } : {}),
        },
        content: {
          "application/json": { schema: responseSchema },
          ...Object.fromEntries(Object.entries(media).map(([type, schema]) => [type, { schema }])),
        },
      };
    }
    if (application) {
      responses["202"] = { $ref: "#/components/responses/Accepted" };
    }
    for (const status of errorStatusesOf(route, application, cursor)) {
      const name = ERROR_RESPONSE_NAMES[status];
      if (!name) throw new Error(`no error response for ${status}`);
      responses[String(status)] = { $ref: `#/components/responses/${name}` };
    }
    responses.default = {
      description: "Any other error (new codes may be added)",
      headers: errorHeaderRefs,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: [{ bearerAuth: [] }],
      parameters,
      responses,
    };
    const requestSchema = route.openapi?.requestBody ?? (route.body ? toSchema(route.body) : null);
    if (requestSchema || route.examples) {
      const examples = route.examples
        ? Object.fromEntries(Object.entries(route.examples).map(([name, value]) => [name, { value }]))
        : undefined;
      const media = route.openapi?.requestMedia ?? {};
      operation.requestBody = {
        // A body whose every field is optional may be left out (an empty body is no body).
        required: requestSchema ? ((requestSchema.required as unknown[] | undefined)?.length ?? 0) > 0 : true,
        content: {
          "application/json": {
            ...(requestSchema ? { schema: requestSchema } : {}),
            ...(examples ? { examples } : {}),
          },
          ...Object.fromEntries(Object.entries(media).map(([type, schema]) => [type, { schema }])),
        },
      };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "ledger-bridge API",
      version: "1.0.0",
      description: "JSON REST API for desktop accounting company files, reached through the Web Connector.",
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "A secret key: `sk_live_...` or `sk_test_...`",
        },
      },
      schemas: Object.fromEntries(Object.entries(shared).sort(([a], [b]) => (a < b ? -1 : 1))),
      responses: sharedResponses(),
      headers: responseHeaders,
    },
    paths,
  };
}
