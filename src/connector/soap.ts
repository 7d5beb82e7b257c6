/**
 * SOAP 1.1 document/literal codec for the connector protocol (guide ledger-protocol.md §1).
 *
 * Both directions live here so that the bridge's SOAP endpoint and the simulated connector share
 * one definition of element names, parameter order and escaping. The wire format follows the
 * verbatim captures: a one-line envelope prefix, the method element in the connector namespace,
 * empty strings as self-closing elements (`<hresult />`), and embedded request/response documents
 * carried as entity-escaped text, never as markup.
 */
import {
  SOAP_ENVELOPE_NAMESPACE,
  SoapFaultError,
  SoapParseError,
  childElements,
  readEnvelope,
  textContent,
  type SoapElement,
} from "./envelope.ts";

export { SOAP_ENVELOPE_NAMESPACE, SoapFaultError, SoapParseError } from "./envelope.ts";

/** The namespace the connector requires for every operation (PG p.41). */
export const CONNECTOR_NAMESPACE = "http://developer.intuit.com/";

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

/** Whether a string names a connector operation. */
export function isSoapMethod(name: string): name is SoapMethod {
  return Object.hasOwn(SOAP_PARAMETERS, name);
}

const ENVELOPE_OPEN =
  '<?xml version="1.0" encoding="utf-8"?>' +
  `<soap:Envelope xmlns:soap="${SOAP_ENVELOPE_NAMESPACE}" ` +
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
  'xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body>';
const ENVELOPE_CLOSE = "</soap:Body></soap:Envelope>";

/**
 * Escapes text content the way the connector's .NET serialiser does: `&`, `<`, `>` always; quotes
 * stay literal (see the `.wire.xml` captures). A carriage return becomes `&#xD;` because a parser
 * would otherwise normalise it to a line feed. Characters XML 1.0 cannot carry at all (C0 controls
 * other than tab, line feed and carriage return; U+FFFE, U+FFFF; lone surrogates) are dropped,
 * since no reference to them is well-formed.
 */
export function escapeXmlText(text: string): string {
  // Most text (every document the connector carries) holds none of the characters to drop: four
  // native passes then, instead of a callback for each of a large answer's tens of thousands of
  // `<` and `>` (the simulated connector's largest cost in a mirror fill).
  if (!MAY_DROP.test(text))
    return text
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;")
      .replaceAll("\r", "&#xD;");
  return escapeDropping(text);
}

/** C0 controls but tab, line feed and carriage return; any surrogate (a pair too: checked below); U+FFFE/F. */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const MAY_DROP = /[\0-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** {@link escapeXmlText} for text that may hold characters XML cannot carry. */
export function escapeDropping(text: string): string {
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
export function soapFault(message: string, faultCode: string = "soap:Client"): string {
  return (
    `${ENVELOPE_OPEN}<soap:Fault><faultcode>${faultCode}</faultcode>` +
    `${element("faultstring", message)}<detail /></soap:Fault>${ENVELOPE_CLOSE}`
  );
}

/** The children of an element by local name (the client side reads answers leniently). */
function childNamed(element: SoapElement, name: string): SoapElement | undefined {
  return childElements(element).find((child) => child.name === name);
}

/** Parses the service's answer to `method` (client side). Throws {@link SoapFaultError} on a Fault. */
export function parseSoapResponse(method: SoapMethod, body: string): SoapResult {
  const entries = readEnvelope(body);
  const fault = entries.find(
    (entry) => entry.name === "Fault" && entry.namespace === SOAP_ENVELOPE_NAMESPACE,
  );
  if (fault) {
    const text = (name: string): string => {
      const child = childNamed(fault, name);
      return child ? textContent(child) : "";
    };
    throw new SoapFaultError(text("faultcode"), text("faultstring"));
  }
  const responseName = `${method}Response`;
  const response = entries.find((entry) => entry.name === responseName);
  if (!response) throw new SoapParseError(`no <${responseName}> in the SOAP Body`);
  const result = childNamed(response, `${method}Result`);
  if (method === "authenticate") {
    if (!result) return [];
    // `<string xsi:nil="true" />` reads as "".
    return childElements(result)
      .filter((item) => item.name === "string")
      .map((item) => textContent(item));
  }
  const text = result ? textContent(result) : "";
  if (method === "receiveResponseXML") {
    if (!/^\s*[+-]?\d+\s*$/.test(text)) throw new SoapParseError(`${method}Result is not an int: ${text}`);
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
