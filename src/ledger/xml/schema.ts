import { readFileSync } from "node:fs";
import { parseContentModel, type Particle } from "./content-model.ts";
import type { LedgerSchemaTable, SimpleTypeEntry } from "./schema-table.ts";

/**
 * The application's message schema (`generated/ledger-schema.json`, derived from the SDK's XSDs by
 * `scripts/gen-ledger-schema.ts`): request and response message types, read once and compiled
 * type by type on first use. The passthrough validator, the typed resource definitions and the
 * simulator all read the same table.
 */

export interface ComplexType {
  readonly kind: "complex";
  readonly key: string;
  readonly model: Particle;
  readonly attributes: Readonly<Record<string, string>>;
}
export interface SimpleType {
  readonly kind: "simple";
  readonly key: string;
  readonly entry: SimpleTypeEntry;
  readonly attributes: Readonly<Record<string, string>>;
}
export type CompiledType = ComplexType | SimpleType;

export class LedgerSchema {
  readonly requests: ReadonlySet<string>;
  readonly responses: ReadonlySet<string>;
  private readonly types = new Map<string, CompiledType>();
  private readonly groups = new Map<string, Particle>();

  constructor(readonly table: LedgerSchemaTable) {
    this.requests = new Set(table.requests);
    this.responses = new Set(table.responses);
  }

  /** The type key of an element: its local type key, or the global element's entry. */
  keyOf(name: string, typeKey: string | null): string {
    return typeKey ?? this.table.elements[name] ?? name;
  }

  /** The type of an element: a local type key, or the global element's entry. */
  typeOf(name: string, typeKey: string | null): CompiledType {
    const key = this.keyOf(name, typeKey);
    let type = this.types.get(key);
    if (type === undefined) {
      type = this.compile(key);
      this.types.set(key, type);
    }
    return type;
  }

  /** Whether a type key names a complex (element-only) type of the table. */
  isComplex(key: string): boolean {
    return this.table.complex[key] !== undefined;
  }

  /** The compiled particle of a named group (groups stay shared objects). */
  group(name: string): Particle {
    let particle = this.groups.get(name);
    if (particle === undefined) {
      const model = this.table.groups[name];
      if (model === undefined) throw new Error(`ledger schema: no group ${name}`);
      particle = parseContentModel(model, (inner) => this.group(inner));
      this.groups.set(name, particle);
    }
    return particle;
  }

  private compile(key: string): CompiledType {
    const simple = this.table.simple[key];
    if (simple) return { kind: "simple", key, entry: simple, attributes: this.attributeSet(simple.a) };
    const complex = this.table.complex[key];
    if (!complex) throw new Error(`ledger schema: no type ${key}`);
    const model = parseContentModel(complex.m, (name) => this.group(name));
    return { kind: "complex", key, model, attributes: this.attributeSet(complex.a) };
  }

  private attributeSet(key: string | undefined): Record<string, string> {
    return key === undefined ? {} : (this.table.attributes[key] ?? {});
  }
}

let loaded: LedgerSchema | null = null;

/** The schema, read once on first use. */
export function ledgerSchema(): LedgerSchema {
  loaded ??= new LedgerSchema(
    JSON.parse(
      readFileSync(new URL("./generated/ledger-schema.json", import.meta.url), "utf8"),
    ) as LedgerSchemaTable,
  );
  return loaded;
}
