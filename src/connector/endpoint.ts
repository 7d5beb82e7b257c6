import type { Readable } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { BodyTimeoutError } from "../platform/body-deadline.ts";
import { FailureThrottle } from "../platform/failure-throttle.ts";
import { CallTooLargeError, readCallBody, type CallBodyLimits } from "./call-body.ts";
import {
  SOAP_CONTENT_TYPE,
  SoapParseError,
  soapFault,
  soapResponse,
  type SoapCall,
  type SoapResult,
} from "./soap.ts";
import { wsdlDocument } from "./wsdl.ts";
import { isStoreUnavailable } from "../store/unavailable.ts";

import * as session from "./session.ts";

export const SERVER_VERSION = "ledger-bridge 0.1.0";

/** Where the connector posts its calls (the `.qwc` AppURL) and where `?wsdl` is served. */
export const CONNECTOR_PATH = "/connector";

const ROUTE_CONFIG = { rateLimit: false } as const;

/**
 * `POST /connector`: the Web Connector's SOAP endpoint; `GET /connector?wsdl`: its WSDL. Thin:
 * decode and parse the envelope, call the session function, serialise the result.
 *
 * The endpoint lives in its own plugin scope so that whatever goes wrong is answered in SOAP:
 * its own body reader (`call-body.ts`: read as it arrives, bounded before credentials, no tree),
 * and its own error handler, which turns every failure (malformed XML, wrong namespace or
 * SOAPAction, SOAP 1.2, oversize body, wrong content type, an internal error) into a SOAP 1.1
 * Fault with HTTP 500, as SOAP 1.1 §6.2 requires, never the API's JSON error body.
 *
 * Failed attempts per client address (a refused login, an unknown ticket, a body that is not a
 * call) are counted; past `FAILED_ATTEMPTS_PER_ADDRESS` in a window, the address's calls are
 * turned away with 429 before any byte of them is read (decision 0031).
 */
export function registerConnectorEndpoint(app: FastifyInstance, deps: Deps): void {
  const shutdown = new AbortController();
  const held = new Set<AbortController>();
  const memory = new session.SessionMemory(deps.store.notifier);
  // Sessions whose connector stopped calling without closing are forgotten after two holds and a minute.
  const forgetAfterMs = 2 * deps.config.CONNECTOR_HOLD_MS + 60_000;
  const pruning = setInterval(() => memory.prune(forgetAfterMs), 60_000);
  pruning.unref();
  deps.activity.start(deps.db, deps.logger);
  app.addHook("onClose", async () => {
    shutdown.abort();
    for (const call of held) call.abort();
    clearInterval(pruning);
    memory.clear();
    await deps.activity.stop(deps.db).catch((error: unknown) => {
      deps.logger.warn({ err: error }, "the last activity stamps could not be written");
    });
  });
  const ctx: session.ConnectorContext = {
    deps,
    shutdown: shutdown.signal,
    held,
    memory,
    holdClock: session.HOLD_CLOCK,
  };
  const limits: CallBodyLimits = {
    unauthenticatedBytes: deps.config.CONNECTOR_UNAUTHENTICATED_BODY_LIMIT_BYTES,
    bodyBytes: deps.config.CONNECTOR_BODY_LIMIT_BYTES,
    sessionReceiveMs: deps.config.CONNECTOR_BODY_RECEIVE_TIMEOUT_MS,
  };
  const failures = new FailureThrottle(
    deps.clock,
    deps.config.FAILED_ATTEMPTS_PER_ADDRESS,
    deps.config.FAILED_ATTEMPTS_WINDOW_MS,
  );
  const failed = (request: FastifyRequest, reason: string): void => {
    failures.failed(request.ip);
    deps.metrics.failedAttempts.inc({ reason });
  };

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (request, payload, done) => {
      readCallBody(request, payload as Readable, limits, (ticket) => session.ticketIsLive(ctx, ticket)).then(
        (call) => done(null, call),
        (error: unknown) => done(error as Error),
      );
    });
    scope.setErrorHandler((error, request, reply) => {
      const fault = faultOf(request, error);
      if (fault.clientFault) failed(request, fault.reason);
      // A body refused before its end: the connection closes once the fault is written, unread rest and all.
      if (!request.raw.complete) void reply.header("Connection", "close");
      return reply.code(500).type(SOAP_CONTENT_TYPE).send(soapFault(fault.message, fault.faultCode));
    });
    scope.addHook("onRequest", async (request, reply) => {
      if (request.method !== "POST") return;
      const waitMs = failures.blockedForMs(request.ip);
      if (waitMs === 0) return;
      deps.metrics.failedAttempts.inc({ reason: "throttled" });
      const seconds = Math.ceil(waitMs / 1000);
      return reply
        .code(429)
        .header("Retry-After", String(seconds))
        .header("Connection", "close")
        .type(SOAP_CONTENT_TYPE)
        .send(
          soapFault(
            `Too many failed calls from this address; try again in ${seconds} s. The Web Connector will try again at its next update.`,
          ),
        );
    });

    scope.get(CONNECTOR_PATH, { config: ROUTE_CONFIG, logLevel: "warn" }, async (_request, reply) =>
      reply.type("text/xml; charset=utf-8").send(wsdlDocument(deps.config.connectorUrl)),
    );
    scope.post(
      CONNECTOR_PATH,
      { config: ROUTE_CONFIG, logLevel: "warn", bodyLimit: limits.bodyBytes },
      async (request, reply) => {
        const call = callOf(request);
        void reply.type(SOAP_CONTENT_TYPE);
        if (call.method !== "sendRequestXML") {
          const result = await dispatch(ctx, call);
          const refusal = refusalOf(call, result);
          if (refusal !== null) failed(request, refusal);
          return reply.send(soapResponse(call.method, result));
        }
        // Only a held call watches for a hang-up: the others answer at once.
        const callerGone = new AbortController();
        // The response closing before it was written means the connector hung up.
        reply.raw.once("close", () => {
          if (!reply.raw.writableFinished) callerGone.abort(HUNG_UP);
        });
        const result = await dispatch(ctx, call, callerGone.signal);
        if (result !== "") {
          reply.raw.once("close", () => {
            if (!reply.raw.writableFinished) void session.connectorHungUp(ctx, call.ticket);
          });
          if (callerGone.signal.aborted) await session.connectorHungUp(ctx, call.ticket);
        }
        return reply.send(soapResponse(call.method, result));
      },
    );
    scope.route({
      method: ["PUT", "PATCH", "DELETE", "OPTIONS"],
      url: CONNECTOR_PATH,
      config: ROUTE_CONFIG,
      handler: async (request, reply) =>
        reply
          .code(405)
          .header("Allow", "GET, HEAD, POST")
          .type(SOAP_CONTENT_TYPE)
          .send(soapFault(`The connector endpoint takes SOAP calls by POST, not ${request.method}.`)),
    });
  });
}

