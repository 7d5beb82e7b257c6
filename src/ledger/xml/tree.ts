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

/** A leaf element `<name>text</name>`. */
export function leaf(name: string, text: string): XmlElement {
  return { name, attrs: [], children: [], text };
}

/** An aggregate element. */
export function node(
  name: string,
  children: readonly XmlElement[],
  attrs: ReadonlyArray<readonly [string, string]> = [],
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

function escapeText(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttr(value: string): string {
  return escapeText(value).replace(/"/g, "&quot;");
}

function renderElement(element: XmlElement, out: string[]): void {
  const attrs = element.attrs.map(([key, value]) => ` ${key}="${escapeAttr(value)}"`).join("");
  if (element.children.length > 0) {
    out.push(`<${element.name}${attrs}>`);
    for (const c of element.children) renderElement(c, out);
    out.push(`</${element.name}>`);
  } else if (element.text !== "") {
    out.push(`<${element.name}${attrs}>${escapeText(element.text)}</${element.name}>`);
  } else if (attrs !== "") {
    // The application writes attribute-only elements (status-only Rs) as `<XRs a="b" />`.
    out.push(`<${element.name}${attrs} />`);
  } else {
    out.push(`<${element.name}></${element.name}>`);
  }
}

/** One element as compact XML text (request messages inside a message set). */
export function renderElementText(element: XmlElement): string {
  const out: string[] = [];
  renderElement(element, out);
  return out.join("");
}

/**
 * Renders a response document the way the application does: `<?xml version="1.0" ?>`, one element
 * per line, no indentation, trailing newline (verbatim captures, samples 04/09/12).
 */
export function renderDocument(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0" ?>'];
  renderElement(root, out);
  return `${out.join("\n")}\n`;
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
    const attrs = element.attrs.map(([key, value]) => ` ${key}="${escapeAttr(value)}"`).join("");
    out.push(`${pad}<${element.name}${attrs}>`);
    for (const c of element.children) walk(c, depth + 1);
    out.push(`${pad}</${element.name}>`);
  };
  walk(root, 0);
  return `${out.join("\n")}\n`;
}
