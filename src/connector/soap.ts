/**
 * SOAP 1.1 document/literal codec for the connector protocol (guide ledger-protocol.md §1).
 *
 * Both directions live here so that the bridge's SOAP endpoint and the simulated connector share
 * one definition of element names, parameter order and escaping. The wire format follows the
 * verbatim captures: a one-line envelope prefix, the method element in the connector namespace,
 * empty strings as self-closing elements (`<hresult />`), and embedded request/response documents
 * carried as entity-escaped text, never as markup.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";

/** The namespace the connector requires for every operation (PG p.41). */
export const CONNECTOR_NAMESPACE = "http://developer.intuit.com/";

/** SOAP 1.1 envelope namespace. */
export const SOAP_ENVELOPE_NAMESPACE = "http://schemas.xmlsoap.org/soap/envelope/";

/** Content type of every SOAP 1.1 request and response. */
export const SOAP_CONTENT_TYPE = "text/xml; charset=utf-8";

/** One call from the connector to the service, with the protocol's exact parameter names. */
export type SoapCall =
  | { method: "serverVersion" }
  | { method: "clientVersion"; strVersion: string }
  | { method: "authenticate"; strUserName: string; strPassword: string }
  | {
      method: "sendRequestXML";
      ticket: string;
      strHCPResponse: string;
      strCompanyFileName: string;
      qbXMLCountry: string;
      qbXMLMajorVers: string;
      qbXMLMinorVers: string;
    }
  | { method: "receiveResponseXML"; ticket: string; response: string; hresult: string; message: string }
  | { method: "connectionError"; ticket: string; hresult: string; message: string }
  | { method: "getLastError"; ticket: string }
  | { method: "closeConnection"; ticket: string }
  | { method: "getInteractiveURL"; wcTicket: string; sessionID: string }
  | { method: "interactiveDone"; wcTicket: string }
  | { method: "interactiveRejected"; wcTicket: string; reason: string }
  | { method: "getServerVersion"; ticket: string };

/** Name of a connector operation. */
export type SoapMethod = SoapCall["method"];

/** The value a method returns: `authenticate` an array of strings, `receiveResponseXML` an int. */
export type SoapResult = string | number | string[];

type ParameterName<M extends SoapMethod> = Exclude<keyof Extract<SoapCall, { method: M }>, "method">;

/**
 * Request parameters per method, in the order the WSDL's sequences declare them. The order matters
 * for serialising exactly like the connector; parsing is by name.
 */
export const SOAP_PARAMETERS = {
  serverVersion: [],
  clientVersion: ["strVersion"],
  authenticate: ["strUserName", "strPassword"],
  sendRequestXML: [
    "ticket",
    "strHCPResponse",
    "strCompanyFileName",
    "qbXMLCountry",
    "qbXMLMajorVers",
    "qbXMLMinorVers",
  ],
  receiveResponseXML: ["ticket", "response", "hresult", "message"],
  connectionError: ["ticket", "hresult", "message"],
  getLastError: ["ticket"],
  closeConnection: ["ticket"],
  getInteractiveURL: ["wcTicket", "sessionID"],
  interactiveDone: ["wcTicket"],
  interactiveRejected: ["wcTicket", "reason"],
  getServerVersion: ["ticket"],
} as const satisfies { readonly [M in SoapMethod]: readonly ParameterName<M>[] };

/** Every operation the codec knows, core ones first. */
export const SOAP_METHODS: readonly SoapMethod[] = [
  "serverVersion",
  "clientVersion",
  "authenticate",
  "sendRequestXML",
  "receiveResponseXML",
  "connectionError",
  "getLastError",
  "closeConnection",
  "getInteractiveURL",
  "interactiveDone",
  "interactiveRejected",
  "getServerVersion",
];

/** Thrown when a body is not a SOAP envelope carrying a known connector operation. */
export class SoapParseError extends Error {
  override name = "SoapParseError";
}

