import { z } from "zod";
import { ServiceError } from "../../errors/service-error.ts";
import {
  isWriteMessageSet,
  messageSet,
  parsePassthroughXml,
  type RequestDocument,
} from "../../ledger/xml/message-set.ts";
import { parseDocument } from "../../ledger/xml/parse.ts";
import {
  HEALTH_CHECK_MESSAGES,
  HEALTH_CHECK_OPERATION,
  PASSTHROUGH_OPERATION,
} from "../../ledger/operations.ts";
import {
  DEFAULT_TIMEOUT_SECONDS,
  HEALTH_CHECK_TIMEOUT_SECONDS,
  parseCallOptions,
} from "../../requests/call-options.ts";
import {
  END_USER_HEADER,
  IDEMPOTENCY_HEADER,
  PREFER_HEADER,
  QUEUE_TTL_HEADER,
  timeoutHeader,
} from "../app-headers.ts";
import { gateError, gateMessages } from "../../ledger/connection-gate.ts";
import { runApplicationOperation } from "../application.ts";
import { defineRoute } from "../route.ts";
import { parseWith } from "../validation.ts";
import { passthroughJsonResultSchema } from "../response-schemas.ts";

let healthCheck: RequestDocument | null = null;

/** The health check's message set, read once from its text. */
function healthCheckDocument(): RequestDocument {
  const message = parseDocument(HEALTH_CHECK_MESSAGES)?.root;
  if (!message) throw new Error("the health check's message does not parse");
  healthCheck ??= messageSet([message]);
  return healthCheck;
}

const passthroughJsonBody = z.strictObject({ xml: z.string().min(1, { error: "`xml` must not be empty." }) });

/** Passthrough and health check (architecture §5). */
export const ledgerSpecialRoutes = [
  defineRoute({
    method: "POST",
    url: "/v1/end-users/:id/passthrough/:integrationSlug",
    operationId: PASSTHROUGH_OPERATION,
    summary: "Send raw request messages (XML) to the end user's application",
    tag: "Passthrough",
    // Read or write depends on the body: the handler refuses writes to read-only keys itself.
    write: false,
    idempotency: "request",
    // The body is XML or `{xml}`: the handler reads it itself.
    input: "rawBody",
    pathParams: ["id", "integrationSlug"],
    examples: {
      read: { xml: "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>" },
      write: { xml: "<CustomerAddRq><CustomerAdd><Name>Example Co</Name></CustomerAdd></CustomerAddRq>" },
    },
    headers: [
      timeoutHeader(),
      PREFER_HEADER,
      QUEUE_TTL_HEADER,
      { ...IDEMPOTENCY_HEADER, description: `Writes: ${IDEMPOTENCY_HEADER.description}` },
    ],
    openapi: {
      // The XML itself (application/xml or text/xml), or JSON `{xml}`.
      requestBody: {
        type: "object",
        required: ["xml"],
        additionalProperties: false,
        properties: {
          xml: {
            type: "string",
            minLength: 1,
            description: "The request messages, or a whole request document",
          },
        },
      },
      requestMedia: {
        "application/xml": {
          type: "string",
          description: "The request messages, or a whole request document",
        },
        "text/xml": { type: "string", description: "The request messages, or a whole request document" },
      },
      // An XML call is answered with the response document itself.
      responseMedia: { "application/xml": { type: "string", description: "The response document" } },
    },
    response: {
      status: 200,
      description: "The application's response document (XML, or `{xml}` for a JSON call)",
      schema: passthroughJsonResultSchema,
    },
    handler: async ({ deps, principal, params, request, reply }) => {
      if (params.integrationSlug !== "ledger_desktop") {
        throw new ServiceError("INVALID_PARAMETER", {
          param: "integrationSlug",
          message: "The only integration is `ledger_desktop`.",
        });
      }
      const options = parseCallOptions(
        request.headers,
        { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS },
        params.id ?? "",
      );
      const asXml = typeof request.body === "string";
      const xml = asXml ? (request.body as string) : parseWith(passthroughJsonBody, request.body ?? {}).xml;
      const param = asXml ? "body" : "xml";
      const passthrough = parsePassthroughXml(xml, param);
      const isWrite = isWriteMessageSet(passthrough.requestNames);
      if (isWrite && principal.readOnly)
        throw new ServiceError("API_KEY_READ_ONLY", {
          message: "A read-only API key cannot send write messages.",
        });
      return runApplicationOperation(
        deps,
        request,
        {
          principal,
          operationId: PASSTHROUGH_OPERATION,
          method: request.method,
          path: request.url.split("?")[0] ?? request.url,
          isWrite,
          document: { onError: passthrough.onError, messages: passthrough.messages },
          fingerprintBody: { xml },
          options,
          // Billing counts the document like its messages sent singly (decision 0019).
          units: passthrough.requestNames.length,
          // The connection's version and edition gate the messages before anything is queued.
          beforeQueue: async (connection) => {
            const refusal = gateMessages(passthrough.messages, connection);
            if (refusal) throw gateError(refusal, param);
          },
        },
        (result) => {
          const responseXml = (result as { xml: string }).xml;
          return asXml
            ? { body: responseXml, headers: { "content-type": "application/xml; charset=utf-8" } }
            : { body: { xml: responseXml } };
        },
        reply,
      );
    },
  }),
  defineRoute({
    method: "GET",
    url: "/v1/ledger-desktop/health-check",
    operationId: HEALTH_CHECK_OPERATION,
    summary: "Make a real round trip to the end user's application",
    tag: "Health check",
    headers: [
      END_USER_HEADER,
      timeoutHeader(HEALTH_CHECK_TIMEOUT_SECONDS),
      PREFER_HEADER,
      QUEUE_TTL_HEADER,
      {
        ...IDEMPOTENCY_HEADER,
        description: "1 to 255 printable ASCII characters: a repeat attaches to the first check",
      },
    ],
    response: {
      status: 200,
      description: "`{status, duration, durationMs, ledger: {product, xmlVersion, companyName}}`",
      schema: z
        .object({
          status: z.literal("ok"),
          duration: z.number().int().meta({
            description:
              "Milliseconds the round trip took, from the call to the application's answer: the same value as `durationMs`, under the name the market's clients read.",
          }),
          durationMs: z.number().int().meta({
            description: "Milliseconds the round trip took, from the call to the application's answer.",
          }),
          ledger: z.object({
            product: z.string().nullable(),
            xmlVersion: z.string().nullable(),
            companyName: z.string().nullable(),
          }),
        })
        .meta({ id: "HealthCheck" }),
    },
    handler: async ({ deps, principal, request, reply }) =>
      runApplicationOperation(
        deps,
        request,
        {
          principal,
          operationId: HEALTH_CHECK_OPERATION,
          method: "GET",
          path: "/v1/ledger-desktop/health-check",
          isWrite: false,
          document: healthCheckDocument(),
          fingerprintBody: null,
          options: parseCallOptions(request.headers, { timeoutSeconds: HEALTH_CHECK_TIMEOUT_SECONDS }),
        },
        (result) => ({ body: result }),
        reply,
      ),
  }),
];
