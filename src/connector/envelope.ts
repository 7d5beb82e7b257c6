/**
 * Reads a SOAP 1.1 envelope with its XML namespaces resolved (SOAP 1.1 §4; Namespaces in XML 1.0).
 *
 * A parser that drops prefixes cannot tell `<getLastError xmlns="http://developer.intuit.com/">` from
 * the same element in any other namespace, nor a SOAP 1.1 envelope from a SOAP 1.2 one; the
 * connector protocol is defined by namespace (programmer's guide p.41), so they are resolved here,
 * once, from the `xmlns` declarations in scope. Errors carry the SOAP 1.1 fault code that names
 * the kind of problem: `VersionMismatch` (not a SOAP 1.1 envelope), `MustUnderstand` (a header
 * entry we must process but do not know) or `Client` (anything else wrong with the message).
 */
import { XmlReadError, readNamespaced, type NamespacedElement } from "../ledger/xml/parse.ts";

/** SOAP 1.1 envelope namespace. */
export const SOAP_ENVELOPE_NAMESPACE = "http://schemas.xmlsoap.org/soap/envelope/";

/** SOAP 1.2 envelope namespace: recognised only to refuse it by name. */
export const SOAP_12_ENVELOPE_NAMESPACE = "http://www.w3.org/2003/05/soap-envelope";

/** Thrown when a body is not a SOAP envelope carrying a known connector operation. */
export class SoapParseError extends Error {
  override name = "SoapParseError";
  /**
   * The SOAP 1.1 fault code (§4.4.1): `soap:VersionMismatch`, `soap:MustUnderstand`, `soap:Client`
   * or `soap:Server` when the service answers with it, or whatever a peer's fault carried.
   */
  readonly faultCode: string;

  constructor(message: string, faultCode: string = "soap:Client") {
    super(message);
    this.faultCode = faultCode;
  }
}

/** Thrown by the client-side parser when the peer answered with a SOAP Fault. */
export class SoapFaultError extends SoapParseError {
  override name = "SoapFaultError";

  constructor(faultCode: string, faultString: string) {
    super(faultString, faultCode);
  }
}

/** An element of the envelope with its namespace resolved (the reader's {@link NamespacedElement}). */
export type SoapElement = NamespacedElement;

/** The child elements of an element, in document order (repeats kept). */
export function childElements(element: SoapElement): readonly SoapElement[] {
  return element.children;
}

/**
 * The text content of an element; `<x />`, `<x></x>`, whitespace only and `<x xsi:nil="true" />`
 * read as `""`. Child elements are refused: every connector parameter is a string.
 */
export function textContent(element: SoapElement): string {
  if (element.children.length > 0) throw new SoapParseError(`<${element.name}> must contain text only`);
  return element.text.trim() === "" ? "" : element.text;
}

/** The value of an attribute given by namespace and local name, if present. */
function attribute(element: SoapElement, namespace: string, name: string): string | undefined {
  for (const attr of element.attrs) {
    const colon = attr.name.indexOf(":");
    if (colon > 0 && attr.name.slice(colon + 1) === name && attr.namespace === namespace) return attr.value;
  }
  return undefined;
}

/** The envelope element, read in one pass with namespaces resolved; SoapParseError when unreadable. */
function readDocument(source: string): SoapElement {
  try {
    return readNamespaced(source);
  } catch (error) {
    if (!(error instanceof XmlReadError)) throw error;
    if (error.message === "a DOCTYPE is not allowed")
      throw new SoapParseError("A SOAP message must not contain a DTD.");
    const unbound = /^unbound namespace prefix: "(.*)"/.exec(error.message);
    if (unbound)
      throw new SoapParseError(
        `The namespace prefix "${unbound[1]}" of an element or attribute is not declared.`,
      );
    throw new SoapParseError(`Not well-formed XML: ${error.message}`);
  }
}

/**
 * Parses a SOAP 1.1 envelope and returns the elements of its Body. Throws {@link SoapParseError}
 * for anything that is not a well-formed SOAP 1.1 message: no DTD (SOAP 1.1 §3 forbids one, and
 * refusing it keeps entity declarations out of the parser), a SOAP 1.2 or unknown envelope
 * namespace, a header entry marked `mustUnderstand`, or a missing Body. The envelope is read once:
 * the embedded request or answer document is decoded from its escaped text in the same pass.
 */
export function readEnvelope(body: string): readonly SoapElement[] {
  const source = body.startsWith("\uFEFF") ? body.slice(1) : body;
  if (source.trim() === "") throw new SoapParseError("The request body is empty.");
  const envelope = readDocument(source);
  if (envelope.name !== "Envelope") throw new SoapParseError("The body is not a SOAP Envelope.");
  if (envelope.namespace === SOAP_12_ENVELOPE_NAMESPACE) {
    throw new SoapParseError(
      `This is a SOAP 1.2 envelope (${SOAP_12_ENVELOPE_NAMESPACE}); the connector protocol is SOAP 1.1 (${SOAP_ENVELOPE_NAMESPACE}).`,
      "soap:VersionMismatch",
    );
  }
  if (envelope.namespace !== SOAP_ENVELOPE_NAMESPACE) {
    throw new SoapParseError(
      `The Envelope must be in the SOAP 1.1 namespace ${SOAP_ENVELOPE_NAMESPACE} (found ${envelope.namespace ?? "no namespace"}).`,
      "soap:VersionMismatch",
    );
  }
  const parts = envelope.children.filter((element) => element.namespace === SOAP_ENVELOPE_NAMESPACE);
  for (const header of parts.filter((element) => element.name === "Header")) {
    for (const entry of header.children) {
      if (attribute(entry, SOAP_ENVELOPE_NAMESPACE, "mustUnderstand") === "1") {
        throw new SoapParseError(
          `The header entry <${entry.name}> must be understood, and this service does not know it.`,
          "soap:MustUnderstand",
        );
      }
    }
  }
  const soapBody = parts.find((element) => element.name === "Body");
  if (!soapBody) throw new SoapParseError("The SOAP Envelope has no Body.");
  return soapBody.children;
}
