import { XMLParser, XMLValidator } from "fast-xml-parser";
import { ServiceError } from "../../errors/service-error.ts";
import { checkPassthroughText } from "./passthrough-text.ts";
import { validateRequestMessages, type OrderedNode } from "./request-schema.ts";

/**
 * Message sets: the envelope around request messages, write detection, and reading the statuses of
 * a response document. Knows no resource names.
 */
export const SUPPORTED_XML_VERSIONS = ["13.0", "14.0", "15.0", "16.0"] as const;
export const HIGHEST_XML_VERSION = "16.0";

export interface MessageSetInput {
  /** The request messages (children of `QBXMLMsgsRq`). */
  messages: string;
  onError: "stopOnError" | "continueOnError";
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  parseAttributeValue: false,
  htmlEntities: true,
  preserveOrder: true,
  // Text nodes are kept whole and tidied by `tidy` (a value split by CDATA or a reference is
  // joined before it is trimmed).
  trimValues: false,
});
const readParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  parseAttributeValue: false,
  htmlEntities: true,
});

/**
 * Accepts either a whole request document (`<QBXML><QBXMLMsgsRq onError=…>…`) or just the request
 * messages, and returns the messages with their `onError`. Refused with 400 before anything is
 * queued (`param` names the body or its `xml` field): characters or references the application's
 * code page cannot hold (UNSUPPORTED_CHARACTER), a DOCTYPE or undefined entity, malformed XML or
 * XML nested deeper than the parser reads, a processing instruction after the prolog, a
 * non-request element, a caller-set message-set ID (the service owns those), or a message the
 * request schema rejects (`request-schema.ts`) → PASSTHROUGH_INVALID_XML.
 *
 * The messages returned are serialised from the parsed, validated tree, never copied from the
 * caller's text: comments, CDATA sections, references and formatting do not travel, and only what
 * was validated reaches the connector.
 */
export function parsePassthroughXml(
  xml: string,
  param = "body",
): MessageSetInput & { requestNames: string[] } {
  const invalid = (message: string): ServiceError =>
    new ServiceError("PASSTHROUGH_INVALID_XML", { param, message });
  const trimmed = checkPassthroughText(xml.replace(/^\uFEFF/, ""), param).trim();
  if (trimmed.length === 0) throw invalid("The XML body is empty.");
  const withoutProlog = trimmed.replace(/^<\?xml[^?]*\?>\s*/, "").replace(/^<\?qbxml[^?]*\?>\s*/, "");
  if (withoutProlog.includes("<?")) {
    throw invalid("Processing instructions are allowed only in the prolog (`<?xml …?>`, `<?qbxml …?>`).");
  }
  const wrapped = `<passthrough-root>${withoutProlog}</passthrough-root>`;
  const valid = XMLValidator.validate(wrapped);
  if (valid !== true) throw invalid(`The XML is not well formed: ${valid.err.msg} (line ${valid.err.line}).`);
  let parsed: OrderedNode[];
  try {
    parsed = parser.parse(wrapped) as OrderedNode[];
  } catch (error) {
    // The parser's own limits (nesting depth, entity expansion) are the caller's input, not a fault.
    throw invalid(`The XML could not be read: ${error instanceof Error ? error.message : String(error)}.`);
  }
  const root = tidy((parsed[0]?.["passthrough-root"] as OrderedNode[] | undefined) ?? []);
  let onError: MessageSetInput["onError"] = "stopOnError";
  let nodes = root;
  const documentNode = nodes.find((n) => "QBXML" in n);
  if (documentNode) {
    const msgs = (documentNode.QBXML as OrderedNode[]).find((n) => "QBXMLMsgsRq" in n);
    if (!msgs) throw invalid("The document has no `QBXMLMsgsRq` element.");
    const attributes = msgs[":@"] ?? {};
    if (attributes["@newMessageSetID"] !== undefined || attributes["@oldMessageSetID"] !== undefined) {
      throw invalid(
        "Do not set `newMessageSetID` or `oldMessageSetID`: the service manages write recovery itself.",
      );
    }
    const declared = attributes["@onError"];
    if (declared === "continueOnError" || declared === "stopOnError") onError = declared;
    else if (declared !== undefined) throw invalid("`onError` must be `stopOnError` or `continueOnError`.");
    nodes = msgs.QBXMLMsgsRq as OrderedNode[];
  }
  const requestNames = nodes.flatMap((n) => Object.keys(n).filter((k) => k !== ":@" && k !== "#text"));
  const strayText = nodes.some((n) => "#text" in n && String(n["#text"]).trim() !== "");
  if (strayText) throw invalid("Text outside of request elements is not allowed.");
  if (requestNames.length === 0) throw invalid("The XML holds no request messages.");
  const bad = requestNames.find((name) => !/^[A-Z][A-Za-z0-9]*Rq$/.test(name));
  if (bad) throw invalid(`\`${bad}\` is not a request message (request element names end in \`Rq\`).`);
  validateRequestMessages(nodes);
  return { messages: serializeNodes(nodes), onError, requestNames };
}

/**
 * The value of an element is its text nodes joined, then trimmed (a value split by a CDATA
 * section or a reference stays one value); whitespace between elements is dropped.
 */