/** Thrown by {@link parseSoapResponse} when the peer answered with a SOAP Fault. */
export class SoapFaultError extends SoapParseError {
  override name = "SoapFaultError";
  /** The fault's `faultcode`, for example `soap:Client`. */
  readonly faultCode: string;

  constructor(faultCode: string, faultString: string) {
    super(faultString);
    this.faultCode = faultCode;
  }
}

/** Whether a string names a connector operation. */
export function isSoapMethod(name: string): name is SoapMethod {
  return Object.hasOwn(SOAP_PARAMETERS, name);
}

// Values must stay text: `parseTagValue:false` keeps `00123` and `13` as strings, `trimValues:false`
// keeps the trailing newline of the connector's embedded documents, and entities are decoded in a
// single pass by the library so `&amp;quot;` becomes `&quot;`, not `"`.
const parser = new XMLParser({
  parseTagValue: false,
  parseAttributeValue: false,
  removeNSPrefix: true,
  htmlEntities: true,
  trimValues: false,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: { enabled: true, maxExpandedLength: Number.MAX_SAFE_INTEGER },
});

const ENVELOPE_OPEN =
  '<?xml version="1.0" encoding="utf-8"?>' +
  `<soap:Envelope xmlns:soap="${SOAP_ENVELOPE_NAMESPACE}" ` +
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
  'xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body>';
const ENVELOPE_CLOSE = "</soap:Body></soap:Envelope>";

type XmlNode = Record<string, unknown>;

function isNode(value: unknown): value is XmlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Escapes text content the way the connector's .NET serialiser does: `&`, `<`, `>` always; quotes
 * stay literal (see the `.wire.xml` captures). A carriage return becomes `&#xD;` because a parser
 * would otherwise normalise it to a line feed. Characters XML 1.0 cannot carry at all (C0 controls
 * other than tab, line feed and carriage return; U+FFFE, U+FFFF; lone surrogates) are dropped,
 * since no reference to them is well-formed.
 */
export function escapeXmlText(text: string): string {
  return text.replace(/[&<>\r\uFFFE\uFFFF]|(?![\t\n\r\u007F-\u009F])\p{Cc}|\p{Cs}/gu, (ch) => {
    switch (ch) {
      case "&":
        return "&amp;";
      case "<":
        return "&lt;";
      case ">":
        return "&gt;";
      case "\r":
        return "&#xD;";
      default:
        return "";
    }
  });
}

function element(name: string, text: string): string {
  return text === "" ? `<${name} />` : `<${name}>${escapeXmlText(text)}</${name}>`;
}

