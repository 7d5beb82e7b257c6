import { ledgerSchema } from "../xml/schema.ts";
import { slotsOf } from "../xml/slots.ts";

/**
 * Which object types a reference field may name, read from its element name as the application
 * reads it: the longest CamelCase suffix of `<…>Ref` that is an object type, or one of the few kinds
 * that stand for several types (`Item`, `Entity`, `Payee`…). `ARAccountRef` → Account,
 * `PayeeEntityRef` → the four entity types, `CustomerMsgRef` → CustomerMsg (not Customer),
 * `ParentRef` → the owner's own type. The simulated application checks references with it; the
 * mirror answers the entity, account, item, class, currency and site filters with it.
 */

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

/** The objects reference element `refElement` of an `owner` record may name, among `names`. */
export function refTargetAmong(refElement: string, owner: string, names: readonly string[]): RefTarget {
  const base = refElement.replace(/Ref$/, "");
  if (base === "Parent") return { kind: owner, objects: [owner] };
  for (const suffix of suffixes(base)) {
    const grouped = GROUPED_KINDS[suffix];
    // A kind of several types never names the owner's own type (a group of groups, a tax group of
    // tax groups); only ParentRef does that.
    if (grouped !== undefined) return { kind: suffix, objects: grouped(names).filter((o) => o !== owner) };
    if (names.includes(suffix)) return { kind: suffix, objects: [suffix] };
  }
  return { kind: base, objects: [] };
}

let objectNames: readonly string[] | null = null;

/**
 * Names of the object types the company file stores (`Invoice`, `Customer`, `ItemService`…): those
 * the schema can add and that answer with a record carrying a `TxnID` or a `ListID` (`XAddRq`
 * answered by `XRet`).
 */
export function storedObjectNames(): readonly string[] {
  if (objectNames) return objectNames;
  const schema = ledgerSchema();
  const names: string[] = [];
  for (const request of schema.table.requests) {
    if (!request.endsWith("AddRq")) continue;
    const name = request.slice(0, -"AddRq".length);
    const rs = `${name}AddRs`;
    if (!schema.isComplex(request) || !schema.isComplex(rs)) continue;
    const add = slotsOf(schema, request).find((s) => s.name.endsWith("Add"));
    const ret = slotsOf(schema, rs).find((s) => s.name.endsWith("Ret"));
    if (add === undefined || ret === undefined || ret.typeKey !== `${name}Ret`) continue;
    const retSlots = slotsOf(schema, ret.typeKey);
    if (retSlots.some((s) => s.name === "TxnID" || s.name === "ListID")) names.push(name);
  }
  objectNames = names;
  return names;
}