function tidy(nodes: OrderedNode[]): OrderedNode[] {
  const isText = (node: OrderedNode): boolean => "#text" in node;
  if (nodes.length > 0 && nodes.every(isText)) {
    const text = nodes
      .map((node) => String(node["#text"]))
      .join("")
      .trim();
    return text === "" ? [] : [{ "#text": text }];
  }
  const out: OrderedNode[] = [];
  for (const node of nodes) {
    if (isText(node)) {
      if (String(node["#text"]).trim() !== "") out.push(node);
      continue;
    }
    const name = Object.keys(node).find((key) => key !== ":@");
    if (name === undefined) continue;
    const children = node[name];
    out.push({ ...node, [name]: Array.isArray(children) ? tidy(children as OrderedNode[]) : children });
  }
  return out;
}

/** XML text of parsed nodes: elements, attributes and text, escaped; nothing else survives. */
export function serializeNodes(nodes: readonly OrderedNode[]): string {
  let out = "";
  for (const node of nodes) {
    for (const [name, value] of Object.entries(node)) {
      if (name === ":@") continue;
      if (name === "#text") {
        out += escapeXml(String(value), false);
        continue;
      }
      const attributes = Object.entries(node[":@"] ?? {})
        .map(([key, attr]) => ` ${key.replace(/^@/, "")}="${escapeXml(String(attr), true)}"`)
        .join("");
      const children = Array.isArray(value) ? serializeNodes(value as OrderedNode[]) : "";
      out += children === "" ? `<${name}${attributes}/>` : `<${name}${attributes}>${children}</${name}>`;
    }
  }
  return out;
}

function escapeXml(text: string, attribute: boolean): string {
  const escaped = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return attribute ? escaped.replace(/"/g, "&quot;") : escaped;
}

/** A message set is a write unless every request in it is a query. */
export function isWriteMessageSet(requestNames: string[]): boolean {
  return requestNames.some((name) => !name.endsWith("QueryRq"));
}

/** Wraps messages in the request document; writes carry `newMessageSetID` for error recovery. */
export function buildRequestDocument(
  input: MessageSetInput,
  xmlVersion: string,
  messageSetId: string | null,
): string {
  const ids = messageSetId ? ` newMessageSetID="${messageSetId}"` : "";
  return `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="${xmlVersion}"?>\n<QBXML>\n<QBXMLMsgsRq onError="${input.onError}"${ids}>\n${input.messages}\n</QBXMLMsgsRq>\n</QBXML>\n`;
}

/** Sets the version processing instruction of a stored document to the session's version. */
export function withXmlVersion(document: string, xmlVersion: string): string {
  return document.replace(/<\?qbxml version="[^"]*"\?>/, `<?qbxml version="${xmlVersion}"?>`);
}

/** The empty recovery query: "what happened to message set X?" (ledger-protocol §2.4). */
export function recoveryQueryDocument(messageSetId: string, xmlVersion: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="${xmlVersion}"?>\n<QBXML>\n<QBXMLMsgsRq onError="continueOnError" oldMessageSetID="${messageSetId}" newMessageSetID="${messageSetId}">\n</QBXMLMsgsRq>\n</QBXML>\n`;
}

/**
 * The query that ends an idle connector session cleanly: the connector is handed it, and its
 * answer is acknowledged with 100 (done), which is the only way the protocol lets a service end a
 * session without an error text (ledger-protocol §1.2). The cheapest read any version answers.
 */
export function closingQueryDocument(xmlVersion: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="${xmlVersion}"?>\n<QBXML>\n<QBXMLMsgsRq onError="continueOnError">\n<HostQueryRq />\n</QBXMLMsgsRq>\n</QBXML>\n`;
}

export interface ResponseStatus {
  name: string;
  requestId: string | null;
  statusCode: number;
  statusSeverity: string;
  statusMessage: string;
}

export interface ResponseSummary {
  statuses: ResponseStatus[];
  messageSetStatusCode: number | null;
}

/** Reads the statuses of every `*Rs` in a response document; null when the text is not a response. */
export function summarizeResponse(xml: string): ResponseSummary | null {
  if (XMLValidator.validate(xml) !== true) return null;
  const doc = readParser.parse(xml) as { QBXML?: { QBXMLMsgsRs?: Record<string, unknown> | "" } };
  const msgs = doc.QBXML?.QBXMLMsgsRs;
  if (msgs === undefined) return null;
  if (msgs === "" || typeof msgs !== "object") return { statuses: [], messageSetStatusCode: null };
  const statuses: ResponseStatus[] = [];
  for (const [name, value] of Object.entries(msgs)) {
    if (name.startsWith("@")) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      const attrs = (typeof item === "object" && item !== null ? item : {}) as Record<string, string>;
      statuses.push({
        name,
        requestId: attrs["@requestID"] ?? null,
        statusCode: Number(attrs["@statusCode"] ?? "0"),
        statusSeverity: attrs["@statusSeverity"] ?? "Info",
        statusMessage: attrs["@statusMessage"] ?? "",
      });
    }
  }
  const setCode = msgs["@messageSetStatusCode"];
  return { statuses, messageSetStatusCode: typeof setCode === "string" ? Number(setCode) : null };
}
