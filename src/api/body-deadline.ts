import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { BodyDeadline, BodyTimeoutError } from "../platform/body-deadline.ts";
import { systemClock } from "../platform/clock.ts";

/** Whether a request carries a body (a length above zero, or a chunked one). */
export function hasBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined;
}

/**
 * Every call's body must arrive within `BODY_RECEIVE_TIMEOUT_MS` of the start of its reading (issue
 * 23): a body trickled a byte at a time would otherwise hold its connection, and what was read of
 * it, for as long as its sender likes. Past the deadline the call is answered through the route's
 * error handler (the API's error body, the connector's SOAP Fault) with `Connection: close`, and the
 * socket is closed once that answer is written, unread bytes and all.
 */
export function registerBodyDeadline(app: FastifyInstance, deps: Deps): void {
  const clock = deps.transportClock ?? systemClock;
  app.decorateRequest("bodyDeadline", null);
  app.addHook("preParsing", async (request, reply, payload) => {
    if (!hasBody(request)) return payload;
    const deadline = new BodyDeadline(clock, clock.now(), deps.config.BODY_RECEIVE_TIMEOUT_MS);
    request.bodyDeadline = deadline;
    const settle = (): void => deadline.settle();
    payload.once("end", settle);
    payload.once("close", settle);
    reply.raw.once("close", settle);
    void deadline.expired().then((expired) => {
      if (expired) cutSlowBody(request, reply, deadline);
    });
    return payload;
  });
}

function cutSlowBody(request: FastifyRequest, reply: FastifyReply, deadline: BodyDeadline): void {
  request.log.warn(
    { reqId: request.id, bytesReceived: request.raw.socket?.bytesRead ?? null, limitMs: deadline.limitMs },
    "request body not received in time: the connection is closed",
  );
  if (reply.sent || reply.raw.headersSent) {
    request.raw.socket?.destroy();
    return;
  }
  void reply.header("Connection", "close");
  reply.send(new BodyTimeoutError(deadline.limitMs));
}
