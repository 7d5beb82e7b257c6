/**
 * A tiny XSD-like content model: the element names and ORDER the application accepts. The real
 * request processor rejects the whole message set (HRESULT 0x80040400) for an unknown or
 * out-of-order element, so request validation must be exact for the supported request types.
 * Element names and order follow qbxml130.xsd; the models are written by hand.
 */
import type { XmlElement } from "./xml-tree.ts";

/** Leaf value kinds that are checked; `any` accepts any subtree (for aggregates we do not model). */
export type LeafKind = "text" | "bool" | "amount" | "quantity" | "int" | "date" | "datetime" | "any";

/** Content of an element: a leaf kind or a nested sequence. */
export type Content = LeafKind | Model;

/** One particle of a sequence. */
export type Particle =
  | {
      readonly kind: "element";
      readonly name: string;
      readonly min: number;
      readonly max: number;
      readonly content: Content;
    }
  | {
      readonly kind: "choice";
      readonly min: number;
      readonly max: number;
      readonly options: readonly Model[];
    };

/** A sequence of particles. */
export type Model = readonly Particle[];

/** Exactly one `name`. */
export function req(name: string, content: Content = "text"): Particle {
  return { kind: "element", name, min: 1, max: 1, content };
}

/** Zero or one `name`. */
export function opt(name: string, content: Content = "text"): Particle {
  return { kind: "element", name, min: 0, max: 1, content };
}

/** Zero or more `name` (at most `max`). */
export function many(name: string, content: Content = "text", max = Number.POSITIVE_INFINITY): Particle {
  return { kind: "element", name, min: 0, max, content };
}

/** One or more `name`. */
export function some(name: string, content: Content = "text"): Particle {
  return { kind: "element", name, min: 1, max: Number.POSITIVE_INFINITY, content };
}

/** A choice between sequences, repeated `min`..`max` times. */
export function choice(min: number, max: number, ...options: Model[]): Particle {
  return { kind: "choice", min, max, options };
}

const LEAF_PATTERNS: Record<Exclude<LeafKind, "text" | "any">, RegExp> = {
  bool: /^(true|false|1|0)$/,
  amount: /^[+-]?(\d+(\.\d*)?|\.\d+)$/,
  quantity: /^[+-]?(\d+(\.\d*)?|\.\d+)$/,
  int: /^[+-]?\d+$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  datetime: /^\d{4}-\d{2}-\d{2}(T\d{2}(:\d{2}(:\d{2}([+-]\d{2}:\d{2})?)?)?)?$/,
};

function contentValid(content: Content, element: XmlElement): boolean {
  if (content === "any") return true;
  if (typeof content === "string") {
    if (element.children.length > 0) return false;
    return content === "text" || LEAF_PATTERNS[content].test(element.text);
  }
  if (element.text.trim() !== "") return false;
  return matchSequence(content, 0, element.children, 0).has(element.children.length);
}

function matchOnce(p: Particle, kids: readonly XmlElement[], pos: number): Set<number> {
  if (p.kind === "element") {
    const k = kids[pos];
    return k !== undefined && k.name === p.name && contentValid(p.content, k)
      ? new Set([pos + 1])
      : new Set();
  }
  const ends = new Set<number>();
  for (const option of p.options) for (const e of matchSequence(option, 0, kids, pos)) ends.add(e);
  return ends;
}

function matchRepeated(p: Particle, kids: readonly XmlElement[], pos: number): Set<number> {
  const results = new Set<number>();
  if (p.min === 0) results.add(pos);
  let frontier = new Set([pos]);
  for (let count = 1; count <= p.max && frontier.size > 0; count++) {
    const next = new Set<number>();
    // Only progress counts, so empty repetitions cannot loop forever.
    for (const f of frontier) for (const e of matchOnce(p, kids, f)) if (e > f) next.add(e);
    if (count >= p.min) for (const e of next) results.add(e);
    frontier = next;
  }
  return results;
}

function matchSequence(model: Model, index: number, kids: readonly XmlElement[], pos: number): Set<number> {
  const p = model[index];
  if (p === undefined) return new Set([pos]);
  const ends = new Set<number>();
  for (const after of matchRepeated(p, kids, pos)) {
    for (const e of matchSequence(model, index + 1, kids, after)) ends.add(e);
  }
  return ends;
}

/** True when the children of `element` match `model` exactly (names, order, counts, leaf kinds). */
export function matchesModel(model: Model, element: XmlElement): boolean {
  return contentValid(model, element);
}
