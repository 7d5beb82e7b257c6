/**
 * A purpose-built reader for the plain XML the application writes (decision 0035): its answers
 * are documents of elements, ASCII names, a few attributes and text with the five predefined
 * entities, nothing else. This reader reads exactly that subset of XML into {@link XmlElement}s,
 * several times faster than the general reader, and gives up — returns null — at the first thing
 * outside it: a comment, a CDATA section, a DOCTYPE, a character reference, a carriage return, a
 * control or non-BMP character, a non-ASCII or prefixed name, a processing instruction other than
 * the prolog's `qbxml` one, an XML declaration it does not know the form of, and every error
 * (mismatched tags, a second root, text outside the root, mixed content, nesting deeper than
 * {@link MAX_DEPTH}). The caller then reads the document with the general reader
 * (`parse.ts`, saxes), which reads it or says exactly why not. So a document this reader accepts is
 * one the general reader accepts, with the same tree (attributes in order, leaf text trimmed,
 * aggregates' text ""); `plain-reader.test.ts` compares the two on the reference samples and on
 * generated documents, well-formed and not.
 */
import type { ParsedDocument } from "./parse.ts";
import type { XmlElement } from "./tree.ts";

/** Same bound as the general reader (parse.ts `MAX_DEPTH`; not imported: parse.ts imports this). */
const MAX_DEPTH = 64;

/**
 * Characters the subset leaves to the general reader: C0 controls but tab and line feed (the
 * carriage return too: it would need end-of-line normalisation), C1 controls, surrogates (pairs
 * included: non-BMP text is rare), and the non-characters U+FFFE and U+FFFF.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const OUTSIDE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** XML declarations of the forms the subset takes (a strict subset of what XML allows). */
const DECLARATION =
  /^<\?xml version=(["'])1\.0\1(?: encoding=(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?: standalone=(["'])(?:yes|no)\3)? ?\?>/;

/** The `qbxml` processing instruction of a request's prolog, in the one form the subset takes. */
const QBXML_PI = /<\?qbxml version="([0-9.]{1,10})"\?>/y;

/** One attribute, after at least one space: an ASCII name, `=`, a double- or single-quoted value. */
const ATTRIBUTE = / +([A-Za-z_][A-Za-z0-9._-]*)=(?:"([^"<\t\n]*)"|'([^'<\t\n]*)')/y;

/** 1 for `[A-Za-z_]`, 2 for `[0-9.-]`: the characters of the subset's names. */
const NAME_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_]/.test(ch)) NAME_CHAR[c] = 1;
  else if (/[0-9.-]/.test(ch)) NAME_CHAR[c] = 2;
}

/** Anything but the whitespace the subset has between markup. */
const NOT_SPACE = /[^ \t\n]/;

/** Whitespace as XML reads it between markup (space, tab, line feed; `\r` is outside the subset). */
const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 9;

/** Gives up: the document is left to the general reader. */
class OutsideSubset extends Error {}
const OUTSIDE_SUBSET = new OutsideSubset();

interface Open {
  readonly name: string;
  readonly attrs: ReadonlyArray<readonly [string, string]>;
  /** {@link NO_CHILDREN} until the first child is added. */
  children: XmlElement[];
  text: string;
}

const NO_ATTRS: ReadonlyArray<readonly [string, string]> = [];
/** Every leaf's children: one frozen empty array (an answer has tens of thousands of leaves). */
const NO_CHILDREN: XmlElement[] = Object.freeze([]) as unknown as XmlElement[];

/**
 * Element names read once per document: a name seen before is found by comparing the text in
 * place, so the thousands of `<TxnID>`s of an answer share one string.
 */
class Names {
  private readonly byShape = new Map<number, string[]>();

  at(xml: string, start: number, end: number): string {
    const shape = (end - start) * 128 + xml.charCodeAt(start);
    let known = this.byShape.get(shape);
    if (known === undefined) this.byShape.set(shape, (known = []));
    for (const name of known) if (xml.startsWith(name, start)) return name;
    const name = xml.slice(start, end);
    known.push(name);
    return name;
  }
}

function addChild(parent: Open, child: XmlElement): void {
  if (parent.children === NO_CHILDREN) parent.children = [child];
  else parent.children.push(child);
}

/**
 * Text with the five predefined entities decoded (`&lt;` `&gt;` `&amp;` `&quot;` `&apos;`); null
 * when it holds a lone `&` or any other reference (numeric ones included), which the subset leaves
 * to the general reader. One pass with `indexOf`: an escaped answer holds a hundred thousand.
 */
export function decodePredefined(text: string): string | null {
  let amp = text.indexOf("&");
  if (amp < 0) return text;
  let out = "";
  let from = 0;
  while (amp >= 0) {
    out += text.slice(from, amp);
    if (text.startsWith("lt;", amp + 1)) {
      out += "<";
      from = amp + 4;
    } else if (text.startsWith("gt;", amp + 1)) {
      out += ">";
      from = amp + 4;
    } else if (text.startsWith("amp;", amp + 1)) {
      out += "&";
      from = amp + 5;
    } else if (text.startsWith("quot;", amp + 1)) {
      out += '"';
      from = amp + 6;
    } else if (text.startsWith("apos;", amp + 1)) {
      out += "'";
      from = amp + 6;
    } else return null;
    amp = text.indexOf("&", from);
  }
  return out + text.slice(from);
}

