import type { FastifyInstance } from "fastify";
import type { Deps } from "../deps.ts";
import {
  SOAP_CONTENT_TYPE,
  SoapParseError,
  parseSoapCall,
  soapFault,
  soapResponse,
  type SoapCall,
  type SoapResult,
} from "./soap.ts";
import { wsdlDocument } from "./wsdl.ts";
import * as session from "./session.ts";

export const SERVER_VERSION = "ledger-bridge 0.1.0";

/**
 * `POST /connector`: the Web Connector's SOAP endpoint; `GET /connector?wsdl`: its WSDL. Thin:
 * parse the envelope, call the session function, serialise the result.
 */
export function registerConnectorEndpoint(app: FastifyInstance, deps: Deps): void {
  const shutdown = new AbortController();
  app.addHook("onClose", async () => shutdown.abort());
  const ctx: session.ConnectorContext = { deps, shutdown: shutdown.signal };

  app.get("/connector", { config: { rateLimit: false }, logLevel: "warn" }, async (_request, reply) =>
    reply.type("text/xml; charset=utf-8").send(wsdlDocument(deps.config.connectorUrl)),
  );
  app.post("/connector", { config: { rateLimit: false }, logLevel: "warn" }, async (request, reply) => {
    void reply.type(SOAP_CONTENT_TYPE);
    let call: SoapCall;
    try {
      call = parseSoapCall(typeof request.body === "string" ? request.body : "");
    } catch (error) {
      if (error instanceof SoapParseError) return reply.code(500).send(soapFault(error.message));
      throw error;
    }
    const callerGone = new AbortController();
    // The response closing before it was written means the connector hung up.
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) callerGone.abort();
    });
    const result = await dispatch(ctx, call, callerGone.signal);
    if (call.method === "sendRequestXML" && result !== "") {
      reply.raw.once("close", () => {
        if (!reply.raw.writableFinished) void session.connectorHungUp(ctx, call.ticket);
      });
      if (callerGone.signal.aborted) await session.connectorHungUp(ctx, call.ticket);
    }
    return reply.send(soapResponse(call.method, result));
  });
}

async function dispatch(
  ctx: session.ConnectorContext,
  call: SoapCall,
  callerGone: AbortSignal,
): Promise<SoapResult> {
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
