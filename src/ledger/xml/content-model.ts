/**
 * Content models of the request schema (sequences, choices, occurrences) and a one-pass matcher.
 *
 * The schema's models are deterministic (XML Schema's "unique particle attribution"): at every point
 * the next element name selects at most one particle. So one greedy pass, guided by each particle's
 * set of possible first names, decides validity exactly without backtracking. When it fails,
 * `explainMismatch` runs the match again, this time recording where each child landed in the model,
 * and turns the failure into the most useful explanation: an unknown name, a missing element, an
 * element out of order, two alternatives of one choice, or one element too many.
 */

export interface ElementParticle {
  readonly kind: "element";
  readonly name: string;
  /** The type of a local element; null for a global element (typed by the schema's element table). */
  readonly typeKey: string | null;
  readonly min: number;
  readonly max: number;
  readonly first: ReadonlySet<string>;
  readonly emptiable: false;
}

export interface CompositeParticle {
  readonly kind: "sequence" | "choice";
  readonly items: readonly Particle[];
  readonly min: number;
  readonly max: number;
  /** The element names one occurrence may start with. */
  readonly first: ReadonlySet<string>;
  /** Whether one occurrence may be empty. */
  readonly emptiable: boolean;
}

export type Particle = ElementParticle | CompositeParticle;

const optional = (particle: Particle): boolean => particle.min === 0 || particle.emptiable;

function composite(kind: "sequence" | "choice", items: Particle[], min: number, max: number): Particle {
  const first = new Set<string>();
  let emptiable = kind === "sequence";
  for (const item of items) {
    for (const name of item.first) first.add(name);
    if (kind === "choice") {
      if (optional(item)) emptiable = true;
    } else if (!optional(item)) {
      // Names past the first required item cannot start the sequence.
      emptiable = false;
      break;
    }
  }
  return { kind, items, min, max, first, emptiable };
}

/**
 * Parses a model string of the derived table (grammar in `schema-table.ts`). `group` returns
 * the compiled particle of a named group; groups stay shared objects.
 */
export function parseContentModel(text: string, group: (name: string) => Particle): Particle {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`content model: ${what} at ${at} in "${text}"`);
  };
  const readWhile = (test: RegExp): string => {
    const start = at;
    while (at < text.length && test.test(text.charAt(at))) at++;
    return text.slice(start, at);
  };
  const readOccurs = (): [number, number] => {
    const mark = text.charAt(at);
    if (mark === "?" || mark === "*" || mark === "+") at++;
    if (mark === "?") return [0, 1];
    if (mark === "*") return [0, Infinity];
    if (mark === "+") return [1, Infinity];
    if (mark !== "{") return [1, 1];
    const close = text.indexOf("}", at);
    const [low = "", high = ""] = text.slice(at + 1, close).split(",");
    at = close + 1;
    return [Number(low), high === "" ? Infinity : Number(high)];
  };
  const sequence = (): Particle[] => {
    const items: Particle[] = [];
    while (at < text.length && text.charAt(at) !== ")" && text.charAt(at) !== "|") {
      items.push(item());
      if (text.charAt(at) === ",") at++;
    }
    return items;
  };
  const item = (): Particle => {
    const mark = text.charAt(at);
    if (mark === "(") {
      at++;
      const alternatives = [sequence()];
      while (text.charAt(at) === "|") {
        at++;
        alternatives.push(sequence());
      }
      if (text.charAt(at) !== ")") fail("expected )");
      at++;
      const [min, max] = readOccurs();
      if (alternatives.length === 1) return composite("sequence", alternatives[0] ?? [], min, max);
      const items = alternatives.map((alt) =>
        alt.length === 1 && alt[0] ? alt[0] : composite("sequence", alt, 1, 1),
      );
      return composite("choice", items, min, max);
    }
    if (mark === "&") {
      at++;
      const shared = group(readWhile(/\w/));
      const [min, max] = readOccurs();
      return min === 1 && max === 1 ? shared : composite("sequence", [shared], min, max);
    }
    const name = readWhile(/\w/);
    if (name === "") fail("expected a name");
    let typeKey: string | null = null;
    if (text.charAt(at) === ":") {
      at++;
      typeKey = readWhile(/[^,|()?*+{}]/);
    }
    const [min, max] = readOccurs();
    return { kind: "element", name, typeKey, min, max, first: new Set([name]), emptiable: false };
  };
  const root = composite("sequence", sequence(), 1, 1);
  if (at !== text.length) fail("unexpected character");
  return root;
}

