import { ledgerSchema } from "../xml/schema.ts";
import { slotsOf } from "../xml/slots.ts";
import { jsonNameOf, nameTable } from "./names.ts";

/**
 * The JSON names the secret elements get in typed input and output (decision 0032), derived from
 * the schema table and the name table like every other name: for each secret element
 * (`SECRET_ELEMENTS`), its field name in the type that holds it, and the field names under which
 * that type is nested (`creditCard.number`, `creditCardTransaction.request.number`). A type that is
 * a record of its own (an employee's `ssn`) is found under any parent: records sit at a result's
 * root, in `data[]` or in a batch member's `data`.
 */
export interface SecretJsonField {
  readonly rule: "last4" | "all";
  /** The parent keys it is found under; null: under any. */
  readonly parents: ReadonlySet<string> | null;
}

let table: ReadonlyMap<string, readonly SecretJsonField[]> | null = null;

/** A message type (`…Rq`, `…Rs`) nests records at the root of the JSON, not under its own name. */
const isMessageType = (typeKey: string): boolean => /(Rq|Rs)$/.test(typeKey);

/**
 * Secret JSON field names → where they are secret. Built once on first use from the whole schema
 * (about 60 ms), never on a record's path: the typed reader masks through the field kinds instead.
 */
export function secretJsonFields(
  secretElements: Readonly<Record<string, "last4" | "all">>,
): ReadonlyMap<string, readonly SecretJsonField[]> {
  if (table) return table;
  const schema = ledgerSchema();
  const names = nameTable();
  const types = Object.keys(schema.table.complex);
  const holders = new Map<string, { json: Set<string>; rule: "last4" | "all" }[]>();
  for (const typeKey of types) {
    for (const slot of slotsOf(schema, typeKey)) {
      const rule = secretElements[slot.name];
      if (rule === undefined) continue;
      const json = new Set(
        (["input", "output"] as const).map((direction) => jsonNameOf(names, typeKey, slot, false, direction)),
      );
      holders.set(typeKey, [...(holders.get(typeKey) ?? []), { json, rule }]);
    }
  }
  const parents = new Map<string, Set<string> | null>();
  for (const typeKey of types) {
    for (const slot of slotsOf(schema, typeKey)) {
      if (!holders.has(slot.typeKey)) continue;
      if (isMessageType(typeKey)) {
        parents.set(slot.typeKey, null);
        continue;
      }
      const known = parents.get(slot.typeKey);
      if (known === null) continue;
      const set = known ?? new Set<string>();
      for (const direction of ["input", "output"] as const)
        set.add(jsonNameOf(names, typeKey, slot, false, direction));
      parents.set(slot.typeKey, set);
    }
  }
  const built = new Map<string, SecretJsonField[]>();
  for (const [typeKey, secrets] of holders) {
    for (const { json, rule } of secrets) {
      for (const name of json) {
        built.set(name, [...(built.get(name) ?? []), { rule, parents: parents.get(typeKey) ?? null }]);
      }
    }
  }
  table = built;
  return table;
}