function parseEnvelope(body: string): XmlNode {
  const source = body.startsWith("\uFEFF") ? body.slice(1) : body;
  if (source.trim() === "") throw new SoapParseError("empty body");
  // SOAP 1.1 §3 forbids a DTD; refusing it also keeps entity declarations out of the parser.
  if (/<!DOCTYPE/i.test(source)) throw new SoapParseError("a SOAP message must not contain a DTD");
  const validation = XMLValidator.validate(source);
  if (validation !== true) {
    throw new SoapParseError(`not well-formed XML: ${validation.err.msg} (line ${validation.err.line})`);
  }
  let document: unknown;
  try {
    document = parser.parse(source);
  } catch (err) {
    throw new SoapParseError(`not well-formed XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const envelope = isNode(document) ? document["Envelope"] : undefined;
  if (!isNode(envelope)) throw new SoapParseError("no SOAP Envelope");
  const soapBody = envelope["Body"];
  if (!isNode(soapBody)) throw new SoapParseError("no SOAP Body");
  return soapBody;
}

/** Reads a text child; `<x />`, `<x></x>` and a missing element all mean `""`. */
function textOf(node: XmlNode, name: string): string {
  const value = node[name];
  if (value === undefined || value === "") return "";
  if (typeof value === "string") return value;
  throw new SoapParseError(`<${name}> must contain text only`);
}

/**
 * The first element of the Body is the operation. The library yields `""` for a self-closing
 * element, which is exactly the connector's parameterless `serverVersion`.
 */
function firstBodyElement(soapBody: XmlNode): [string, XmlNode] {
  const entry = Object.entries(soapBody).find(([key]) => key !== "#text");
  if (entry === undefined) throw new SoapParseError("empty SOAP Body");
  const [name, content] = entry;
  if (Array.isArray(content)) throw new SoapParseError(`more than one <${name}> in the SOAP Body`);
  if (content === "") return [name, {}];
  if (typeof content === "string") {
    if (content.trim() === "") return [name, {}];
    throw new SoapParseError(`<${name}> must contain elements`);
  }
  if (!isNode(content)) throw new SoapParseError(`<${name}> is malformed`);
  return [name, content];
}

/** Parses a request body sent by the connector. Throws {@link SoapParseError} on garbage. */
export function parseSoapCall(body: string): SoapCall {
  const [name, node] = firstBodyElement(parseEnvelope(body));
  if (name === "Fault") throw new SoapParseError("a SOAP Fault is not a call");
  if (!isSoapMethod(name)) throw new SoapParseError(`unknown method ${name}`);
  const text = (field: string): string => textOf(node, field);
  switch (name) {
    case "serverVersion":
      // Some WSDLs declare a `strVersion` child; the real connector sends none. Either is accepted.
      return { method: name };
    case "clientVersion":
      return { method: name, strVersion: text("strVersion") };
    case "authenticate":
      return { method: name, strUserName: text("strUserName"), strPassword: text("strPassword") };
    case "sendRequestXML":
      return {
        method: name,
        ticket: text("ticket"),
        strHCPResponse: text("strHCPResponse"),
        strCompanyFileName: text("strCompanyFileName"),
        qbXMLCountry: text("qbXMLCountry"),
        qbXMLMajorVers: text("qbXMLMajorVers"),
        qbXMLMinorVers: text("qbXMLMinorVers"),
      };
    case "receiveResponseXML":
      return {
        method: name,
        ticket: text("ticket"),
        response: text("response"),
        hresult: text("hresult"),
        message: text("message"),
      };
    case "connectionError":
      return { method: name, ticket: text("ticket"), hresult: text("hresult"), message: text("message") };
    case "getLastError":
    case "closeConnection":
    case "getServerVersion":
      return { method: name, ticket: text("ticket") };
    case "getInteractiveURL":
      return { method: name, wcTicket: text("wcTicket"), sessionID: text("sessionID") };
    case "interactiveDone":
      return { method: name, wcTicket: text("wcTicket") };
    case "interactiveRejected":
      return { method: name, wcTicket: text("wcTicket"), reason: text("reason") };
    default: {
      const unreachable: never = name;
      throw new SoapParseError(`unknown method ${String(unreachable)}`);
    }
  }
}

/** Serialises a call exactly as the connector puts it on the wire (client side). */
export function soapRequest(call: SoapCall): string {
  const parameters: readonly string[] = SOAP_PARAMETERS[call.method];
  if (parameters.length === 0) {
    return `${ENVELOPE_OPEN}<${call.method} xmlns="${CONNECTOR_NAMESPACE}" />${ENVELOPE_CLOSE}`;
  }
  const values = new Map<string, unknown>(Object.entries(call));
  const children = parameters.map((parameter) => {
    const value = values.get(parameter);
    return element(parameter, typeof value === "string" ? value : "");
  });
  return (
    `${ENVELOPE_OPEN}<${call.method} xmlns="${CONNECTOR_NAMESPACE}">` +
    `${children.join("")}</${call.method}>${ENVELOPE_CLOSE}`
  );
}

function resultContent(method: SoapMethod, result: SoapResult): string {
  const resultName = `${method}Result`;
  if (method === "authenticate") {
    if (!Array.isArray(result)) throw new TypeError("authenticate returns an array of strings");
    const items = result.map((item) => element("string", item)).join("");
    return items === "" ? `<${resultName} />` : `<${resultName}>${items}</${resultName}>`;
  }
  if (Array.isArray(result)) throw new TypeError(`${method} returns a single value`);
  if (method === "receiveResponseXML") {
    const value = typeof result === "number" ? result : Number(result);
    if (!Number.isInteger(value)) throw new TypeError("receiveResponseXML returns an int");
    return `<${resultName}>${value}</${resultName}>`;
  }
  return element(resultName, String(result));
}

/**
 * Serialises the service's answer: `<methodResponse><methodResult>…`. `authenticate` takes an
 * array (ArrayOfString of `<string>`), `receiveResponseXML` an integer, everything else text.
 */
export function soapResponse(method: SoapMethod, result: SoapResult): string {
  return (
    `${ENVELOPE_OPEN}<${method}Response xmlns="${CONNECTOR_NAMESPACE}">` +
    `${resultContent(method, result)}</${method}Response>${ENVELOPE_CLOSE}`
  );
}

/**
 * A SOAP 1.1 Fault. Only for protocol garbage (unparseable body, unknown method): the connector
 * reports faults as its errors 1041–1045 and stops, so business errors must be ordinary results.
 */
export function soapFault(message: string, faultCode: "soap:Client" | "soap:Server" = "soap:Client"): string {
  return (
    `${ENVELOPE_OPEN}<soap:Fault><faultcode>${faultCode}</faultcode>` +
    `${element("faultstring", message)}<detail /></soap:Fault>${ENVELOPE_CLOSE}`
  );
}

function stringItems(value: unknown): string[] {
  if (value === undefined || value === "") return [];
  if (!isNode(value)) {
    if (typeof value === "string" && value.trim() === "") return [];
    throw new SoapParseError("authenticateResult must contain <string> elements");
  }
  const raw = value["string"];
  const list: unknown[] = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((item) => {
    if (typeof item === "string") return item;
    // `<string xsi:nil="true" />` parses as an empty node once attributes are ignored.
    if (isNode(item) && Object.keys(item).length === 0) return "";
    throw new SoapParseError("<string> must contain text only");
  });
}

/** Parses the service's answer to `method` (client side). Throws {@link SoapFaultError} on a Fault. */
export function parseSoapResponse(method: SoapMethod, body: string): SoapResult {
  const soapBody = parseEnvelope(body);
  const fault = soapBody["Fault"];
  if (isNode(fault)) {
    throw new SoapFaultError(textOf(fault, "faultcode"), textOf(fault, "faultstring"));
  }
  const responseName = `${method}Response`;
  const responseNode = soapBody[responseName];
  if (responseNode === undefined) throw new SoapParseError(`no <${responseName}> in the SOAP Body`);
  const node: XmlNode = isNode(responseNode) ? responseNode : {};
  if (!isNode(responseNode) && !(typeof responseNode === "string" && responseNode.trim() === "")) {
    throw new SoapParseError(`<${responseName}> is malformed`);
  }
  const resultName = `${method}Result`;
  if (method === "authenticate") return stringItems(node[resultName]);
  const text = textOf(node, resultName);
  if (method === "receiveResponseXML") {
    if (!/^\s*[+-]?\d+\s*$/.test(text)) throw new SoapParseError(`${resultName} is not an int: ${text}`);
    return Number.parseInt(text, 10);
  }
  return text;
}

/** The `SOAPAction` header value for a method, quoted like the connector's .NET client sends it. */
export function soapAction(method: SoapMethod): string {
  return `"${CONNECTOR_NAMESPACE}${method}"`;
}

/** Escapes a value for use inside a double-quoted XML attribute (used by the WSDL builder). */
export function escapeXmlAttributeValue(text: string): string {
  return escapeXmlText(text).replace(/"/g, "&quot;");
}