/** The call its body reader read (`call-body.ts`); a call without a body is refused here. */
function callOf(request: FastifyRequest): SoapCall {
  const body = request.body as SoapCall | undefined;
  if (body === undefined || body === null || typeof body !== "object")
    throw new SoapParseError("The request body is empty.");
  return body;
}

/**
 * Answers that tell a caller its credentials were wrong, counted against its address: a refused
 * login, and a ticket no session ever had (a closed or expired session's ticket is a real
 * connector's, and is not counted).
 */
function refusalOf(call: SoapCall, result: SoapResult): string | null {
  if (call.method === "authenticate" && Array.isArray(result) && result[1] === "nvu") return "login_refused";
  if (
    (call.method === "getLastError" || call.method === "closeConnection") &&
    result === session.TEXTS.unknownTicket
  )
    return "unknown_ticket";
  return null;
}

interface Fault {
  message: string;
  faultCode: string;
  /** The caller's own fault (counted against its address), not the service's. */
  clientFault: boolean;
  reason: string;
}

/** Every failure of the endpoint as a SOAP 1.1 Fault (answered with HTTP 500, SOAP 1.1 §6.2). */
function faultOf(request: FastifyRequest, error: unknown): Fault {
  const framework = error as Partial<FastifyError>;
  if (error instanceof CallTooLargeError)
    return { message: error.message, faultCode: "soap:Client", clientFault: true, reason: "too_large" };
  if (error instanceof SoapParseError)
    return { message: error.message, faultCode: error.faultCode, clientFault: true, reason: "not_a_call" };
  if (error instanceof BodyTimeoutError)
    return { message: error.message, faultCode: "soap:Client", clientFault: true, reason: "body_timeout" };
  if (framework.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return {
      message: `The request body is larger than the connector endpoint's limit of ${request.routeOptions.bodyLimit} bytes.`,
      faultCode: "soap:Client",
      clientFault: true,
      reason: "too_large",
    };
  }
  if (typeof framework.statusCode === "number" && framework.statusCode < 500) {
    return {
      message: `The request could not be read: ${framework.message ?? "bad request"}`,
      faultCode: "soap:Client",
      clientFault: true,
      reason: "not_a_call",
    };
  }
  if (isStoreUnavailable(error)) {
    // The store does not answer (decision 0019): the connector stops and comes back at its next update.
    request.log.warn({ err: error }, "connector call failed: the store does not answer");
    return {
      message: "The service is temporarily unavailable. The Web Connector will try again at its next update.",
      faultCode: "soap:Server",
      clientFault: false,
      reason: "store",
    };
  }
  request.log.error({ err: error }, "connector endpoint failed");
  return {
    message: "The service could not process this call. The Web Connector will try again at its next update.",
    faultCode: "soap:Server",
    clientFault: false,
    reason: "internal",
  };
}

/** Why a held call's signal aborts when its connector hangs up (a shared reason: no DOMException per abort). */
const HUNG_UP = new Error("the connector hung up");
/** The signal of a call that is never held: it never aborts. */
const NEVER = new AbortController().signal;

async function dispatch(
  ctx: session.ConnectorContext,
  call: SoapCall,
  callerGone: AbortSignal = NEVER,
): Promise<SoapResult> {
  ctx.deps.metrics.connectorCalls.inc({ method: call.method });
  switch (call.method) {
    case "serverVersion":
    case "getServerVersion":
      return SERVER_VERSION;
    case "clientVersion":
      return "";
    case "authenticate":
      return session.authenticate(ctx, call.strUserName, call.strPassword);
    case "sendRequestXML":
      return session.sendRequestXML(
        ctx,
        {
          ticket: call.ticket,
          hcp: call.strHCPResponse,
          companyFileName: call.strCompanyFileName,
          country: call.qbXMLCountry,
          major: call.qbXMLMajorVers,
          minor: call.qbXMLMinorVers,
        },
        callerGone,
      );
    case "receiveResponseXML":
      return session.receiveResponseXML(ctx, call.ticket, call.response, call.hresult, call.message);
    case "connectionError":
      return session.connectionError(ctx, call.ticket, call.hresult, call.message);
    case "getLastError":
      return session.getLastError(ctx, call.ticket);
    case "closeConnection":
      return session.closeConnection(ctx, call.ticket);
    case "getInteractiveURL":
      return "";
    case "interactiveDone":
      return "Done";
    case "interactiveRejected":
      return "Interactive mode is not used by this service.";
  }
}
