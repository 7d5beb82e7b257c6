/**
 * The object types the simulated application stores, derived from the schema table alone: an object
 * `X` exists when the schema has `XAddRq` and an `XRet` record type; it is a transaction when its Ret
 * carries a `TxnID`, a list object when it carries a `ListID`. Lines are the repeated Ret children
 * whose type has a `TxnLineID`; a repeated choice (`(InvoiceLineRet|InvoiceLineGroupRet)*`) is one
 * line family. Nothing here names a particular object.
 */
import { isReferenceType } from "../../ledger/resources/shape.ts";
import { ledgerSchema, type LedgerSchema } from "../../ledger/xml/schema.ts";
import { slotsOf, type Slot } from "../../ledger/xml/slots.ts";

/** One stored object type. */
export interface ObjectType {
  /** `Invoice`: InvoiceAddRq, InvoiceRet, TxnDelType `Invoice`. */
  readonly name: string;
  readonly kind: "list" | "transaction";
  readonly idElement: "ListID" | "TxnID";
  /** Type key of the record element (`InvoiceRet`). */
  readonly ret: string;
  /** Type keys of the Add and Mod elements. */
  readonly add: string;
  readonly mod: string | null;
  /** Has `ParentRef`: FullName `Parent:Child` and `Sublevel`. */
  readonly hierarchical: boolean;
  /** Ret element names of lines → their family (elements of one repeated choice share one). */
  readonly lineFamilies: ReadonlyMap<string, string>;
  /** The first line element, the family a stored line without `element` belongs to. */
  readonly defaultLine: string | undefined;
}

function enumValues(schema: LedgerSchema, key: string): readonly string[] {
  return schema.table.simple[key]?.e ?? [];
}

/** The type key of the single element a message type wraps (`InvoiceAddRq` → `InvoiceAdd`). */
function wrapped(schema: LedgerSchema, message: string, suffix: string): string | null {
  if (!schema.isComplex(message)) return null;
  const slot = slotsOf(schema, message).find((s) => s.name.endsWith(suffix));
  return slot?.typeKey ?? null;
}

/** Whether a complex type is a line (it has a `TxnLineID`). */
export function isLineType(schema: LedgerSchema, typeKey: string): boolean {
  return schema.isComplex(typeKey) && slotsOf(schema, typeKey).some((s) => s.name === "TxnLineID");
}

function lineFamilies(schema: LedgerSchema, ret: string): Map<string, string> {
  const families = new Map<string, string>();
  const byFamily = new Map<number, string>();
  for (const slot of slotsOf(schema, ret)) {
    if (slot.type.kind !== "complex" || !isLineType(schema, slot.typeKey)) continue;
    if (slot.family === null) {
      families.set(slot.name, slot.name);
      continue;
    }
    const first = byFamily.get(slot.family) ?? slot.name;
    byFamily.set(slot.family, first);
    families.set(slot.name, first);
  }
  return families;
}

function build(schema: LedgerSchema): Map<string, ObjectType> {
  const objects = new Map<string, ObjectType>();
  for (const request of schema.table.requests) {
    if (!request.endsWith("AddRq")) continue;
    const name = request.slice(0, -"AddRq".length);
    const add = wrapped(schema, request, "Add");
    const ret = wrapped(schema, `${name}AddRs`, "Ret");
    if (add === null || ret === null || ret !== `${name}Ret`) continue;
    const retSlots = slotsOf(schema, ret);
    const isTxn = retSlots.some((s) => s.name === "TxnID");
    const isList = retSlots.some((s) => s.name === "ListID");
    if (!isTxn && !isList) continue;
    const families = lineFamilies(schema, ret);
    objects.set(name, {
      name,
      kind: isTxn ? "transaction" : "list",
      idElement: isTxn ? "TxnID" : "ListID",
      ret,
      add,
      mod: wrapped(schema, `${name}ModRq`, "Mod"),
      hierarchical: retSlots.some((s) => s.name === "ParentRef"),
      lineFamilies: families,
      defaultLine: [...families.keys()][0],
    });
  }
  return objects;
}

let table: Map<string, ObjectType> | null = null;

/** Every stored object type by name. */
export function objectTypes(): ReadonlyMap<string, ObjectType> {
  table ??= build(ledgerSchema());
  return table;
}

/** The object type `name`, if the simulator stores it. */
export function objectType(name: string): ObjectType | undefined {
  return objectTypes().get(name);
}

/** Whether `object` may be deleted with ListDel/TxnDel, voided, merged. */
export function objectActions(object: ObjectType): { del: boolean; void: boolean; merge: boolean } {
  const schema = ledgerSchema();
  const delKey = object.kind === "list" ? "enum.ListDelType" : "enum.TxnDelType";
  return {
    del: enumValues(schema, delKey).includes(object.name),
    void: enumValues(schema, "enum.TxnVoidType").includes(object.name),
    merge: enumValues(schema, "enum.ListMergeType").includes(object.name),
  };
}

/** Whether the slot's type is a reference (`<XRef><ListID/><FullName/></XRef>`). */
export function isRefSlot(slot: Slot): boolean {
  return slot.type.kind === "complex" && isReferenceType(ledgerSchema(), slot.typeKey);
}

/** Slot of `typeKey` named `name` (the first, when a name occurs in several alternatives). */
export function slotNamed(typeKey: string, name: string): Slot | undefined {
  const schema = ledgerSchema();
  if (!schema.isComplex(typeKey)) return undefined;
  return slotsOf(schema, typeKey).find((s) => s.name === name);
}

/**
 * The Ret element an input element is stored as: the same name, or `…Add`/`…Mod` → `…Ret` (lines,
 * applied transactions), or without the suffix (`SalesOrPurchaseMod` → `SalesOrPurchase`).
 */
export function retSlotFor(retTypeKey: string, inputName: string): Slot | undefined {
  const base = inputName.replace(/(Add|Mod)$/, "");
  for (const candidate of [inputName, `${base}Ret`, base]) {
    const slot = slotNamed(retTypeKey, candidate);
    if (slot !== undefined) return slot;
  }
  return undefined;
}
