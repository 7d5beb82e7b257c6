/**
 * Add and Mod for every stored object type. Each operation returns the status and the Rs body;
 * nothing is changed when the status is an error.
 */
import { childText, leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { mergeFields, modLines, newLines } from "./merge-fields.ts";
import { slotNamed, type ObjectType } from "./objects.ts";
import { big, money, openAmount } from "./ledger-math.ts";
import { fieldText, refId, type LedgerRecord } from "./records.ts";
import { renderRet, WRITE_RENDER } from "./render.ts";
import {
  STATUS_OK,
  statusInvalidValue,
  statusNameInUse,
  statusObjectNotFound,
  statusStaleEditSequence,
  type Status,
} from "./status.ts";
import { storeInput } from "./store-input.ts";
import { formatDate } from "./time.ts";

/** Outcome of one request. */
export interface OpResult {
  readonly status: Status;
  /** Children of the Rs element (a Ret, the ListDel fields …). */
  readonly body: readonly XmlElement[];
  /** Extra Rs attributes after the status ones (retCount, iteratorRemainingCount, iteratorID). */
  readonly attrs?: ReadonlyArray<readonly [string, string]>;
}

/** Transactions the application numbers itself when the caller gives no RefNumber. */
const NUMBERED = new Set([
  "Invoice",
  "CreditMemo",
  "SalesReceipt",
  "Estimate",
  "SalesOrder",
  "PurchaseOrder",
]);

/** Values the application writes when the request leaves the field out (samples 01, 03, 12, 16, 17). */
const DEFAULT_VALUES: Readonly<Record<string, string>> = {
  IsPending: "false",
  IsFinanceCharge: "false",
  IsToBePrinted: "true",
  IsToBeEmailed: "false",
  JobStatus: "None",
};

/** Fields whose default is another field's value. */
const DEFAULT_FROM: Readonly<Record<string, string>> = { DueDate: "TxnDate", ShipDate: "TxnDate" };

/** The default account of a receivable or payable reference. */
const DEFAULT_ACCOUNT: Readonly<Record<string, string>> = {
  ARAccountRef: "AccountsReceivable",
  APAccountRef: "AccountsPayable",
};

/** Lists whose names share one name space (an item and a customer may share a name; two items not). */
export function nameSpace(object: string): string {
  if (object.startsWith("Item")) return "Item";
  if (["Customer", "Vendor", "Employee", "OtherName"].includes(object)) return "Entity";
  return object;
}

function ret(record: LedgerRecord, file: CompanyFile, includeRetElements: readonly string[]): XmlElement {
  return renderRet(record, file, { ...WRITE_RENDER, includeRetElements });
}

/**
 * Highest numeric RefNumber per object type and file, kept as records are added so that numbering
 * costs nothing per Add (a restored file is scanned once).
 */
const highestNumbers = new WeakMap<CompanyFile, Map<string, number>>();

function noteRefNumber(object: string, refNumber: string | undefined, file: CompanyFile): void {
  const numbers = highestNumbers.get(file);
  const value = Number(refNumber);
  const current = numbers?.get(object);
  if (numbers !== undefined && current !== undefined && Number.isInteger(value) && value > current)
    numbers.set(object, value);
}

function nextRefNumber(object: string, file: CompanyFile): string {
  let numbers = highestNumbers.get(file);
  if (numbers === undefined) {
    numbers = new Map();
    highestNumbers.set(file, numbers);
  }
  let highest = numbers.get(object);
  if (highest === undefined) {
    highest = file
      .recordsOf(object)
      .reduce((max, r) => Math.max(max, Number(fieldText(r.fields, "RefNumber")) || 0), 0);
    numbers.set(object, highest);
  }
  return String(highest + 1);
}

/** Values the application fills in on Add when the request leaves them out. */
function defaults(object: ObjectType, fields: readonly XmlElement[], file: CompanyFile): XmlElement[] {
  const out: XmlElement[] = [];
  const has = (name: string): boolean =>
    fields.some((f) => f.name === name) || out.some((f) => f.name === name);
  const inBoth = (name: string): boolean =>
    slotNamed(object.add, name) !== undefined && slotNamed(object.ret, name) !== undefined;
  if (object.kind === "transaction" && slotNamed(object.ret, "TxnDate") !== undefined && !has("TxnDate"))
    out.push(leaf("TxnDate", formatDate(file.nowSeconds(), file.utcOffset)));
  for (const [name, from] of Object.entries(DEFAULT_FROM)) {
    const value = fieldText([...fields, ...out], from);
    if (inBoth(name) && !has(name) && value !== undefined) out.push(leaf(name, value));
  }
  for (const [name, type] of Object.entries(DEFAULT_ACCOUNT)) {
    if (!inBoth(name) || has(name)) continue;
    const account = file.recordsOf("Account").find((a) => fieldText(a.fields, "AccountType") === type);
    if (account !== undefined) out.push(node(name, [leaf("ListID", account.id)]));
  }
  if (NUMBERED.has(object.name) && inBoth("RefNumber") && !has("RefNumber"))
    out.push(leaf("RefNumber", nextRefNumber(object.name, file)));
  for (const [name, value] of Object.entries(DEFAULT_VALUES))
    if (inBoth(name) && !has(name)) out.push(leaf(name, value));
  // An employee of an edition without `Name` on Add (US) is named from its first, middle and last names.
  if (object.name === "Employee" && !has("Name") && slotNamed(object.ret, "Name") !== undefined) {
    const parts = ["FirstName", "MiddleName", "LastName"].map((n) => fieldText([...fields], n));
    const name = parts.filter((p) => p !== undefined && p !== "").join(" ");
    if (name !== "") out.push(leaf("Name", name));
  }
  return out;
}

/** 3100 when the full name is taken in the list's name space; 3210 for a parent cycle. */
function checkName(object: ObjectType, candidate: LedgerRecord, file: CompanyFile): Status | undefined {
  if (object.kind !== "list") return undefined;
  let parentId = refId(candidate.fields, "ParentRef");
  while (parentId !== undefined) {
    if (parentId === candidate.id)
      return statusInvalidValue("ParentRef", parentId, "A list element cannot be its own parent.");
    parentId = refId(file.recordById(parentId)?.fields ?? [], "ParentRef");
  }
  const fullName = file.fullNameOf(candidate).toLowerCase();
  if (fullName === "") return undefined;
  const space = nameSpace(object.name);
  const taken = file
    .allRecords()
    .some(
      (r) =>
        r.id !== candidate.id &&
        nameSpace(r.object) === space &&
        file.fullNameOf(r).toLowerCase() === fullName,
    );
  return taken ? statusNameInUse(file.fullNameOf(candidate)) : undefined;
}

/**
 * `IsAutoApply` on a payment: the application applies it to the customer's open invoices and
 * charges, oldest first, up to the payment's total.
 */
function autoApplied(fields: readonly XmlElement[], file: CompanyFile): XmlElement[] {
  if (fieldText(fields, "IsAutoApply") !== "true") return [...fields];
  const customer = refId(fields, "CustomerRef");
  let left = big(fieldText(fields, "TotalAmount"));
  const open = ["Invoice", "Charge"]
    .flatMap((o) => file.recordsOf(o))
    .filter((r) => refId(r.fields, "CustomerRef") === customer)
    .sort((a, b) =>
      (fieldText(a.fields, "TxnDate") ?? "").localeCompare(fieldText(b.fields, "TxnDate") ?? ""),
    );
  const applied: XmlElement[] = [];
  for (const txn of open) {
    const due = openAmount(txn, file);
    if (left.lte(0) || due.lte(0)) continue;
    const amount = due.lt(left) ? due : left;
    left = left.minus(amount);
    applied.push(node("AppliedToTxnRet", [leaf("TxnID", txn.id), leaf("PaymentAmount", money(amount))]));
  }
  return [...fields.filter((f) => f.name !== "AppliedToTxnRet"), ...applied];
}

/** `…AddRq`: creates a record. */
export function addRecord(
  object: ObjectType,
  add: XmlElement,
  file: CompanyFile,
  includeRetElements: readonly string[],
): OpResult {
  const input = storeInput(object, object.add, add.children, file);
  if ("code" in input) return { status: input, body: [] };
  const now = file.nowSeconds();
  const fields = autoApplied([...input.fields, ...defaults(object, input.fields, file)], file);
  const probe: LedgerRecord = {
    object: object.name,
    id: "",
    created: now,
    modified: now,
    editSequence: now,
    fields,
    lines: [],
    txnNumber: undefined,
  };
  const nameProblem = checkName(object, probe, file);
  if (nameProblem !== undefined) return { status: nameProblem, body: [] };
  const id = file.newId(object.kind, now);
  const lines = newLines(input.lines, file, () => file.newId("transaction", now), object);
  const record: LedgerRecord = {
    ...probe,
    id,
    lines,
    txnNumber: object.kind === "transaction" ? file.newTxnNumber() : undefined,
  };
  file.insert(record);
  noteRefNumber(object.name, fieldText(fields, "RefNumber"), file);
  return { status: STATUS_OK, body: [ret(record, file, includeRetElements)] };
}

/** Bumps the modification time; EditSequence stays strictly increasing within one second. */
export function markModified(record: LedgerRecord, file: CompanyFile): void {
  const now = file.nowSeconds();
  record.modified = now;
  record.editSequence = Math.max(now, record.editSequence + 1);
  file.touch(record);
}

/** The live record of `object` with this ID, if any. */
export function findRecord(object: ObjectType, id: string, file: CompanyFile): LedgerRecord | undefined {
  const record = file.recordById(id);
  return record !== undefined && record.object === object.name ? record : undefined;
}

/** `…ModRq`: changes a record, guarded by its EditSequence. */
export function modRecord(
  object: ObjectType,
  mod: XmlElement,
  file: CompanyFile,
  includeRetElements: readonly string[],
): OpResult {
  const modKey = object.mod;
  const id = childText(mod, object.idElement) ?? "";
  const record = findRecord(object, id, file);
  if (record === undefined || modKey === null) return { status: statusObjectNotFound(id), body: [] };
  const editSequence = childText(mod, "EditSequence") ?? "";
  if (editSequence !== String(record.editSequence)) {
    return { status: statusStaleEditSequence(editSequence), body: [ret(record, file, includeRetElements)] };
  }
  const input = storeInput(object, modKey, mod.children, file);
  if ("code" in input) return { status: input, body: [] };
  const now = file.nowSeconds();
  const fields = mergeFields(record.fields, input.fields, object.ret);
  const lines =
    input.lines.length === 0 && input.cleared.length === 0
      ? record.lines
      : modLines(object, record.lines, input.lines, input.cleared, file, () =>
          file.newId("transaction", now),
        );
  if (!Array.isArray(lines)) return { status: lines, body: [] };
  const nameProblem = checkName(object, { ...record, fields }, file);
  if (nameProblem !== undefined) return { status: nameProblem, body: [] };
  record.fields = fields;
  record.lines = lines;
  noteRefNumber(object.name, fieldText(fields, "RefNumber"), file);
  markModified(record, file);
  return { status: STATUS_OK, body: [ret(record, file, includeRetElements)] };
}