/** One step of a path through the model: the `index`th item of `container`. */
interface Frame {
  readonly container: CompositeParticle;
  readonly index: number;
}

/** The first failure of a match: a required particle absent at child `at`, or child `at` left over. */
export type Mismatch =
  | { readonly kind: "missing"; readonly expected: Particle; readonly at: number }
  | { readonly kind: "unexpected"; readonly at: number };

class MissingParticle extends Error {
  constructor(
    readonly expected: Particle,
    readonly at: number,
  ) {
    super("a required particle is missing");
  }
}

class Match {
  pos = 0;
  readonly matched: ElementParticle[] = [];
  private readonly stack: Frame[] = [];

  constructor(
    private readonly names: readonly string[],
    /** When set, receives the path of every matched child (diagnosis only). */
    private readonly trails: Frame[][] | null,
  ) {}

  particle(particle: Particle): void {
    let count = 0;
    while (count < particle.max && this.pos < this.names.length) {
      const next = this.names[this.pos] ?? "";
      if (!particle.first.has(next)) break;
      const before = this.pos;
      this.once(particle, next);
      count++;
      if (this.pos === before) break;
    }
    if (count < particle.min && !particle.emptiable) throw new MissingParticle(particle, this.pos);
  }

  private once(particle: Particle, next: string): void {
    if (particle.kind === "element") {
      this.matched.push(particle);
      this.trails?.push([...this.stack]);
      this.pos++;
      return;
    }
    if (particle.kind === "sequence") {
      for (let index = 0; index < particle.items.length; index++) {
        this.enter(particle, index);
      }
      return;
    }
    const index = particle.items.findIndex((item) => item.first.has(next));
    this.enter(particle, index);
  }

  private enter(container: CompositeParticle, index: number): void {
    const item = container.items[index];
    if (!item) return;
    if (this.trails === null) return this.particle(item);
    this.stack.push({ container, index });
    try {
      this.particle(item);
    } finally {
      this.stack.pop();
    }
  }
}

/** Matches child element names against a model: the particle of each child, or the first mismatch. */
export function matchContent(model: Particle, names: readonly string[]): ElementParticle[] | Mismatch {
  const match = new Match(names, null);
  try {
    match.particle(model);
  } catch (error) {
    if (error instanceof MissingParticle) return { kind: "missing", expected: error.expected, at: error.at };
    throw error;
  }
  if (match.pos < names.length) return { kind: "unexpected", at: match.pos };
  return match.matched;
}

/** Why a list of children does not fit a model; `at`, `before`… are child indexes. */
export type Explanation =
  | { kind: "unknown"; at: number; allowed: string[]; suggestion: string | null }
  | { kind: "missing"; names: string[]; element: boolean }
  | { kind: "order"; at: number; before: number }
  | { kind: "choice"; at: number; other: number; alternatives: string[][] }
  | { kind: "tooMany"; at: number; max: number }
  | { kind: "position"; at: number };

/** Element names of a model, in schema order. */
function modelNames(model: Particle, into = new Set<string>()): Set<string> {
  if (model.kind === "element") into.add(model.name);
  else for (const item of model.items) modelNames(item, into);
  return into;
}

/** The paths to every element particle called `name`. */
function pathsTo(model: Particle, name: string, trail: Frame[] = [], into: Frame[][] = []): Frame[][] {
  if (model.kind === "element") {
    if (model.name === name) into.push([...trail]);
    return into;
  }
  model.items.forEach((item, index) => {
    trail.push({ container: model, index });
    pathsTo(item, name, trail, into);
    trail.pop();
  });
  return into;
}

type Relation = "same" | "before" | "after" | "alternative";

/** Where the particle at path `a` stands relative to the particle at path `b`. */
function relation(a: readonly Frame[], b: readonly Frame[]): Relation {
  for (let depth = 0; depth < Math.min(a.length, b.length); depth++) {
    const x = a[depth];
    const y = b[depth];
    if (!x || !y || x.index === y.index) continue;
    if (x.container.kind === "sequence") return x.index < y.index ? "before" : "after";
    // Alternatives of a repeating choice may follow each other freely.
    return x.container.max > 1 ? "after" : "alternative";
  }
  return "same";
}

