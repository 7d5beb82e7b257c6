/**
 * A purpose-built streaming tokenizer for connector calls as the Web Connector writes them
 * (decision 0035): an XML declaration, elements and attributes with ASCII names (one prefix at
 * most), namespace declarations, and text with the five predefined entities — the answer of
 * `receiveResponseXML`, hundreds of kilobytes of escaped XML, is one such text. It reads that subset
 * a chunk at a time, several times faster than saxes, and gives up (`write` or `end` return false)
 * at the first thing outside it: a comment, a CDATA section, a DOCTYPE, a processing instruction,
 * a character reference, a carriage return, a control character or surrogate, a tab or line break
 * inside an attribute value, the `xml`/`xmlns` prefixes bound or used, an unbound prefix, a repeated
 * attribute name, text outside the root, and any error. The call reader (`call-reader.ts`) then
 * reads the whole text received so far again with saxes, which reads it or refuses it exactly as it
 * always did; the events this tokenizer gave before it gave up are discarded with the state they
 * built. So what it reads, saxes would read the same way (`call-reader.test.ts` compares them).
 */
import { decodePredefined } from "../ledger/xml/plain-reader.ts";

/** An attribute as the call reader sees it (the fields of saxes' namespaced attribute it uses). */
export interface CallAttribute {
  readonly name: string;
  readonly prefix: string;
  readonly local: string;
  /** Namespace name, "" for none. */
  readonly uri: string;
  readonly value: string;
}

/** An opening element as the call reader sees it (the fields of saxes' `SaxesTagNS` it uses). */
export interface CallTag {
  readonly name: string;
  readonly local: string;
  /** Namespace name, "" for none. */
  readonly uri: string;
  readonly attributes: Readonly<Record<string, CallAttribute>>;
}

export interface CallTokenHandlers {
  open(tag: CallTag): void;
  text(text: string): void;
  close(): void;
}

const XMLNS_NAMESPACE = "http://www.w3.org/2000/xmlns/";
const XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace";

/** The XML declarations of the subset (a strict subset of the forms XML allows). */
const DECLARATION =
  /<\?xml version=(["'])1\.0\1(?: encoding=(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?: standalone=(["'])(?:yes|no)\3)? ?\?>/y;
const NAME = "[A-Za-z_][A-Za-z0-9._-]*(?::[A-Za-z_][A-Za-z0-9._-]*)?";
/** A whole start tag of the subset: name, attributes (values without `<`, tab or line break), `/`. */
const START_TAG = new RegExp(
  `<(${NAME})((?:[ \\t\\n]+${NAME}[ \\t\\n]*=[ \\t\\n]*(?:"[^"<\\t\\n]*"|'[^'<\\t\\n]*'))*)[ \\t\\n]*(/?)>`,
  "y",
);
/** Any start tag that has ended (quoted values may hold `>`): when it is not a {@link START_TAG}, give up. */
const ANY_TAG = /<[^<>"']*(?:(?:"[^"]*"|'[^']*')[^<>"']*)*>/y;
const ATTRIBUTE = new RegExp(`(${NAME})[ \\t\\n]*=[ \\t\\n]*(?:"([^"]*)"|'([^']*)')`, "g");
const END_TAG = new RegExp(`</(${NAME})[ \\t\\n]*>`, "y");
/** Characters outside the subset anywhere in a call (see the module comment). */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const OUTSIDE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\uD800-\uDFFF\uFFFE\uFFFF]/;
/**
 * A tag longer than this that has not ended is left to saxes (it is malformed or hostile; the
 * protocol's longest, the Envelope with its namespace declarations, is about 250 characters). It is
 * matched again as more text arrives, so this also bounds that work on a call trickled a byte at a
 * time.
 */
const TAG_LENGTH_MAX = 1024;

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 9;
/** `[A-Za-z_]`: how the subset's names begin. */
const isNameStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

interface OpenElement {
  readonly name: string;
  /** The prefixes it declares, if any. */
  readonly bindings: ReadonlyMap<string, string> | null;
}

