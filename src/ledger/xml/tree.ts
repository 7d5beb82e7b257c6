/**
 * The element tree the simulated ledger and the typed engines work on: requests are parsed into it, records keep their
 * fields in it, and responses are rendered from it. Text-only leaves carry `text`; aggregates carry
 * `children`. Attribute order is kept because the response format is compared byte for byte.
 */

/** One XML element. */
export interface XmlElement {
  readonly name: string;
  /** Attributes in document order. */
  readonly attrs: ReadonlyArray<readonly [string, string]>;
  readonly children: readonly XmlElement[];
  /** Text content of a leaf (empty for aggregates). */
  readonly text: string;
}

/** No attributes or no children: one shared frozen array (a page's tree has thousands of leaves). */
const NONE: readonly never[] = Object.freeze([]);

/** A leaf element `<name>text</name>`. */
export function leaf(name: string, text: string): XmlElement {
  return { name, attrs: NONE, children: NONE, text };
}

/** An aggregate element. */
export function node(
  name: string,
  children: readonly XmlElement[],
  attrs: ReadonlyArray<readonly [string, string]> = NONE,
): XmlElement {
  return { name, attrs, children, text: "" };
}

/** First child named `name`. */
export function child(parent: XmlElement, name: string): XmlElement | undefined {
  return parent.children.find((c) => c.name === name);
}

/** All children named `name`. */
export function childrenNamed(parent: XmlElement, name: string): XmlElement[] {
  return parent.children.filter((c) => c.name === name);
}

/** Text of the first child named `name`, if present. */
export function childText(parent: XmlElement, name: string): string | undefined {
  return child(parent, name)?.text;
}

/** Value of attribute `name`, if present. */
export function attr(element: XmlElement, name: string): string | undefined {
  return element.attrs.find(([key]) => key === name)?.[1];
}

const ESCAPED_IN_TEXT = /[&<>]/;
const ESCAPED_IN_ATTR = /[&<>"]/;
const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
const escapeOne = (char: string): string => ESCAPES[char] ?? char;

function escapeText(value: string): string {
  return ESCAPED_IN_TEXT.test(value) ? value.replace(/[&<>]/g, escapeOne) : value;
}

function escapeAttr(value: string): string {
  return ESCAPED_IN_ATTR.test(value) ? value.replace(/[&<>"]/g, escapeOne) : value;
}

function renderAttrs(element: XmlElement): string {
  let out = "";
  for (const [key, value] of element.attrs) out += ` ${key}="${escapeAttr(value)}"`;
  return out;
}

/** The element's XML, its tags and children separated by `separator` ("" compact, "\n" one per line). */
function renderElement(element: XmlElement, separator: string): string {
  const attrs = element.attrs.length === 0 ? "" : renderAttrs(element);
  if (element.children.length > 0) {
    let out = `<${element.name}${attrs}>`;
    for (const c of element.children) out += separator + renderElement(c, separator);
    return `${out}${separator}</${element.name}>`;
  }
  if (element.text !== "") return `<${element.name}${attrs}>${escapeText(element.text)}</${element.name}>`;
  // The application writes attribute-only elements (status-only Rs) as `<XRs a="b" />`.
  if (attrs !== "") return `<${element.name}${attrs} />`;
  return `<${element.name}></${element.name}>`;
}

/** One element as compact XML text (request messages inside a message set). */
export function renderElementText(element: XmlElement): string {
  return renderElement(element, "");
}

/**
 * Renders a response document the way the application does: `<?xml version="1.0" ?>`, one element
 * per line, no indentation, trailing newline (verbatim captures, samples 04/09/12).
 */
export function renderDocument(root: XmlElement): string {
  return `<?xml version="1.0" ?>\n${renderElement(root, "\n")}\n`;
}

/** An element tree as indented text, one element per line (for people: the console's XML view). */
export function renderIndented(root: XmlElement, indent = "  "): string {
  const out: string[] = [];
  const walk = (element: XmlElement, depth: number): void => {
    const pad = indent.repeat(depth);
    if (element.children.length === 0) {
      out.push(pad + renderElementText(element));
      return;
    }
    out.push(`${pad}<${element.name}${renderAttrs(element)}>`);
    for (const c of element.children) walk(c, depth + 1);
    out.push(`${pad}</${element.name}>`);
  };
  walk(root, 0);
  return `${out.join("\n")}\n`;
}
