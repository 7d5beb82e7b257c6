import { z } from "zod";
import { apiKeysList, createApiKeyFor, listApiKeysPage, revokeApiKeyFor } from "../../tenancy/api-keys.ts";
import { decodeCursor } from "../../tenancy/pagination.ts";
import { defineRoute } from "../route.ts";
import { platformListQuery } from "../schemas.ts";
import { apiKeyListSchema, apiKeySchema, apiKeyWithSecretSchema } from "../response-schemas.ts";

const TAG = "API keys";
const noBody = z.strictObject({});

const createBody = z.strictObject({
  kind: z.enum(["secret", "publishable"]).default("secret"),
  readOnly: z.boolean().default(false),
});

/**
 * `GET/POST /v1/api-keys`, `POST /v1/api-keys/{id}/revoke` (decision 0026): the caller's project's
 * keys in the caller's mode. The secret appears once, in the create response (an `Idempotency-Key`
 * replay returns that response, stored sealed with the idempotency key, as for auth sessions and
 * webhook endpoints).
 */
export const apiKeyRoutes = [
  defineRoute({
    method: "GET",
    url: "/v1/api-keys",
    operationId: "apiKeys.list",
    summary: "List the project's keys in the caller's mode, newest first (never the secret)",
    tag: TAG,
    query: platformListQuery,
    response: { status: 200, description: "A list of API keys", schema: apiKeyListSchema },
    handler: async ({ deps, principal, query }) => {
      const lastId = query.cursor ? decodeCursor(apiKeysList(principal), query.cursor, {}).lastId : null;
      return { body: await listApiKeysPage(deps, principal, { limit: query.limit, lastId }) };
    },
  }),
  defineRoute({
    method: "POST",
    url: "/v1/api-keys",
    operationId: "apiKeys.create",
    summary: "Create a key in the caller's project and mode; the response carries the key (shown once)",
    tag: TAG,
    body: createBody,
    examples: { secret: { kind: "secret" }, readOnly: { kind: "secret", readOnly: true } },
    response: { status: 201, description: "The API key with `secret`", schema: apiKeyWithSecretSchema },
    handler: async ({ deps, principal, body }) => ({
      status: 201,
      body: await createApiKeyFor(deps, principal, body),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/api-keys/:id/revoke",
    operationId: "apiKeys.revoke",
    summary: "Revoke a key of the caller's project (not the key making the call); it stops working at once",
    tag: TAG,
    pathParams: ["id"],
    body: noBody,
    response: { status: 200, description: "The revoked API key", schema: apiKeySchema },
    handler: async ({ deps, principal, params }) => ({
      body: await revokeApiKeyFor(deps, principal, params.id ?? ""),
    }),
  }),
];
