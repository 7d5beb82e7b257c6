import { ServiceError } from "../../errors/service-error.ts";
import { XmlReadError, readXml } from "./parse.ts";
import { checkPassthroughText } from "./passthrough-text.ts";
import { validateRequestMessages } from "./request-schema.ts";
import { child, renderElementText, type XmlElement } from "./tree.ts";

/**
 * Message sets: the envelope around request messages, write detection, and reading the statuses of
 * a response document. Knows no resource names.
 *
 * A request stays data until it goes out: callers build a {@link RequestDocument} (the message
 * elements and `onError`), the Request stores its messages rendered once ({@link storedMessageSet}),
 * and the hand-over wraps them once in the document with the session's version and the message
 * set ID ({@link handOverDocument}); no stored text is edited.
 */
export const SUPPORTED_XML_VERSIONS = ["13.0", "14.0", "15.0", "16.0"] as const;
export const HIGHEST_XML_VERSION = "16.0";

export type OnError = "stopOnError" | "continueOnError";

/** A message set as data: the request messages (children of `QBXMLMsgsRq`) and its `onError`. */
export interface RequestDocument {
  readonly onError: OnError;
  readonly messages: readonly XmlElement[];
}

/** What a Request stores of its message set: the messages rendered once, and `onError`. */
export interface StoredMessageSet {
  readonly onError: OnError;
  /** The messages as compact XML text, in order. */
  readonly messagesXml: string;
}

/** A message set of one or more messages, stopping at the first error (the typed calls'). */
export function messageSet(
  messages: readonly XmlElement[],
  onError: OnError = "stopOnError",
): RequestDocument {
  return { onError, messages };
}

/** Renders the messages once, for storage. */
export function storedMessageSet(document: RequestDocument): StoredMessageSet {
  let messagesXml = "";
  for (const message of document.messages) messagesXml += renderElementText(message);
  return { onError: document.onError, messagesXml };
}

/**
 * Accepts either a whole request document (`<QBXML><QBXMLMsgsRq onError=…>…`) or just the request
 * messages, and returns the messages with their `onError`. Refused with 400 before anything is
 * queued (`param` names the body or its `xml` field): characters or references the application's
 * code page cannot hold (UNSUPPORTED_CHARACTER), a DOCTYPE or undefined entity, malformed XML or
 * XML nested deeper than the reader reads, a processing instruction after the prolog, a
 * non-request element, a caller-set message-set ID (the service owns those), or a message the
 * request schema rejects (`request-schema.ts`) → PASSTHROUGH_INVALID_XML.
 *
 * The messages returned are the parsed, validated tree, never the caller's text: comments, CDATA
 * sections, references and formatting do not travel, and only what was validated reaches the
 * connector.
 */
export function parsePassthroughXml(
  xml: string,
  param = "body",
): RequestDocument & { requestNames: string[] } {
  const invalid = (message: string): ServiceError =>
    new ServiceError("PASSTHROUGH_INVALID_XML", { param, message });
  const trimmed = checkPassthroughText(xml.replace(/^\uFEFF/, ""), param).trim();
  if (trimmed.length === 0) throw invalid("The XML body is empty.");
  const withoutProlog = withoutPrologInstructions(trimmed);
  if (literalTextBlanked(withoutProlog).includes("<?")) {
    throw invalid("Processing instructions are allowed only in the prolog (`<?xml …?>`, `<?qbxml …?>`).");
  }
  let root: XmlElement;
  try {
    // Text beside elements is kept, so that the schema check can say where it is.
    root = readXml(`<passthrough-root>${withoutProlog}</passthrough-root>`, {
      keepMixedText: true,
      refusePIs: true,
      position: true,
    }).root;
  } catch (error) {
    if (!(error instanceof XmlReadError)) throw error;
    // The reader's own limits (nesting depth) are the caller's input, not a fault.
    if (error.message.startsWith("elements nest deeper"))
      throw invalid(`The XML could not be read: ${error.message}.`);
    throw invalid(`The XML is not well formed: ${error.message.replace(/\.$/, "")} (line ${error.line}).`);
  }
  let onError: OnError = "stopOnError";
  let holder = root;
  const documentNode = child(root, "QBXML");
  if (documentNode) {
    const msgs = child(documentNode, "QBXMLMsgsRq");
    if (!msgs) throw invalid("The document has no `QBXMLMsgsRq` element.");
    const attributes = new Map(msgs.attrs);
    if (attributes.has("newMessageSetID") || attributes.has("oldMessageSetID")) {
      throw invalid(
        "Do not set `newMessageSetID` or `oldMessageSetID`: the service manages write recovery itself.",
      );
    }
    const declared = attributes.get("onError");
    if (declared === "continueOnError" || declared === "stopOnError") onError = declared;
    else if (declared !== undefined) throw invalid("`onError` must be `stopOnError` or `continueOnError`.");
    holder = msgs;
  }
  const messages = holder.children;
  const requestNames = messages.map((message) => message.name);
  if (holder.text !== "") throw invalid("Text outside of request elements is not allowed.");
  if (requestNames.length === 0) throw invalid("The XML holds no request messages.");
  const bad = requestNames.find((name) => !/^[A-Z][A-Za-z0-9]*Rq$/.test(name));
  if (bad) throw invalid(`\`${bad}\` is not a request message (request element names end in \`Rq\`).`);
  validateRequestMessages(messages);
  return { messages, onError, requestNames };
}

