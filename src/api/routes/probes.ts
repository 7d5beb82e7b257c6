import type { FastifyInstance } from "fastify";
import type { Deps } from "../../deps.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { systemClock } from "../../platform/clock.ts";
import { pingStore } from "../../store/health.ts";
import { sendError } from "../errors.ts";

/**
 * Probes for load balancers and orchestrators (unauthenticated, not rate limited, never logged at
 * info level):
 *
 *   GET /livez   liveness: the process serves HTTP. Touches nothing else, so a slow or failed store
 *                never gets a healthy process restarted.
 *   GET /readyz  readiness: the store answers a query within READY_TIMEOUT_MS; otherwise 503
 *                SERVICE_UNAVAILABLE in the spec's error shape, so traffic goes elsewhere.
 *
 * Neither is the spec's health check (`/v1/ledger-desktop/health-check`), which makes a round trip
 * to an end user's application.
 */
export const READY_TIMEOUT_MS = 2000;

export function registerProbes(app: FastifyInstance, deps: Deps): void {
  // Probes come every few seconds: no access lines below warn (but never louder than configured).
  const quiet = ["silent", "fatal", "error"].includes(deps.config.LOG_LEVEL) ? deps.config.LOG_LEVEL : "warn";
  const options = { config: { rateLimit: false }, logLevel: quiet };
  app.get("/livez", options, async () => ({ status: "ok" }));
  app.get("/readyz", options, async (request, reply) => {
    try {
      await withDeadline(pingStore(deps.db), READY_TIMEOUT_MS);
      return { status: "ok", store: deps.store.engine };
    } catch (error) {
      deps.logger.warn({ err: error, reqId: request.id }, "readiness check failed");
      return sendError(
        deps,
        request,
        reply,
        new ServiceError("SERVICE_UNAVAILABLE", { message: "The store does not answer.", cause: error }),
      );
    }
  });
}

/** Rejects when `work` takes longer than `ms` of real time (a probe's answer must be prompt). */
async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      work,
      systemClock.sleep(ms, timer.signal).then(() => {
        throw new Error(`no answer within ${ms} ms`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}
