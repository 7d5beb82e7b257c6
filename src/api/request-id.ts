import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { newId } from "../platform/ids.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The response's `Svc-Request-Id` (see {@link registerRequestId}). */
    svcRequestId: string;
  }
}

/**
 * `Svc-Request-Id` (spec: response headers; decision 0005). Every HTTP exchange gets a `call_` ID
 * at once, so that every response, errors included, carries one. An application operation that
 * creates or attaches to a Request answers with that Request's `req_` ID instead (a replayed
 * idempotent call returns the original Request's ID), so a `req_` ID is always a Request that can be
 * retrieved and a `call_` ID never is.
 */
export function registerRequestId(app: FastifyInstance): void {
  app.decorateRequest("svcRequestId", "");
  app.addHook("onRequest", async (request, reply) => {
    request.svcRequestId = String(request.id);
    void reply.header("Svc-Request-Id", request.svcRequestId);
  });
}

/** An HTTP call's ID: the `call_` prefix keeps it apart from Request IDs (`req_`). */
export function newCallId(): string {
  return newId("call");
}

/** From here on the response (success or error) is the Request's. */
export function bindRequest(request: FastifyRequest, reply: FastifyReply, requestId: string): void {
  request.svcRequestId = requestId;
  void reply.header("Svc-Request-Id", requestId);
}
