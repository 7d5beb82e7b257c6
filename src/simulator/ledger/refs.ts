/**
 * Which stored objects a reference element may name. The reference's element name says it: the
 * longest CamelCase suffix of `<…>Ref` that is an object type or one of the few kinds that stand for
 * several types (`Item`, `Entity`, `Terms`…). `ARAccountRef` → Account, `PayeeEntityRef` → Customer,
 * Vendor, Employee, OtherName; `ParentRef` → the owner's own type.
 */
import { objectTypes } from "./objects.ts";

/** Reference kinds that stand for several object types. */
const GROUPED_KINDS: Readonly<Record<string, (names: readonly string[]) => string[]>> = {
  Item: (names) => names.filter((n) => n.startsWith("Item")),
  Entity: () => ["Customer", "Vendor", "Employee", "OtherName"],
  Terms: () => ["StandardTerms", "DateDrivenTerms"],
  ItemSalesTax: () => ["ItemSalesTax", "ItemSalesTaxGroup"],
  UOMSet: () => ["UnitOfMeasureSet"],
  Payee: () => ["Customer", "Vendor", "Employee", "OtherName"],
};

/** A reference's target: the kind named in status messages and the object types that fit. */
export interface RefTarget {
  readonly kind: string;
  readonly objects: readonly string[];
}

const cache = new Map<string, RefTarget>();

function suffixes(base: string): string[] {
  // "ARAccount" → ["ARAccount", "Account"]; "PayeeEntity" → ["PayeeEntity", "Entity"].
  const out: string[] = [];
  for (let i = 0; i < base.length; i++) {
    const c = base[i] ?? "";
    const prev = base[i - 1] ?? "";
    const next = base[i + 1] ?? "";
    const boundary =
      i === 0 || (c >= "A" && c <= "Z" && (prev < "A" || prev > "Z" || (next >= "a" && next <= "z")));
    if (boundary) out.push(base.slice(i));
  }
  return out;
}

/** The objects a reference element of `owner` may name. */
export function refTarget(refElement: string, owner: string): RefTarget {
  const key = `${owner}/${refElement}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const names = [...objectTypes().keys()];
  const base = refElement.replace(/Ref$/, "");
  let target: RefTarget = { kind: base, objects: [] };
  if (base === "Parent") {
    target = { kind: owner, objects: [owner] };
  } else {
    for (const suffix of suffixes(base)) {
      const grouped = GROUPED_KINDS[suffix];
      if (grouped !== undefined) {
        // A kind of several types never names the owner's own type (a group of groups, a tax group of
        // tax groups); only ParentRef does that.
        target = { kind: suffix, objects: grouped(names).filter((o) => o !== owner) };
        break;
      }
      if (names.includes(suffix)) {
        target = { kind: suffix, objects: [suffix] };
        break;
      }
    }
  }
  cache.set(key, target);
  return target;
}
