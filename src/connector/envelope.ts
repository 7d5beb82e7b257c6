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
import { XMLParser, XMLValidator } from "fast-xml-parser";

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

/** A parsed element: text, or children and attributes (keys `@_name`), as fast-xml-parser gives them. */
export type XmlNode = Record<string, unknown>;

/** In-scope namespace declarations: prefix (`""` for the default namespace) → namespace name. */
export type NamespaceScope = ReadonlyMap<string, string>;

/** An element with its resolved namespace and the declarations in scope inside it. */
export interface SoapElement {
  /** Local name, without prefix. */
  name: string;
  /** Namespace name, or null for an element in no namespace. */
  namespace: string | null;
  node: XmlNode;
  scope: NamespaceScope;
}

export function isNode(value: unknown): value is XmlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Values must stay text: `parseTagValue:false` keeps `00123` and `13` as strings, `trimValues:false`
// keeps the trailing newline of the connector's embedded documents, and entities are decoded in a
// single pass by the library so `&amp;quot;` becomes `&quot;`, not `"`. Attributes are kept for the
// `xmlns` declarations and `mustUnderstand`.
const parser = new XMLParser({
  parseTagValue: false,
  parseAttributeValue: false,
  removeNSPrefix: false,
  htmlEntities: true,
  trimValues: false,
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: { enabled: true, maxExpandedLength: Number.MAX_SAFE_INTEGER },
});

const XMLNS = "@_xmlns";

/** The scope inside `node`: its parent's declarations plus its own `xmlns` attributes. */
function scopeInside(node: unknown, parent: NamespaceScope): NamespaceScope {
  if (!isNode(node)) return parent;
  let scope: Map<string, string> | null = null;
  for (const [key, value] of Object.entries(node)) {
    if (key !== XMLNS && !key.startsWith(`${XMLNS}:`)) continue;
    scope ??= new Map(parent);
    scope.set(key === XMLNS ? "" : key.slice(XMLNS.length + 1), typeof value === "string" ? value : "");
  }
  return scope ?? parent;
}

function localName(qualified: string): string {
  const colon = qualified.indexOf(":");
  return colon < 0 ? qualified : qualified.slice(colon + 1);
}

/** The namespace of a qualified name in `scope`; an empty default declaration means no namespace. */
function namespaceOf(qualified: string, scope: NamespaceScope): string | null {
  const colon = qualified.indexOf(":");
  const prefix = colon < 0 ? "" : qualified.slice(0, colon);
  const namespace = scope.get(prefix);
  if (namespace === undefined && prefix !== "")
    throw new SoapParseError(`The namespace prefix "${prefix}" of <${qualified}> is not declared.`);
  return namespace === undefined || namespace === "" ? null : namespace;
}

/** The child elements of a node, in document order, with namespaces resolved (repeats kept). */
export function childElements(node: unknown, scope: NamespaceScope): SoapElement[] {
  if (!isNode(node)) return [];
  const children: SoapElement[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith("@_") || key === "#text") continue;
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
      const inner = scopeInside(item, scope);
      children.push({
        name: localName(key),
        namespace: namespaceOf(key, inner),
        node: isNode(item) ? item : typeof item === "string" && item.trim() !== "" ? { "#text": item } : {},
        scope: inner,
      });
    }
  }
  return children;
}

/**
 * The text content of an element; `<x />`, `<x></x>` and `<x xsi:nil="true" />` read as `""`.
 * Child elements are refused: every connector parameter is a string.
 */
export function textContent(element: SoapElement): string {
  if (childElements(element.node, element.scope).length > 0)
    throw new SoapParseError(`<${element.name}> must contain text only`);
  const text = element.node["#text"];
  return typeof text === "string" ? text : "";
}

/** The value of an attribute given by namespace and local name, if present. */
function attribute(element: SoapElement, namespace: string, name: string): string | undefined {
  for (const [key, value] of Object.entries(element.node)) {
    if (!key.startsWith("@_") || key.startsWith(XMLNS)) continue;
    const qualified = key.slice(2);
    if (
      qualified.includes(":") &&
      localName(qualified) === name &&
      namespaceOf(qualified, element.scope) === namespace
    )
      return typeof value === "string" ? value : "";
  }
  return undefined;
}

/**
 * Parses a SOAP 1.1 envelope and returns the elements of its Body. Throws {@link SoapParseError}
 * for anything that is not a well-formed SOAP 1.1 message: no DTD (SOAP 1.1 §3 forbids one, and
 * refusing it keeps entity declarations out of the parser), a SOAP 1.2 or unknown envelope
 * namespace, a header entry marked `mustUnderstand`, or a missing Body.
 */
export function readEnvelope(body: string): SoapElement[] {
  const source = body.startsWith("\uFEFF") ? body.slice(1) : body;
  if (source.trim() === "") throw new SoapParseError("The request body is empty.");
  if (/<!DOCTYPE/i.test(source)) throw new SoapParseError("A SOAP message must not contain a DTD.");
  const validation = XMLValidator.validate(source);
  if (validation !== true) {
    throw new SoapParseError(`Not well-formed XML: ${validation.err.msg} (line ${validation.err.line}).`);
  }
  let document: unknown;
  try {
    document = parser.parse(source);
  } catch (err) {
    throw new SoapParseError(`Not well-formed XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const envelope = childElements(document, new Map()).find((element) => element.name === "Envelope");
  if (!envelope) throw new SoapParseError("The body is not a SOAP Envelope.");
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
  const parts = childElements(envelope.node, envelope.scope).filter(
    (element) => element.namespace === SOAP_ENVELOPE_NAMESPACE,
  );
  for (const header of parts.filter((element) => element.name === "Header")) {
    for (const entry of childElements(header.node, header.scope)) {
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
  return childElements(soapBody.node, soapBody.scope);
}
