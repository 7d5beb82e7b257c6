import { XMLParser, XMLValidator } from "fast-xml-parser";
import { ServiceError } from "../../errors/service-error.ts";
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
});
const readParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  parseAttributeValue: false,
  htmlEntities: true,
});

const invalid = (message: string): ServiceError =>
  new ServiceError("PASSTHROUGH_INVALID_XML", { param: "body", message });

/**
 * Accepts either a whole request document (`<QBXML><QBXMLMsgsRq onError=…>…`) or just the request
 * messages, and returns the messages with their `onError`. Malformed XML, a non-request element, a
 * caller-set message-set ID (the service owns those), or a message the request schema rejects
 * (`request-schema.ts`) → PASSTHROUGH_INVALID_XML.
 */
export function parsePassthroughXml(xml: string): MessageSetInput & { requestNames: string[] } {
  const trimmed = xml.replace(/^\uFEFF/, "").trim();
  if (trimmed.length === 0) throw invalid("The XML body is empty.");
  const withoutProlog = trimmed.replace(/^<\?xml[^?]*\?>\s*/, "").replace(/^<\?qbxml[^?]*\?>\s*/, "");
  const wrapped = `<passthrough-root>${withoutProlog}</passthrough-root>`;
  const valid = XMLValidator.validate(wrapped);
  if (valid !== true) throw invalid(`The XML is not well formed: ${valid.err.msg} (line ${valid.err.line}).`);
  const root = (parser.parse(wrapped) as OrderedNode[])[0]?.["passthrough-root"] as OrderedNode[] | undefined;
  let onError: MessageSetInput["onError"] = "stopOnError";
  let nodes = root ?? [];
  const documentNode = nodes.find((n) => "QBXML" in n);
  let messages = withoutProlog;
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
    const inner = /<QBXMLMsgsRq\b[^>]*>([\s\S]*)<\/QBXMLMsgsRq>/.exec(withoutProlog);
    messages = inner?.[1]?.trim() ?? "";
  }
  const requestNames = nodes.flatMap((n) => Object.keys(n).filter((k) => k !== ":@" && k !== "#text"));
  const strayText = nodes.some((n) => "#text" in n && String(n["#text"]).trim() !== "");
  if (strayText) throw invalid("Text outside of request elements is not allowed.");
  if (requestNames.length === 0) throw invalid("The XML holds no request messages.");
  const bad = requestNames.find((name) => !/^[A-Z][A-Za-z0-9]*Rq$/.test(name));
  if (bad) throw invalid(`\`${bad}\` is not a request message (request element names end in \`Rq\`).`);
  validateRequestMessages(nodes);
  return { messages, onError, requestNames };
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
