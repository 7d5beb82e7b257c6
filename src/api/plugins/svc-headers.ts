import type { FastifyInstance, FastifyRequest } from "fastify";
import { ServiceError } from "../../errors/service-error.ts";

/** The `Svc-*` request headers the API knows (spec: Headers on application operations). */
export const KNOWN_SVC_HEADERS = new Set(["svc-end-user-id", "svc-timeout-seconds", "svc-queue-ttl-seconds"]);

/**
 * Strict headers: an unknown `Svc-*` header is UNKNOWN_HEADER (spec: Conventions). A route may take
 * more (`Svc-Max-Staleness-Seconds` on the reads a mirror can answer): elsewhere they are unknown.
 */
export function registerSvcHeaders(app: FastifyInstance): void {
  app.addHook("preParsing", async (request: FastifyRequest) => {
    if (!request.routeOptions.config.auth) return;
    for (const name of Object.keys(request.headers)) {
      const own = request.routeOptions.config.svcHeaders ?? [];
      if (name.startsWith("svc-") && !KNOWN_SVC_HEADERS.has(name) && !own.includes(name)) {
        throw new ServiceError("UNKNOWN_HEADER", {
          param: canonicalHeaderName(name),
          message: `Unknown header \`${canonicalHeaderName(name)}\`.`,
        });
      }
    }
  });
}

export function canonicalHeaderName(lower: string): string {
  return lower
    .split("-")
    .map((part) => (part.length ? part[0]?.toUpperCase() + part.slice(1) : part))
    .join("-");
}
