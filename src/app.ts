import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { hasBody, registerBodyDeadline } from "./api/body-deadline.ts";
import { registerAuth } from "./api/plugins/auth.ts";
import { registerRateLimit } from "./api/plugins/rate-limit.ts";
import { registerSvcHeaders } from "./api/plugins/svc-headers.ts";
import { sendError } from "./api/errors.ts";
import { registerRoutes } from "./api/register.ts";
import {
  clientErrorHandler,
  registerBodyParsers,
  registerStorableText,
  sendFrameworkError,
} from "./api/edge.ts";
import { newCallId, registerRequestId } from "./api/request-id.ts";
import { apiRoutes } from "./api/routes/index.ts";
import { registerServerTiming } from "./api/server-timing.ts";
import { registerPublicPages } from "./api/routes/public-pages.ts";
import { registerConnectorEndpoint } from "./connector/endpoint.ts";
import type { Deps } from "./deps.ts";
import { ServiceError } from "./errors/service-error.ts";
import { traceHttpCalls } from "./platform/tracing.ts";

/** 20 MiB (spec: Limits, request body size). */
export const BODY_LIMIT_BYTES = 20 * 1024 * 1024;

/**
 * The access log: one line per HTTP call, Fastify's "request completed" (or "request errored") with
 * the call's ID, status and time, at the route's log level. Fastify also wrote an "incoming request"
 * line as each call arrived: a second synchronous write per call that told nothing the first does
 * not (decision 0027).
 */
class OneLinePerCall extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    const call = {
      method: request.method,
      url: withoutCredentials(request.url),
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...call, err: error }, "request errored");
    else reply.log.info(call, "request completed");
  }
}

/**
 * A URL as logged: the setup pages' `clientSecret` (a credential in the query string) masked. The
 * setup routes write their own line without the query; this covers the lines of calls that errored.
 */
function withoutCredentials(url: string): string {
  return url.includes("clientSecret=") ? url.replace(/([?&]clientSecret=)[^&#]*/g, "$1…") : url;
}

/** Builds the HTTP application; never listens (tests use `inject` or listen on loopback themselves). */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  // `frameworkErrors` and `clientErrorHandler` need the instance (its rate limiter) once it exists.
  let self: FastifyInstance | null = null;
  const app: FastifyInstance = Fastify({
    // pino.Logger and FastifyBaseLogger differ only in optional members under exactOptionalPropertyTypes.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: newCallId,
    logController: new OneLinePerCall(),
    requestIdHeader: false,
    return503OnClosing: false,
    // The client's address for per-address limits: the proxy's own unless TRUST_PROXY says otherwise.
    trustProxy: deps.config.TRUST_PROXY,
    // Longer than any ID, so a long ID reaches its route (404 there), not a framework 414.
    routerOptions: { maxParamLength: 500 },
    frameworkErrors: (error, request, reply) => {
      if (self) void sendFrameworkError(self, deps, error, request, reply);
    },
    clientErrorHandler: (error, socket) => {
      if (self) clientErrorHandler(self, deps)(error, socket);
      else socket.destroy();
    },
  });
  self = app;
  // Connections beyond the cap are closed as they arrive (decision 0031).
  app.server.maxConnections = deps.config.HTTP_MAX_CONNECTIONS;
  registerBodyParsers(app, BODY_LIMIT_BYTES);
  registerBodyDeadline(app, deps);

  for (const type of ["application/xml", "text/xml"]) {
    app.addContentTypeParser(
      type,
      { parseAs: "string", bodyLimit: BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
  }

  registerServerTiming(app, deps);
  registerRequestId(app);
  // A server span per API call, only while traces are on (decision 0048).
  if (deps.tracing) traceHttpCalls(app, deps.tracing);
  registerStorableText(app);
  registerAuth(app, deps);
  await registerRateLimit(app, deps);
  registerSvcHeaders(app);

  app.setErrorHandler((error, request, reply) => sendError(deps, request, reply, error));
  const unknownRoute = (request: FastifyRequest): ServiceError =>
    new ServiceError("RESOURCE_MISSING", {
      message: `Unrecognized request URL (${request.method} ${request.url.split("?")[0] ?? ""}).`,
    });
  const countUnknown = app.rateLimit();
  // An unknown route reads no body (decision 0031): the answer is the same whatever was sent, and
  // the connection closes after it, so the unread body is never received.
  app.addHook("preParsing", async (request, reply, payload) => {
    if (!request.is404 || !hasBody(request)) return payload;
    void reply.header("Connection", "close");
    await countUnknown.call(app, request, reply);
    throw unknownRoute(request);
  });
  app.setNotFoundHandler({ preHandler: countUnknown }, (request, reply) =>
    sendError(deps, request, reply, unknownRoute(request)),
  );

  registerRoutes(app, deps, apiRoutes);
  registerConnectorEndpoint(app, deps);
  await registerPublicPages(app, deps);
  return app;
}