/** Spaces for every character but line breaks, so that positions in what remains hold. */
const blank = (text: string): string => text.replace(/[^\n]/g, " ");

/** CDATA sections and comments hold literal text: blanked out (same length, so positions hold). */
function literalTextBlanked(text: string): string {
  return text.replace(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g, blank);
}

/** The XML declaration, first in a document when it is there. */
const DECLARATION = /^<\?xml(?:\s[\s\S]*?)?\?>/;
/** What may follow it in the prolog: white space, a comment, the message version's instruction. */
const PROLOG_ITEM = /\s+|<!--[\s\S]*?-->|<\?qbxml(?:\s[\s\S]*?)?\?>/y;

/**
 * The document with its prolog's processing instructions blanked out: the XML declaration (first
 * only) and one `<?qbxml …?>`, found among the white space and comments the prolog may hold (XML 1.0
 * §2.8: `prolog ::= XMLDecl? Misc*`, a comment is one of `Misc`). The application's own sample files
 * put their comments before `<?qbxml …?>` (issue 25, item 5). Comments stay, for the reader to check
 * them as XML; any other processing instruction stays, to be refused.
 */
function withoutPrologInstructions(text: string): string {
  const declaration = DECLARATION.exec(text)?.[0] ?? "";
  let out = blank(declaration);
  let at = declaration.length;
  let version = false;
  for (;;) {
    PROLOG_ITEM.lastIndex = at;
    const item = PROLOG_ITEM.exec(text)?.[0];
    if (item === undefined) break;
    if (item.startsWith("<?")) {
      if (version) break;
      version = true;
      out += blank(item);
    } else out += item;
    at += item.length;
  }
  return out + text.slice(at);
}

/** A message set is a write unless every request in it is a query. */
export function isWriteMessageSet(requestNames: string[]): boolean {
  return requestNames.some((name) => !name.endsWith("QueryRq"));
}

/**
 * The document handed to the connector: the stored messages wrapped once in the envelope with the
 * session's message version and, for a write, its `newMessageSetID` for error recovery.
 */
export function handOverDocument(
  stored: StoredMessageSet,
  xmlVersion: string,
  messageSetId: string | null,
): string {
  const ids = messageSetId ? ` newMessageSetID="${messageSetId}"` : "";
  return `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="${xmlVersion}"?>\n<QBXML>\n<QBXMLMsgsRq onError="${stored.onError}"${ids}>\n${stored.messagesXml}\n</QBXMLMsgsRq>\n</QBXML>\n`;
}

/**
 * A Request stored before the messages were kept apart held the whole document (issue 14): its
 * messages and `onError`, read back with the reader (no text is edited). Null when it is not one.
 */
export function storedFromDocument(document: string): StoredMessageSet | null {
  let root: XmlElement;
  try {
    root = readXml(document).root;
  } catch (error) {
    if (error instanceof XmlReadError) return null;
    throw error;
  }
  const msgs = root.name === "QBXML" ? child(root, "QBXMLMsgsRq") : undefined;
  if (!msgs) return null;
  const onError = msgs.attrs.find(([key]) => key === "onError")?.[1];
  return storedMessageSet({
    onError: onError === "continueOnError" ? "continueOnError" : "stopOnError",
    messages: msgs.children,
  });
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