export class PlainCallTokenizer {
  /** Text received and not yet read (an unfinished tag, or a text's last partial reference). */
  private pending = "";
  private readonly open: OpenElement[] = [];
  private place: "start" | "prolog" | "content" | "epilog" = "start";

  constructor(private readonly handlers: CallTokenHandlers) {}

  /** Reads the next piece of text; false when the call so far leaves the subset. */
  write(chunk: string): boolean {
    if (OUTSIDE.test(chunk) || chunk.includes("\r")) return false;
    const text = this.pending === "" ? chunk : this.pending + chunk;
    this.pending = "";
    const read = this.read(text);
    if (read < 0) return false;
    this.pending = text.slice(read);
    return true;
  }

  /** The end of the call; false unless it was one whole document of the subset. */
  end(): boolean {
    return this.pending.trim() === "" && this.place === "epilog";
  }

  /** Reads `text` as far as it can; returns where it stopped (the rest waits), or -1 to give up. */
  private read(text: string): number {
    let at = 0;
    const length = text.length;
    while (at < length) {
      if (this.place === "start" || this.place === "prolog") {
        if (this.place === "start") {
          if (text.startsWith("<?", at)) {
            DECLARATION.lastIndex = at;
            if (DECLARATION.exec(text)) at = DECLARATION.lastIndex;
            else return text.indexOf(">", at) >= 0 || length - at > TAG_LENGTH_MAX ? -1 : at;
          }
          this.place = "prolog";
        }
        while (at < length && isSpace(text.charCodeAt(at))) at += 1;
        if (at >= length) return at;
        if (text.charCodeAt(at) !== 60 /* < */) return -1;
        const opened = this.startTag(text, at);
        if (opened <= at) return opened;
        at = opened;
        continue;
      }
      if (this.place === "epilog") {
        while (at < length && isSpace(text.charCodeAt(at))) at += 1;
        return at < length ? -1 : at;
      }
      // Content: text up to the next `<`, then a tag.
      const lt = text.indexOf("<", at);
      const textEnd = lt < 0 ? safeTextEnd(text, at) : lt;
      if (textEnd < 0) return -1;
      if (textEnd > at) {
        const raw = text.slice(at, textEnd);
        if (raw.includes("]]>")) return -1;
        const decoded = decodePredefined(raw);
        if (decoded === null) return -1;
        this.handlers.text(decoded);
        at = textEnd;
      }
      if (lt < 0) return at;
      const next = text.charCodeAt(lt + 1);
      if (Number.isNaN(next)) return lt;
      const moved = next === 47 /* / */ ? this.endTag(text, lt) : this.startTag(text, lt);
      if (moved <= lt) return moved;
      at = moved;
    }
    return at;
  }

  /** Reads the start tag at `at`: where it ends, `at` to wait for more text, or -1. */
  private startTag(text: string, at: number): number {
    if (this.place === "epilog") return -1;
    // `<!` (a comment, CDATA, a DOCTYPE), `<?` (a processing instruction): saxes reads them.
    const first = text.charCodeAt(at + 1);
    if (Number.isNaN(first)) return at;
    if (!isNameStart(first)) return -1;
    START_TAG.lastIndex = at;
    const tag = START_TAG.exec(text);
    if (!tag) {
      ANY_TAG.lastIndex = at;
      return ANY_TAG.test(text) || text.length - at > TAG_LENGTH_MAX ? -1 : at;
    }
    const name = tag[1] as string;
    const attributes = this.attributes(tag[2] ?? "");
    if (attributes === null) return -1;
    const bindings = bindingsOf(attributes);
    if (bindings === false) return -1;
    const element: OpenElement = { name, bindings };
    this.open.push(element);
    const uri = this.resolve(name, true);
    const resolved: Record<string, CallAttribute> = {};
    for (const [key, value] of attributes) {
      const colon = key.indexOf(":");
      const prefix = colon < 0 ? "" : key.slice(0, colon);
      const local = colon < 0 ? key : key.slice(colon + 1);
      const attributeUri =
        key === "xmlns" || prefix === "xmlns"
          ? XMLNS_NAMESPACE
          : prefix === ""
            ? ""
            : this.resolve(key, false);
      if (attributeUri === null) return -1;
      resolved[key] = { name: key, prefix, local, uri: attributeUri, value };
    }
    if (uri === null) return -1;
    this.place = "content";
    const colon = name.indexOf(":");
    this.handlers.open({ name, local: colon < 0 ? name : name.slice(colon + 1), uri, attributes: resolved });
    const end = START_TAG.lastIndex;
    if (tag[3] === "/") return this.closed(end);
    return end;
  }

