import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import type { RequestRow } from "../store/requests.ts";
import { formatServerTiming, serverTimingMetrics, stampsOf, type AnswerSource } from "../requests/timings.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** When the HTTP call arrived, on the service's clock (epoch ms): `Server-Timing`'s `svc` counts from here. */
    callStartedAtMs: number;
    /** What answered an application operation (see {@link answeredBy}); null: the service alone. */
    answerSource: AnswerSource | null;
  }
  interface FastifyContextConfig {
    /** An application operation: its every answer carries `Server-Timing` (decision 0047). */
    application?: boolean;
  }
}

/** The header (W3C Server Timing). */
export const SERVER_TIMING_HEADER = "Server-Timing";

/**
 * `Server-Timing` on every answer of an application operation, errors included (issue 28,
 * decision 0047): `queue`, `connector`, `ledger` and `svc`, cut by `requests/timings.ts` from the
 * Request's stamps and this call's start and end on the service's clock. A call that ended without
 * a Request (refused input, an unsupported operation) or that the mirror answered carries `svc` alone
 * with a figure, and the other three names with the reason instead.
 */
export function registerServerTiming(app: FastifyInstance, deps: Deps): void {
  app.decorateRequest("callStartedAtMs", 0);
  app.decorateRequest("answerSource", null);
  app.addHook("onRequest", async (request) => {
    request.callStartedAtMs = deps.clock.now();
  });
  app.addHook("onSend", async (request, reply, payload) => {
    const source = request.answerSource;
    if (source === null && request.routeOptions.config.application !== true) return payload;
    const metrics = serverTimingMetrics(
      source ?? { kind: "none" },
      request.callStartedAtMs,
      deps.clock.now(),
    );
    void reply.header(SERVER_TIMING_HEADER, formatServerTiming(metrics));
    return payload;
  });
}

/** The answer of this call is the Request's (as `row` holds it now) or the mirror's. */
export function answeredBy(request: FastifyRequest, by: RequestRow | "mirror"): void {
  request.answerSource = by === "mirror" ? { kind: "mirror" } : { kind: "request", stamps: stampsOf(by) };
}
