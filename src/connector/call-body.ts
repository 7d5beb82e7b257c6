/**
 * The connector endpoint's body, read as it arrives (issue 23, decision 0031). The endpoint faces
 * the internet and anyone may call it, so what it does before it has seen credentials is bounded
 * by design:
 *
 *   1. the media type and a declared `Content-Length` are checked before a byte is read;
 *   2. bytes are decoded by their declared encoding and read by {@link SoapCallReader}, which
 *      judges each element as it opens: a body that is not a call of the protocol is refused at
 *      its first wrong element, whatever its size, and no tree is built;
 *   3. at most `unauthenticatedBytes` are read unless the call has shown the ticket of a live
 *      session by then (one store read, once per call); such a call may grow to `bodyBytes`, and
 *      its body gets the connector's longer receive deadline.
 *
 * A refusal stops the reading at once; the endpoint answers with a SOAP Fault and closes the
 * connection, so the unread rest of the body is never received.
 */
import type { Readable } from "node:stream";
import type { FastifyRequest } from "fastify";
import { BodyDecoder } from "./body-encoding.ts";
import { SoapCallReader } from "./call-reader.ts";
import { CONNECTOR_NAMESPACE, SoapParseError, type SoapCall, type SoapMethod } from "./soap.ts";

/** Media types a SOAP call may arrive with; SOAP 1.2's is accepted only to be refused by name. */
const SOAP_MEDIA_TYPES: ReadonlySet<string> = new Set([
  "text/xml",
  "application/xml",
  "application/soap+xml",
]);

/** A body larger than the endpoint reads (the limit that applied is in the message). */
export class CallTooLargeError extends SoapParseError {
  override name = "CallTooLargeError";
}

export interface CallBodyLimits {
  /** Bytes read before the call has shown a live session's ticket. */
  unauthenticatedBytes: number;
  /** Bytes any call may have. */
  bodyBytes: number;
  /** How long a live session's call may take to arrive, from the start of its reading. */
  sessionReceiveMs: number;
}

/**
 * Reads the call in `payload` (the request's body stream). `liveTicket` says whether a ticket
 * belongs to a live session; it is asked at most once, and only when the body outgrows
 * `unauthenticatedBytes`.
 */
export function readCallBody(
  request: FastifyRequest,
  payload: Readable,
  limits: CallBodyLimits,
  liveTicket: (ticket: string) => Promise<boolean>,
): Promise<SoapCall> {
  const contentType = request.headers["content-type"];
  checkMediaType(contentType);
  const declared = Number(request.headers["content-length"]);
  if (declared > limits.bodyBytes) throw tooLarge(limits.bodyBytes);
  const decoder = new BodyDecoder(contentType);
  const reader = new SoapCallReader((method) => checkSoapAction(request.headers["soapaction"], method));
  let received = 0;
  let allowed = Math.min(limits.unauthenticatedBytes, limits.bodyBytes);
  let checked = false;

  return new Promise<SoapCall>((resolve, reject) => {
    let settled = false;
    const finish = (error: unknown, call?: SoapCall): void => {
      if (settled) return;
      settled = true;
      payload.removeListener("data", onData);
      payload.removeListener("end", onEnd);
      payload.removeListener("error", onError);
      if (error !== null) {
        payload.pause();
        reject(error instanceof Error ? error : new Error("the body could not be read"));
      } else resolve(call as SoapCall);
    };
    const feed = (bytes: Buffer): void => {
      received += bytes.length;
      reader.write(decoder.write(bytes));
    };
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      try {
        if (received + chunk.length <= allowed) return feed(chunk);
        // Up to the limit first: what it holds may already be refused, or show the ticket.
        const room = allowed - received;
        feed(chunk.subarray(0, room));
        const rest = chunk.subarray(room);
        if (checked) throw tooLarge(limits.bodyBytes);
        checked = true;
        const ticket = reader.ticket;
        if (ticket === null) throw tooLargeWithoutSession(limits.unauthenticatedBytes, reader.methodName);
        payload.pause();
        liveTicket(ticket).then(
          (live) => {
            if (settled) return;
            if (!live) return finish(tooLargeWithoutSession(limits.unauthenticatedBytes, reader.methodName));
            allowed = limits.bodyBytes;
            request.bodyDeadline?.allow(limits.sessionReceiveMs);
            onData(rest);
            if (!settled) payload.resume();
          },
          (error: unknown) => finish(error),
        );
      } catch (error) {
        finish(error);
      }
    };
    const onEnd = (): void => {
      try {
        reader.write(decoder.end());
        finish(null, reader.end());
      } catch (error) {
        finish(error);
      }
    };
    const onError = (error: Error): void => finish(error);
    payload.on("data", onData);
    payload.once("end", onEnd);
    payload.once("error", onError);
    payload.resume();
  });
}

function tooLarge(limit: number): CallTooLargeError {
  return new CallTooLargeError(
    `The request body is larger than the connector endpoint's limit of ${limit} bytes.`,
  );
}

function tooLargeWithoutSession(limit: number, method: SoapMethod | null): CallTooLargeError {
  return new CallTooLargeError(
    `A connector call without a live session's ticket may hold at most ${limit} bytes` +
      `${method === null ? "" : ` (this is ${method})`}; authenticate first, and send the ticket as the call's first parameter.`,
  );
}

/** A SOAP 1.1 call is sent as `text/xml` (SOAP 1.2's `application/soap+xml` is refused by the reader). */
function checkMediaType(contentType: string | undefined): void {
  const mediaType = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (!SOAP_MEDIA_TYPES.has(mediaType)) {
    throw new SoapParseError(
      `A SOAP 1.1 call is sent as text/xml, not ${mediaType === "" ? "without a Content-Type" : mediaType}.`,
    );
  }
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