  /** Reads the end tag at `at`. */
  private endTag(text: string, at: number): number {
    END_TAG.lastIndex = at;
    const tag = END_TAG.exec(text);
    if (!tag) return text.indexOf(">", at) >= 0 || text.length - at > TAG_LENGTH_MAX ? -1 : at;
    const top = this.open[this.open.length - 1];
    if (top === undefined || top.name !== tag[1]) return -1;
    return this.closed(END_TAG.lastIndex);
  }

  private closed(end: number): number {
    this.open.pop();
    this.handlers.close();
    if (this.open.length === 0) this.place = "epilog";
    return end;
  }

  /** The attributes in order, values decoded; null when outside the subset (a repeated name…). */
  private attributes(source: string): Array<[string, string]> | null {
    const list: Array<[string, string]> = [];
    if (source === "") return list;
    const locals = new Set<string>();
    ATTRIBUTE.lastIndex = 0;
    for (let match = ATTRIBUTE.exec(source); match !== null; match = ATTRIBUTE.exec(source)) {
      const key = match[1] as string;
      const local = key.slice(key.indexOf(":") + 1);
      // Two attributes of one local name may be one expanded name: saxes decides.
      if (locals.has(local)) return null;
      locals.add(local);
      const value = decodePredefined(match[2] ?? match[3] ?? "");
      if (value === null) return null;
      list.push([key, value]);
    }
    return list;
  }

  /** The namespace of a prefixed or unprefixed name, from the innermost binding; null when unbound. */
  private resolve(name: string, element: boolean): string | null {
    const colon = name.indexOf(":");
    const prefix = colon < 0 ? "" : name.slice(0, colon);
    if (prefix === "xml" || prefix === "xmlns") return null;
    if (prefix === "" && !element) return "";
    for (let i = this.open.length - 1; i >= 0; i -= 1) {
      const uri = this.open[i]?.bindings?.get(prefix);
      if (uri !== undefined) return uri;
    }
    return prefix === "" ? "" : null;
  }
}

/**
 * The prefixes an element's attributes declare (`xmlns` is the default namespace); null when none,
 * false when a declaration is outside the subset (binding `xml` or `xmlns`, their namespaces, or
 * undeclaring a prefix).
 */
function bindingsOf(attributes: ReadonlyArray<[string, string]>): Map<string, string> | null | false {
  let bindings: Map<string, string> | null = null;
  for (const [key, value] of attributes) {
    if (key !== "xmlns" && !key.startsWith("xmlns:")) continue;
    const prefix = key === "xmlns" ? "" : key.slice(6);
    // A namespace name is taken trimmed, as saxes takes it.
    const uri = value.trim();
    if (prefix === "xml" || prefix === "xmlns" || uri === XML_NAMESPACE || uri === XMLNS_NAMESPACE)
      return false;
    if (prefix !== "" && uri === "") return false;
    (bindings ??= new Map()).set(prefix, uri);
  }
  return bindings;
}

/**
 * Where a text that runs to the end of what has arrived may be cut: before a reference that may be
 * unfinished, and before trailing `]`s (which could begin a `]]>`).
 */
function safeTextEnd(text: string, from: number): number {
  let end = text.length;
  const amp = text.lastIndexOf("&", end - 1);
  if (amp >= from && text.indexOf(";", amp) < 0) {
    // No reference of the subset is longer than `&quot;`: a longer one is no reference.
    if (end - amp > 6) return -1;
    end = amp;
  }
  while (end > from && text.charCodeAt(end - 1) === 93 /* ] */) end -= 1;
  return end;
}
