import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import type { Deps } from "../../deps.ts";
import { ServiceError } from "../../errors/service-error.ts";

/**
 * Per-project rate limit, all keys together, in a configurable window (spec: Limits). Calls that do
 * not resolve to a project (missing or bad key) are counted per client address instead. Headers use
 * the IETF draft names `RateLimit-Limit/-Remaining/-Reset`.
 */
export async function registerRateLimit(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: deps.config.RATE_LIMIT_MAX,
    timeWindow: deps.config.RATE_LIMIT_WINDOW_MS,
    enableDraftSpec: true,
    addHeadersOnExceeding: { "ratelimit-limit": true, "ratelimit-remaining": true, "ratelimit-reset": true },
    addHeaders: {
      "ratelimit-limit": true,
      "ratelimit-remaining": true,
      "ratelimit-reset": true,
      "retry-after": true,
    },
    keyGenerator: (request) =>
      request.principal ? `project:${request.principal.projectId}` : `address:${request.ip}`,
    errorResponseBuilder: (_request, context) =>
      new ServiceError("RATE_LIMITED", {
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
        details: { retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)) },
        message: `Rate limit of ${context.max} requests per ${Math.round(deps.config.RATE_LIMIT_WINDOW_MS / 1000)} s exceeded for this project.`,
      }),
  });
}
