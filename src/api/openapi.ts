import { z } from "zod";
import { catalogue } from "../errors/catalogue.ts";
import { IDEMPOTENCY_HEADER } from "./app-headers.ts";
import type { RouteDefinition } from "./route.ts";

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

const errorSchema: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: [
        "type",
        "code",
        "message",
        "userFacingMessage",
        "httpStatusCode",
        "integrationCode",
        "requestId",
        "cause",
        "fixes",
        "docsUrl",
        "retryable",
        "outcome",
        "param",
        "details",
      ],
      properties: {
        type: { type: "string" },
        code: {
          type: "string",
          description: "Stable code; new codes may be added.",
          examples: Object.keys(catalogue).slice(0, 3),
        },
        message: { type: "string" },
        userFacingMessage: { type: "string" },
        httpStatusCode: { type: ["integer", "null"] },
        integrationCode: { type: ["string", "null"] },
        requestId: { type: "string" },
        cause: { type: "string" },
        fixes: {
          type: "array",
          items: {
            type: "object",
            properties: {
              actor: { type: "string", enum: ["developer", "end_user", "support"] },
              action: { type: "string" },
            },
          },
        },
        docsUrl: { type: "string", format: "uri" },
        retryable: { type: "boolean" },
        outcome: { type: "string" },
        param: { type: ["string", "null"] },
        details: { type: "object" },
      },
    },
  },
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
};
const headerRefs = Object.fromEntries(
  Object.keys(responseHeaders).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);
const errorHeaderRefs = {
  ...headerRefs,
  "Svc-Should-Retry": {
    description: "`true` when the identical request may succeed (the error's `retryable`)",
    schema: { type: "string", enum: ["true", "false"] },
  },
};

export function buildOpenApi(routes: RouteDefinition[], serverUrl: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const shared: Record<string, JsonSchema> = {};
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
    const responseSchema =
      route.openapi?.responseBody ?? (route.response.schema ? toSchema(route.response.schema) : null);
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: [{ bearerAuth: [] }],
      parameters,
      responses: {
        [String(route.response.status)]: {
          description: route.response.description,
          headers: headerRefs,
          ...(responseSchema ? { content: { "application/json": { schema: responseSchema } } } : {}),
        },
        default: {
          description: "Error",
          headers: errorHeaderRefs,
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
      },
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
      schemas: {
        Error: errorSchema,
        ...Object.fromEntries(Object.entries(shared).sort(([a], [b]) => (a < b ? -1 : 1))),
      },
      headers: responseHeaders,
    },
    paths,
  };
}
