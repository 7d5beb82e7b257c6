/**
 * The service's one XML reader (issue 14: chosen by measurement, `bench/xml-readers.ts`): saxes, a
 * strict streaming parser (well-formedness, predefined and numeric references decoded, undefined
 * entities refused), read in one pass into {@link XmlElement}s. Every document the service reads
 * goes through here: the application's answers (`answer.ts`), the SOAP envelope (namespaces
 * resolved, `connector/envelope.ts`), passthrough input (`message-set.ts`), the connector's
 * Host/Company/Preferences answer, and the simulated application's requests.
 *
 * Anything that is not well-formed, that declares a DOCTYPE, mixes text with elements (unless the
 * caller keeps it to report it), nests deeper than any message does, or has more than one root
 * fails here: the simulated application turns a failure into HRESULT 0x80040400 and the service
 * into LEDGER_RESPONSE_UNREADABLE.
 */
import { SaxesParser, type SaxesTagNS } from "saxes";
import { readPlainDocument } from "./plain-reader.ts";
import type { XmlElement } from "./tree.ts";

/** A parsed message document. */
export interface ParsedDocument {
  readonly root: XmlElement;
  /** The `<?qbxml version="…"?>` value, when present. */
  readonly qbxmlVersion: string | undefined;
}

/** Deeper than any message of the schema nests (about 12); protects the recursive readers. */
export const MAX_DEPTH = 64;

/** Why a document was refused, with the line where the reader stopped (1-based; 0 when unknown). */
export class XmlReadError extends Error {
  override name = "XmlReadError";
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.line = line;
  }
}

export interface ReadOptions {
  /**
   * Keep text found beside child elements (as the element's `text`) instead of refusing the
   * document: the passthrough's schema check reports it by path.
   */
  readonly keepMixedText?: boolean;
  /** Refuse processing instructions after the prolog (the passthrough input). */
  readonly refusePIs?: boolean;
  /** Track lines, for error messages shown to a caller. */
  readonly position?: boolean;
}

/** An element with its namespace resolved (SOAP envelopes; `name` is the local name). */
export interface NamespacedElement {
  readonly name: string;
  /** Namespace name, or null for an element in no namespace. */
  readonly namespace: string | null;
  /** Attributes as written (qualified names), with the namespace of prefixed ones. */
  readonly attrs: ReadonlyArray<{
    readonly name: string;
    readonly namespace: string | null;
    readonly value: string;
  }>;
  readonly children: readonly NamespacedElement[];
  /** Text content, untrimmed (the envelope's parameters keep their trailing newline). */
  readonly text: string;
}

interface OpenElement {
  readonly name: string;
  readonly attrs: ReadonlyArray<readonly [string, string]>;
  readonly children: XmlElement[];
  text: string;
}

/**
 * How many documents the reader has parsed in this process. Tests read it to prove that an answer
 * is parsed once on its way from the connector to the Request.
 */
let documentsRead = 0;
export function documentsParsed(): number {
  return documentsRead;
}

/** Counts a document read by a reader of its own (the connector's streaming call reader). */
export function noteDocumentRead(): void {
  documentsRead += 1;
}

