import type { Particle } from "./content-model.ts";
import type { CompiledType, LedgerSchema } from "./schema.ts";

/**
 * A complex type seen as a flat list of element "slots" in schema order, the view the typed engines
 * need: which elements a record has, in which order they must be written, how often each may occur,
 * which ones exclude each other, and the context that writes each (for its availability).
 */
export interface Slot {
  /** The element name. */
  readonly name: string;
  /** The element's type key in the schema table. */
  readonly typeKey: string;
  readonly type: CompiledType;
  /** Fewest occurrences in a valid parent (0 when the slot, or anything around it, is optional). */
  readonly min: number;
  /** Most occurrences (Infinity when the slot or anything around it repeats). */
  readonly max: number;
  /**
   * Fewest occurrences once the alternative of its innermost choice is taken (`min` when the slot
   * sits in no choice): `AccountRef` is 1 in a deposit line's `(EntityRef?, AccountRef, …, Amount?)`
   * alternative, so a line that sends `Amount` must send `AccountRef` too.
   */
  readonly minInAlternative: number;
  /**
   * The choices (each occurring at most once) the slot sits in, outermost first: two slots exclude
   * each other when they sit in different alternatives of one choice (same `id`).
   */
  readonly choices: readonly ChoiceStep[];
  /**
   * Set when the slot belongs to a repeated choice (`(LineA|LineB)*`): the slots sharing `id` are
   * written interleaved in one run, in the caller's order.
   */
  readonly family: number | null;
  /** Whether the repeated choice of `family` must occur at least once (`(LineA|LineB)+`). */
  readonly familyRequired: boolean;
  /**
   * The type key or `&group` whose model writes the element directly: the context in which the
   * availability table (`availability.ts`) gives its first version and the editions lacking it.
   */
  readonly owner: string;
}

/** One alternative of a choice that occurs at most once; `required` when the choice must be made. */
export interface ChoiceStep {
  readonly id: number;
  readonly alternative: number;
  readonly required: boolean;
}

/** Whether two slots exclude each other (alternatives of one choice). */
export function excludes(a: Slot, b: Slot): boolean {
  return a.choices.some((step) =>
    b.choices.some((other) => other.id === step.id && other.alternative !== step.alternative),
  );
}

interface Context {
  min: number;
  max: number;
  /** Fewest occurrences within the innermost choice alternative entered (1 at its entry). */
  altMin: number;
  choices: readonly ChoiceStep[];
  family: number | null;
  familyRequired: boolean;
  /** The type key or `&group` whose model writes the element directly. */
  owner: string;
}

/** The slots of a complex type (empty for a simple type). Results are cached per type key. */
export function slotsOf(schema: LedgerSchema, typeKey: string): readonly Slot[] {
  let cached = cache.get(schema)?.get(typeKey);
  if (cached) return cached;
  const type = schema.typeOf(typeKey, typeKey);
  const slots: Slot[] = [];
  if (type.kind === "complex") {
    let ids = 0;
    const walk = (particle: Particle, context: Context): void => {
      const min = context.min * particle.min;
      const max = context.max * particle.max;
      const altMin = context.altMin * particle.min;
      if (particle.kind === "element") {
        const key = schema.keyOf(particle.name, particle.typeKey);
        slots.push({
          name: particle.name,
          typeKey: key,
          type: schema.typeOf(particle.name, particle.typeKey),
          min,
          max,
          minInAlternative: altMin,
          choices: context.choices,
          family: context.family,
          familyRequired: context.familyRequired,
          owner: context.owner,
        });
        return;
      }
      const owner = groupName(schema, particle) ?? context.owner;
      if (particle.kind === "sequence") {
        for (const item of particle.items) walk(item, { ...context, min, max, altMin, owner });
        return;
      }
      // A choice: alternatives exclude each other unless the choice repeats.
      const id = ++ids;
      particle.items.forEach((item, alternative) => {
        if (particle.max > 1) {
          walk(item, { ...context, min: 0, max, altMin: 1, family: id, familyRequired: min > 0, owner });
        } else {
          const step = { id, alternative, required: min > 0 };
          walk(item, { ...context, min: 0, max, altMin: 1, choices: [...context.choices, step], owner });
        }
      });
    };
    walk(type.model, {
      min: 1,
      max: 1,
      altMin: 1,
      choices: [],
      family: null,
      familyRequired: false,
      owner: typeKey,
    });
  }
  cached = slots;
  let perSchema = cache.get(schema);
  if (!perSchema) {
    perSchema = new Map();
    cache.set(schema, perSchema);
  }
  perSchema.set(typeKey, cached);
  return cached;
}

const cache = new WeakMap<LedgerSchema, Map<string, readonly Slot[]>>();

/** The `&group` a particle is, when it is the shared object of a named group. */
function groupName(schema: LedgerSchema, particle: Particle): string | null {
  let names = groupNames.get(schema);
  if (!names) {
    names = new Map();
    for (const name of Object.keys(schema.table.groups)) names.set(schema.group(name), `&${name}`);
    groupNames.set(schema, names);
  }
  return names.get(particle) ?? null;
}

const groupNames = new WeakMap<LedgerSchema, Map<Particle, string>>();