/** The particle a missing `particle` really stands for: a sequence's first required item. */
function requiredPart(particle: Particle): Particle {
  if (particle.kind !== "sequence") return particle;
  const required = particle.items.find((item) => !optional(item));
  return required ? requiredPart(required) : particle;
}

/** Turns a mismatch into the explanation a developer needs to fix the message. */
export function explainMismatch(model: Particle, names: readonly string[], mismatch: Mismatch): Explanation {
  const all = modelNames(model);
  const at = mismatch.at;
  const next = names[at];
  if (next !== undefined && !all.has(next)) {
    const lower = next.toLowerCase();
    const suggestion = [...all].find((name) => name.toLowerCase() === lower) ?? null;
    return { kind: "unknown", at, allowed: [...all], suggestion };
  }
  if (mismatch.kind === "missing") {
    const required = requiredPart(mismatch.expected);
    const wanted = [...required.first];
    for (const name of wanted) {
      const later = names.indexOf(name, at + 1);
      if (later > at) return { kind: "order", at: later, before: at };
    }
    return { kind: "missing", names: wanted, element: required.kind === "element" };
  }
  const trails: Frame[][] = [];
  const replay = new Match(names, trails);
  try {
    replay.particle(model);
  } catch (error) {
    if (!(error instanceof MissingParticle)) throw error;
  }
  let best: Explanation | null = null;
  let bestIndex = -1;
  for (const path of pathsTo(model, next ?? "")) {
    for (let other = 0; other < Math.min(at, trails.length); other++) {
      const seen = trails[other] ?? [];
      const how = relation(path, seen);
      if (how === "after") continue;
      if (other > bestIndex) {
        bestIndex = other;
        best = conflict(how, at, other, path, seen, replay.matched[other]);
      }
      break;
    }
  }
  return best ?? { kind: "position", at };
}

function conflict(
  how: Exclude<Relation, "after">,
  at: number,
  other: number,
  path: readonly Frame[],
  seen: readonly Frame[],
  seenParticle: ElementParticle | undefined,
): Explanation {
  if (how === "before") return { kind: "order", at, before: other };
  if (how === "same") return { kind: "tooMany", at, max: seenParticle?.max ?? 1 };
  const depth = path.findIndex((frame, i) => frame.index !== seen[i]?.index);
  const choice = path[depth]?.container;
  const alternatives = choice ? choice.items.map((item) => [...modelNames(item)]) : [];
  return { kind: "choice", at, other, alternatives };
}

/** Names that may continue an occurrence of `particle` after a prefix that could already end it. */
function continuations(particle: Particle): Set<string> {
  const names = new Set<string>(particle.max > 1 ? particle.first : []);
  if (particle.kind === "choice") {
    for (const item of particle.items) for (const name of continuations(item)) names.add(name);
  } else if (particle.kind === "sequence") {
    for (let k = particle.items.length - 1; k >= 0; k--) {
      const item = particle.items[k];
      if (!item) continue;
      for (const name of continuations(item)) names.add(name);
      if (!optional(item)) break;
      for (const name of item.first) names.add(name);
    }
  }
  return names;
}

/**
 * Checks that `model` is deterministic, which the one-pass matcher relies on: returns a description of
 * the first name that two particles could both claim, or null.
 */
export function findAmbiguity(model: Particle, checked = new WeakSet<Particle>()): string | null {
  if (model.kind === "element" || checked.has(model)) return null;
  checked.add(model);
  for (const item of model.items) {
    const inner = findAmbiguity(item, checked);
    if (inner) return inner;
  }
  const items = model.items;
  if (model.kind === "choice") {
    const seen = new Set<string>();
    for (const item of items) {
      for (const name of item.first) if (seen.has(name)) return `${name} starts two alternatives`;
      for (const name of item.first) seen.add(name);
    }
    return null;
  }
  for (let k = 0; k < items.length; k++) {
    const item = items[k];
    if (!item) continue;
    const claims = continuations(item);
    if (optional(item)) for (const name of item.first) claims.add(name);
    for (let next = k + 1; next < items.length; next++) {
      const later = items[next];
      if (!later) continue;
      for (const name of later.first) {
        if (claims.has(name)) return `${name} may belong to item ${k} or item ${next} of a sequence`;
      }
      if (!optional(later)) break;
    }
  }
  return null;
}
