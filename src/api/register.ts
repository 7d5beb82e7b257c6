import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { openWith, sealWith } from "../platform/secrets.ts";
import { IDEMPOTENCY_RETENTION_MS, fingerprintOf, parseIdempotencyKey } from "../requests/idempotency-key.ts";
import { claimIdempotencyKey, releaseIdempotencyKey, saveIdempotentResponse } from "../store/idempotency.ts";
import type { z } from "zod";
import type { RouteDefinition, RouteResult } from "./route.ts";
import { parseWith } from "./validation.ts";

/** Registers declared routes: auth flags, strict query/body parsing, platform idempotency. */
export function registerRoutes(app: FastifyInstance, deps: Deps, routes: RouteDefinition[]): void {
  for (const route of routes) {
    const write = route.write ?? route.method !== "GET";
    app.route({
      method: route.method,
      url: route.url,
      config: { auth: true, write },
      handler: async (request, reply) => {
        const principal = request.principal;
        if (!principal) throw new ServiceError("API_KEY_MISSING");
        const raw = route.input === "raw";
        const query = raw
          ? request.query
          : route.query
            ? parseWith(route.query, request.query)
            : rejectQuery(request);
        const body =
          raw || route.input === "rawBody"
            ? request.body
            : route.body
              ? parseBody(
                  route.body,
                  // An empty body is no body; a JSON `null` is a body, and not an object.
                  request.body === undefined ? (route.method === "DELETE" ? undefined : {}) : request.body,
                )
              : rejectBody(request);
        const params = request.params as Record<string, string>;
        const run = () => route.handler({ deps, principal, body, query, params, request, reply });
        const idempotency = route.idempotency ?? (write && route.method !== "GET" ? "platform" : "none");
        const result =
          idempotency === "platform" ? await withPlatformIdempotency(deps, request, run) : await run();
        return send(reply, result);
      },
    });
  }
}

/** A body's problems name the field, or `body` itself when the whole body is wrong (an array, `null`…). */
function parseBody<T>(schema: z.ZodType<T>, input: unknown): T {
  try {
    return parseWith(schema, input);
  } catch (error) {
    if (error instanceof ServiceError && error.param === null) {
      throw new ServiceError(error.code, { param: "body", message: error.message });
    }
    throw error;
  }
}

/** An operation without body fields takes no body, or `{}`: anything else is refused, not ignored. */
function rejectBody(request: FastifyRequest): undefined {
  const body = request.body;
  if (body === undefined) return undefined;
  const empty =
    typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
  if (empty) return undefined;
  const first =
    typeof body === "object" && body !== null && !Array.isArray(body) ? Object.keys(body)[0] : undefined;
  if (first !== undefined) {
    throw new ServiceError("UNKNOWN_PARAMETER", {
      param: first,
      message: `Unknown parameter \`${first}\`: this operation takes no body fields.`,
    });
  }
  throw new ServiceError("INVALID_PARAMETER", {
    param: "body",
    message: "This operation takes no body (or `{}`).",
  });
}

function rejectQuery(request: FastifyRequest): undefined {
  const keys = Object.keys(request.query ?? {});
  if (keys.length > 0 && keys[0] !== undefined) {
    throw new ServiceError("UNKNOWN_PARAMETER", {
      param: keys[0],
      message: `Unknown query parameter \`${keys[0]}\`.`,
    });
  }
  return undefined;
}

export function send(reply: FastifyReply, result: RouteResult): FastifyReply {
  if (result.headers)
    for (const [name, value] of Object.entries(result.headers)) void reply.header(name, value);
  return reply.code(result.status ?? 200).send(result.body);
}

/**
 * Platform writes honour `Idempotency-Key` (spec: auth sessions list IDEMPOTENCY_KEY_INVALID and
 * IDEMPOTENCY_KEY_REUSED): the first response is stored sealed with the key (it may contain a
 * credential such as `clientSecret`) and replayed for the same request; another request → 422.
 * Application operations use the Request engine's idempotency instead.
 */
async function withPlatformIdempotency(
  deps: Deps,
  request: FastifyRequest,
  run: () => Promise<RouteResult>,
): Promise<RouteResult> {
  const key = parseIdempotencyKey(request.headers["idempotency-key"]);
  const principal = request.principal;
  if (key === null || !principal) return run();
  const now = new Date(deps.clock.now());
  const fingerprint = fingerprintOf({
    method: request.method,
    path: request.url,
    endUserId: null,
    body: request.body ?? null,
  });
  const claim = await claimIdempotencyKey(
    deps.db,
    principal,
    {
      key,
      fingerprint,
      request_id: null,
      response_box: null,
      response_status: null,
      created_at: now,
      expires_at: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS),
    },
    now,
  );
  if (!claim.claimed) {
    if (claim.existing.fingerprint !== fingerprint)
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", { param: "Idempotency-Key" });
    const stored = claim.existing.response_box ? openWith(key, claim.existing.response_box) : null;
    if (stored === null || claim.existing.response_status === null) {
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", {
        param: "Idempotency-Key",
        message: "A request with this `Idempotency-Key` is still in progress.",
      });
    }
    return {
      status: claim.existing.response_status,
      body: JSON.parse(stored) as unknown,
      headers: { "Idempotent-Replayed": "true" },
    };
  }
  try {
    const result = await run();
    await saveIdempotentResponse(
      deps.db,
      principal,
      key,
      result.status ?? 200,
      sealWith(key, JSON.stringify(result.body)),
    );
    return result;
  } catch (error) {
    // A failed attempt does not hold the key: the same key may be used to try again.
    await releaseIdempotencyKey(deps.db, principal, key);
    throw error;
  }
}
