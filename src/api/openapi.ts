import { z } from "zod";
import { catalogue } from "../errors/catalogue.ts";
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
    for (const header of route.headers ?? []) {
      parameters.push({
        name: header.name,
        in: "header",
        required: header.required,
        description: header.description,
        schema: { type: "string" },
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
          ...(responseSchema ? { content: { "application/json": { schema: responseSchema } } } : {}),
        },
        default: {
          description: "Error",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
      },
    };
    const requestSchema = route.openapi?.requestBody ?? (route.body ? toSchema(route.body) : null);
    if (requestSchema) {
      operation.requestBody = {
        required: true,
        content: { "application/json": { schema: requestSchema } },
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
    },
    paths,
  };
}
