/**
 * Turns the children of an `…Add` / `…Mod` element into what a record stores: every element renamed
 * as in the Ret type (`InvoiceLineAdd` → `InvoiceLineRet`, `SalesOrPurchaseMod` → `SalesOrPurchase`),
 * references resolved to their ListID (3140 when they name nothing of a fitting type), amounts
 * normalised to two decimals, booleans to `true`/`false`, and lines split off with their TxnLineID.
 */
import Big from "big.js";
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { isRefSlot, retSlotFor, slotNamed, type ObjectType } from "./objects.ts";
import { refTarget } from "./refs.ts";
import { statusInvalidReference, statusObjectNotFound, type Status } from "./status.ts";

/** An input line: `txnLineId` is set for `…LineMod` (`-1` = new line). */
export interface InputLine {
  /** The line's Ret element. */
  readonly element: string;
  readonly txnLineId: string | undefined;
  readonly fields: XmlElement[];
}

/** Converted Add/Mod input. */
export interface StoredInput {
  readonly fields: XmlElement[];
  readonly lines: InputLine[];
  /** Line Ret elements whose family is cleared (`ClearItemLines`). */
  readonly cleared: readonly string[];
}

/** Elements that identify the record rather than change it. */
const IDENTITY = new Set(["ListID", "TxnID", "EditSequence"]);

/** Normalises a leaf value the way the application stores it. */
export function normaliseLeaf(typeKey: string, text: string): string {
  const base = ledgerSchema().table.simple[typeKey]?.b;
  if (text === "") return text;
  if (base === "amt") return new Big(text.replace(/^\+/, "")).toFixed(2);
  if (base === "bool") return text === "1" || text === "true" ? "true" : "false";
  if (base === "price" || base === "quan" || base === "percent") return text.replace(/^\+/, "");
  return text;
}

interface Context {
  readonly file: CompanyFile;
  readonly object: ObjectType;
  inLine: boolean;
}

function shownValue(ref: XmlElement): string {
  return (
    ref.children.find((c) => c.name === "FullName")?.text ??
    ref.children.find((c) => c.name === "ListID")?.text ??
    ""
  );
}

/** Converts one input element; `retKey` is the Ret type it is stored under (when there is one). */
function convert(
  input: XmlElement,
  inputKey: string,
  retKey: string | undefined,
  storedName: string,
  context: Context,
): XmlElement | Status {
  const slot = slotNamed(inputKey, input.name);
  if (slot !== undefined && isRefSlot(slot)) {
    // An empty reference element clears the field on a Mod.
    if (input.children.length === 0) return leaf(storedName, "");
    const target = context.file.resolveRef(context.object.name, input);
    if (target === undefined) {
      const { kind } = refTarget(input.name, context.object.name);
      return statusInvalidReference(kind, shownValue(input), context.object.name, context.inLine);
    }
    return node(storedName, [leaf("ListID", target.id)]);
  }
  if (slot !== undefined && slot.type.kind === "complex") {
    const children = convertChildren(input.children, slot.typeKey, retKey ?? slot.typeKey, context);
    if (!Array.isArray(children)) return children;
    return node(storedName, children);
  }
  if (input.name === "TxnID" && inputKey !== context.object.add && inputKey !== context.object.mod) {
    // A transaction named inside the record (applied-to, linked): it must exist.
    const txn = context.file.recordById(input.text);
    if (txn === undefined) return statusObjectNotFound(input.text);
  }
  return leaf(storedName, normaliseLeaf(slot?.typeKey ?? "", input.text));
}

function convertChildren(
  inputs: readonly XmlElement[],
  inputKey: string,
  retKey: string,
  context: Context,
): XmlElement[] | Status {
  const out: XmlElement[] = [];
  for (const input of inputs) {
    const retSlot = retSlotFor(retKey, input.name);
    const converted = convert(input, inputKey, retSlot?.typeKey, retSlot?.name ?? input.name, context);
    if ("code" in converted) return converted;
    out.push(converted);
  }
  return out;
}

/** Converts the children of an Add or Mod element of `object`. */
export function storeInput(
  object: ObjectType,
  inputKey: string,
  inputs: readonly XmlElement[],
  file: CompanyFile,
): StoredInput | Status {
  const context: Context = { file, object, inLine: false };
  const fields: XmlElement[] = [];
  const lines: InputLine[] = [];
  const cleared: string[] = [];
  for (const input of inputs) {
    if (IDENTITY.has(input.name)) continue;
    const clear = /^Clear(\w+)s$/.exec(input.name);
    if (clear !== null) {
      const element = `${clear[1] ?? ""}Ret`;
      if (input.text === "true" || input.text === "1") cleared.push(element);
      continue;
    }
    const retSlot = retSlotFor(object.ret, input.name);
    const inputSlot = slotNamed(inputKey, input.name);
    if (retSlot !== undefined && inputSlot !== undefined && object.lineFamilies.has(retSlot.name)) {
      context.inLine = true;
      const body = input.children.filter((c) => c.name !== "TxnLineID");
      const converted = convertChildren(body, inputSlot.typeKey, retSlot.typeKey, context);
      context.inLine = false;
      if (!Array.isArray(converted)) return converted;
      const txnLineId = input.children.find((c) => c.name === "TxnLineID")?.text;
      lines.push({ element: retSlot.name, txnLineId, fields: converted });
      continue;
    }
    const converted = convert(input, inputKey, retSlot?.typeKey, retSlot?.name ?? input.name, context);
    if ("code" in converted) return converted;
    fields.push(converted);
  }
  return { fields, lines, cleared };
}