/** {@link decodePredefined}, giving up on the document when a reference is outside the subset. */
function decoded(text: string): string {
  const plain = decodePredefined(text);
  if (plain === null) throw OUTSIDE_SUBSET;
  return plain;
}

/** The end of the ASCII name starting at `at` (at itself when there is none). */
function nameEnd(xml: string, at: number): number {
  if (NAME_CHAR[xml.charCodeAt(at)] !== 1) return at;
  let end = at + 1;
  for (;;) {
    const c = xml.charCodeAt(end);
    if (c < 128 && NAME_CHAR[c] !== 0) end += 1;
    else return end;
  }
}

/**
 * Reads `xml` when it is a document of the subset; null when anything in it is outside the subset
 * or wrong (the general reader then decides).
 */
export function readPlainDocument(xml: string): ParsedDocument | null {
  if (OUTSIDE.test(xml)) return null;
  try {
    return readDocument(xml);
  } catch (error) {
    if (error === OUTSIDE_SUBSET) return null;
    throw error;
  }
}

function readDocument(xml: string): ParsedDocument | null {
  let at = 0;
  const declaration = DECLARATION.exec(xml);
  if (declaration) at = declaration[0].length;
  let qbxmlVersion: string | undefined;
  // The prolog: whitespace and at most one `qbxml` processing instruction.
  for (;;) {
    while (isSpace(xml.charCodeAt(at))) at += 1;
    if (qbxmlVersion !== undefined || !xml.startsWith("<?qbxml", at)) break;
    QBXML_PI.lastIndex = at;
    const pi = QBXML_PI.exec(xml);
    if (!pi) return null;
    qbxmlVersion = pi[1];
    at = QBXML_PI.lastIndex;
  }
  if (xml.charCodeAt(at) !== 60 /* < */) return null;
  const open: Open[] = [];
  const names = new Names();
  let root: XmlElement | undefined;
  const length = xml.length;
  while (at < length) {
    // `at` is at a `<`: an element opens or closes.
    const next = xml.charCodeAt(at + 1);
    if (next === 47 /* / */) {
      const top = open.pop();
      const end = at + 2 + (top?.name.length ?? 0);
      if (top === undefined || !xml.startsWith(top.name, at + 2)) return null;
      let close = end;
      while (isSpace(xml.charCodeAt(close))) close += 1;
      if (xml.charCodeAt(close) !== 62 /* > */) return null;
      const done = finished(top);
      if (done === null) return null;
      const parent = open[open.length - 1];
      if (parent === undefined) root = done;
      else addChild(parent, done);
      at = close + 1;
    } else {
      if (root !== undefined || open.length >= MAX_DEPTH) return null;
      const nameStart = at + 1;
      const nameStop = nameEnd(xml, nameStart);
      const c = xml.charCodeAt(nameStop);
      if (nameStop === nameStart || !(c === 62 || c === 47 || c === 32)) return null;
      const name = names.at(xml, nameStart, nameStop);
      let attrs = NO_ATTRS;
      let tagEnd = nameStop;
      if (c === 32) {
        const list: Array<readonly [string, string]> = [];
        for (;;) {
          ATTRIBUTE.lastIndex = tagEnd;
          const attribute = ATTRIBUTE.exec(xml);
          if (!attribute) break;
          const key = attribute[1] as string;
          if (list.some(([existing]) => existing === key)) return null;
          list.push([key, decoded(attribute[2] ?? attribute[3] ?? "")]);
          tagEnd = ATTRIBUTE.lastIndex;
        }
        while (xml.charCodeAt(tagEnd) === 32) tagEnd += 1;
        if (list.length > 0) attrs = list;
      }
      const element: Open = { name, attrs, children: NO_CHILDREN, text: "" };
      if (xml.charCodeAt(tagEnd) === 47 /* / */) {
        if (xml.charCodeAt(tagEnd + 1) !== 62) return null;
        const parent = open[open.length - 1];
        const done = finished(element);
        if (done === null) return null;
        if (parent === undefined) root = done;
        else addChild(parent, done);
        at = tagEnd + 2;
      } else {
        if (xml.charCodeAt(tagEnd) !== 62) return null;
        open.push(element);
        at = tagEnd + 1;
      }
    }
    // Text up to the next `<` (after the root: whitespace only, to the end).
    const lt = xml.indexOf("<", at);
    const textEnd = lt < 0 ? length : lt;
    if (textEnd > at) {
      const text = xml.slice(at, textEnd);
      const top = open[open.length - 1];
      if (top === undefined) {
        if (NOT_SPACE.test(text)) return null;
      } else if (top.children === NO_CHILDREN || NOT_SPACE.test(text)) {
        // Between an aggregate's children only the line breaks of the application's one element
        // per line: skipped (trimmed away at the end anyway), not joined into a string per break.
        if (text.includes("]]>")) return null;
        top.text += decoded(text);
      }
    }
    if (lt < 0) break;
    if (root !== undefined) return null; // markup after the root element
    at = lt;
  }
  if (root === undefined || open.length > 0) return null;
  return { root, qbxmlVersion };
}

/** The element as the general reader finishes it; null for mixed content (the general reader refuses it). */
function finished(element: Open): XmlElement | null {
  const text = element.text.trim();
  const aggregate = element.children !== NO_CHILDREN;
  if (aggregate && text !== "") return null;
  element.text = aggregate ? "" : text;
  return element;
}
