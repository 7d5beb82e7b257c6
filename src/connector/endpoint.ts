import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { decodeSoapBody } from "./body-encoding.ts";
import {
  CONNECTOR_NAMESPACE,
  SOAP_CONTENT_TYPE,
  SoapParseError,
  parseSoapCall,
  soapFault,
  soapResponse,
  type SoapCall,
  type SoapResult,
} from "./soap.ts";
import { wsdlDocument } from "./wsdl.ts";
import { isStoreUnavailable } from "../store/unavailable.ts";
import { QuietSessions } from "./quiet-sessions.ts";
import * as session from "./session.ts";

export const SERVER_VERSION = "ledger-bridge 0.1.0";

/** Where the connector posts its calls (the `.qwc` AppURL) and where `?wsdl` is served. */
export const CONNECTOR_PATH = "/connector";

/** Media types a SOAP call may arrive with; SOAP 1.2's is accepted only to be refused by name. */
const SOAP_MEDIA_TYPES: ReadonlySet<string> = new Set([
  "text/xml",
  "application/xml",
  "application/soap+xml",
]);

const ROUTE_CONFIG = { rateLimit: false } as const;

/**
 * `POST /connector`: the Web Connector's SOAP endpoint; `GET /connector?wsdl`: its WSDL. Thin:
 * decode and parse the envelope, call the session function, serialise the result.
 *
 * The endpoint lives in its own plugin scope so that whatever goes wrong is answered in SOAP:
 * its own body parser (raw bytes, decoded by declared charset, with the connector body limit),
 * and its own error handler, which turns every failure (malformed XML, wrong namespace or
 * SOAPAction, SOAP 1.2, oversize body, wrong content type, an internal error) into a SOAP 1.1
 * Fault with HTTP 500, as SOAP 1.1 §6.2 requires, never the API's JSON error body.
 */
export function registerConnectorEndpoint(app: FastifyInstance, deps: Deps): void {
  const shutdown = new AbortController();
  const held = new Set<AbortController>();
  const quiet = new QuietSessions(deps.store.notifier);
  // Sessions whose connector stopped calling without closing are forgotten after two holds and a minute.
  const forgetAfterMs = 2 * deps.config.CONNECTOR_HOLD_MS + 60_000;
  const pruning = setInterval(() => quiet.prune(forgetAfterMs), 60_000);
  pruning.unref();
  deps.activity.start(deps.db, deps.logger);
  app.addHook("onClose", async () => {
    shutdown.abort();
    for (const call of held) call.abort();
    clearInterval(pruning);
    quiet.clear();
    await deps.activity.stop(deps.db).catch((error: unknown) => {
      deps.logger.warn({ err: error }, "the last activity stamps could not be written");
    });
  });
  const ctx: session.ConnectorContext = {
    deps,
    shutdown: shutdown.signal,
    held,
    quiet,
    holdClock: session.HOLD_CLOCK,
  };
  const bodyLimit = deps.config.CONNECTOR_BODY_LIMIT_BYTES;

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((error, request, reply) => sendFault(request, reply, error, bodyLimit));

    scope.get(CONNECTOR_PATH, { config: ROUTE_CONFIG, logLevel: "warn" }, async (_request, reply) =>
      reply.type("text/xml; charset=utf-8").send(wsdlDocument(deps.config.connectorUrl)),
    );
    scope.post(
      CONNECTOR_PATH,
      { config: ROUTE_CONFIG, logLevel: "warn", bodyLimit },
      async (request, reply) => {
        const call = readCall(request);
        void reply.type(SOAP_CONTENT_TYPE);
        if (call.method !== "sendRequestXML")
          return reply.send(soapResponse(call.method, await dispatch(ctx, call)));
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

/** The call in a request: media type, character encoding, envelope, operation and SOAPAction checked. */
function readCall(request: FastifyRequest): SoapCall {
  const contentType = request.headers["content-type"];
  const mediaType = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (!SOAP_MEDIA_TYPES.has(mediaType)) {
    throw new SoapParseError(
      `A SOAP 1.1 call is sent as text/xml, not ${mediaType === "" ? "without a Content-Type" : mediaType}.`,
    );
  }
  const bytes = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const call = parseSoapCall(decodeSoapBody(bytes, contentType).text);
  checkSoapAction(request.headers["soapaction"], call.method);
  return call;
}

/**
 * The `SOAPAction` header, when given, must name the operation in the body (the WSDL binds each
 * operation to namespace + method). Absent or `""` means the sender states no intent (SOAP 1.1 §6.1.1).
 */
function checkSoapAction(header: string | string[] | undefined, method: string): void {
  if (header === undefined) return;
  const value = (Array.isArray(header) ? header.join(",") : header).trim().replace(/^"(.*)"$/, "$1");
  if (value === "" || value === `${CONNECTOR_NAMESPACE}${method}`) return;
  throw new SoapParseError(
    `The SOAPAction header "${value}" does not match the operation ${method} in the body (expected "${CONNECTOR_NAMESPACE}${method}").`,
  );
}

/** Every failure of the endpoint as a SOAP 1.1 Fault (HTTP 500, SOAP 1.1 §6.2). */
function sendFault(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  bodyLimit: number,
): FastifyReply {
  let message: string;
  let faultCode: string;
  const framework = error as Partial<FastifyError>;
  if (error instanceof SoapParseError) {
    message = error.message;
    faultCode = error.faultCode;
  } else if (framework.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    message = `The request body is larger than the connector endpoint's limit of ${bodyLimit} bytes.`;
    faultCode = "soap:Client";
  } else if (typeof framework.statusCode === "number" && framework.statusCode < 500) {
    message = `The request could not be read: ${framework.message ?? "bad request"}`;
    faultCode = "soap:Client";
  } else if (isStoreUnavailable(error)) {
    // The store does not answer (decision 0019): the connector stops and comes back at its next update.
    request.log.warn({ err: error }, "connector call failed: the store does not answer");
    message = "The service is temporarily unavailable. The Web Connector will try again at its next update.";
    faultCode = "soap:Server";
  } else {
    request.log.error({ err: error }, "connector endpoint failed");
    message = "The service could not process this call. The Web Connector will try again at its next update.";
    faultCode = "soap:Server";
  }
  return reply.code(500).type(SOAP_CONTENT_TYPE).send(soapFault(message, faultCode));
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