/** Parses `xml` into elements; throws {@link XmlReadError} when it is not one well-formed document. */
export function readXml(xml: string, options: ReadOptions = {}): ParsedDocument {
  documentsRead += 1;
  const parser = new SaxesParser({ position: options.position ?? false });
  const open: OpenElement[] = [];
  let root: XmlElement | undefined;
  let qbxmlVersion: string | undefined;
  const fail = (message: string): never => {
    throw new XmlReadError(message, options.position ? parser.line : 0);
  };
  parser.on("error", (error) => fail(error.message.replace(/^\d+:\d+: /, "")));
  parser.on("doctype", () => fail("a DOCTYPE is not allowed"));
  parser.on("opentag", (tag) => {
    if (root !== undefined) fail("more than one root element");
    if (open.length >= MAX_DEPTH) fail(`elements nest deeper than ${MAX_DEPTH} levels`);
    const attributes = tag.attributes as Record<string, string>;
    let attrs: Array<readonly [string, string]> = NO_ATTRS;
    for (const key in attributes) {
      if (attrs === NO_ATTRS) attrs = [];
      attrs.push([key, attributes[key] as string]);
    }
    open.push({ name: tag.name, attrs, children: [], text: "" });
  });
  const appendText = (text: string): void => {
    const top = open[open.length - 1];
    if (top !== undefined) top.text += text;
  };
  parser.on("text", appendText);
  parser.on("cdata", appendText);
  parser.on("closetag", () => {
    // The open element becomes the finished one (one object per element: answers hold thousands).
    const done = open.pop();
    if (done === undefined) return fail("unexpected close tag");
    const text = done.text.trim();
    const aggregate = done.children.length > 0;
    // Mixed content never appears in the protocol; treat it as a malformed document.
    if (aggregate && text !== "" && !options.keepMixedText) fail("text beside child elements");
    done.text = aggregate && !options.keepMixedText ? "" : text;
    const parent = open[open.length - 1];
    if (parent !== undefined) parent.children.push(done);
    else root = done;
  });
  parser.on("processinginstruction", (pi) => {
    if (options.refusePIs && (root !== undefined || open.length > 0))
      fail("processing instructions are allowed only in the prolog");
    if (pi.target === "qbxml") qbxmlVersion = /\bversion\s*=\s*(["'])(.*?)\1/.exec(pi.body)?.[2];
  });
  parser.write(xml).close();
  if (root === undefined) fail("no root element");
  return { root: root as XmlElement, qbxmlVersion };
}

const NO_ATTRS: Array<readonly [string, string]> = [];

/**
 * Parses `xml`; `undefined` when it is not a well-formed single-root document. The application's
 * plain documents (its answers) are read by the purpose-built reader (`plain-reader.ts`, decision
 * 0035); anything outside its subset, and every refusal, by {@link readXml}, with the same result.
 */
export function parseDocument(xml: string): ParsedDocument | undefined {
  const plain = readPlainDocument(xml);
  if (plain !== null) {
    documentsRead += 1;
    return plain;
  }
  try {
    return readXml(xml);
  } catch (error) {
    if (error instanceof XmlReadError) return undefined;
    throw error;
  }
}

interface OpenNamespaced {
  readonly name: string;
  readonly namespace: string | null;
  readonly attrs: NamespacedElement["attrs"];
  readonly children: NamespacedElement[];
  text: string;
}

/**
 * Parses a document with its XML namespaces resolved (Namespaces in XML 1.0), in the same single
 * pass: the SOAP envelope. Text is kept untrimmed and decoded once. Throws {@link XmlReadError}
 * (an undeclared prefix included); a DOCTYPE is refused.
 */
export function readNamespaced(xml: string): NamespacedElement {
  documentsRead += 1;
  const parser = new SaxesParser({ xmlns: true, position: false });
  const open: OpenNamespaced[] = [];
  let root: NamespacedElement | undefined;
  const fail = (message: string): never => {
    throw new XmlReadError(message, 0);
  };
  // An undeclared prefix is reported once the document is known to be well-formed.
  let unbound: string | null = null;
  parser.on("error", (error) => {
    if (!error.message.startsWith("unbound namespace prefix")) fail(error.message);
    unbound ??= error.message;
  });
  parser.on("doctype", () => fail("a DOCTYPE is not allowed"));
  parser.on("opentag", (tag: SaxesTagNS) => {
    if (root !== undefined) fail("more than one root element");
    if (open.length >= MAX_DEPTH) fail(`elements nest deeper than ${MAX_DEPTH} levels`);
    const attrs = Object.values(tag.attributes).map((a) => ({
      name: a.name,
      namespace: a.prefix === "" ? null : a.uri || null,
      value: a.value,
    }));
    open.push({ name: tag.local, namespace: tag.uri === "" ? null : tag.uri, attrs, children: [], text: "" });
  });
  const appendText = (text: string): void => {
    const top = open[open.length - 1];
    if (top !== undefined) top.text += text;
  };
  parser.on("text", appendText);
  parser.on("cdata", appendText);
  parser.on("closetag", () => {
    const element = open.pop();
    if (element === undefined) return fail("unexpected close tag");
    const done: NamespacedElement = element;
    const parent = open[open.length - 1];
    if (parent !== undefined) parent.children.push(done);
    else root = done;
  });
  parser.write(xml).close();
  if (unbound !== null) fail(unbound);
  if (root === undefined) fail("no root element");
  return root as NamespacedElement;
}
