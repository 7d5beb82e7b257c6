/**
 * Add, Mod and Del against a company file, for any record definition. Each operation returns the
 * status and the Rs body; nothing is changed when the status is an error.
 */
import type { CompanyFile } from "./company-file.ts";
import { definitionOf, LEDGER_DEFINITIONS } from "./definitions/index.ts";
import { prepareInput, type PreparedLine } from "./prepare.ts";
import type { LedgerLine, LedgerRecord, RecordDefinition } from "./records.ts";
import { renderRet } from "./render.ts";
import {
  STATUS_OK,
  statusInUse,
  statusInvalidValue,
  statusNameInUse,
  statusObjectNotFound,
  statusStaleEditSequence,
  type Status,
} from "./status.ts";
import { formatDateTime } from "./time.ts";
import { childText, leaf, type XmlElement } from "./xml-tree.ts";

/** Outcome of one request. */
export interface OpResult {
  readonly status: Status;
  /** Children of the Rs element (a Ret, the ListDel fields …). */
  readonly body: readonly XmlElement[];
  /** Extra Rs attributes after the status ones (retCount, iteratorRemainingCount, iteratorID). */
  readonly attrs?: ReadonlyArray<readonly [string, string]>;
}

function ret(
  def: RecordDefinition,
  record: LedgerRecord,
  file: CompanyFile,
  includeRetElements: readonly string[],
): XmlElement {
  return renderRet(def, record, file, { includeLines: true, includeRetElements });
}

function lineFromInput(def: RecordDefinition, line: PreparedLine, id: string): LedgerLine {
  return { id, fields: def.lines === undefined ? line.fields : def.lines.complete(line.fields) };
}

/** 3100 when the (full) name is used by another record of the same kind; 3210 for a parent cycle. */
function checkName(def: RecordDefinition, candidate: LedgerRecord, file: CompanyFile): Status | undefined {
  if (def.kind !== "list") return undefined;
  let parentId = candidate.fields
    .find((f) => f.name === "ParentRef")
    ?.children.find((c) => c.name === "ListID")?.text;
  while (parentId !== undefined) {
    if (parentId === candidate.id)
      return statusInvalidValue("ParentRef", parentId, "A list element cannot be its own parent.");
    parentId = file
      .recordById(parentId)
      ?.fields.find((f) => f.name === "ParentRef")
      ?.children.find((c) => c.name === "ListID")?.text;
  }
  const fullName = file.fullNameOf(candidate);
  return file.nameTaken(def.refKind, fullName, candidate.id) ? statusNameInUse(fullName) : undefined;
}

/** `…AddRq`: creates a record. */
export function addRecord(
  def: RecordDefinition,
  add: XmlElement,
  file: CompanyFile,
  includeRetElements: readonly string[],
): OpResult {
  const prepared = prepareInput(def, add.children, file);
  if ("code" in prepared) return { status: prepared, body: [] };
  const now = file.nowSeconds();
  const defaults = def
    .defaults(file, prepared.fields)
    .filter((d) => !prepared.fields.some((f) => f.name === d.name));
  const probe: LedgerRecord = {
    object: def.object,
    id: "",
    created: now,
    modified: now,
    editSequence: now,
    fields: [...prepared.fields, ...defaults],
    lines: [],
    txnNumber: undefined,
  };
  const nameProblem = checkName(def, probe, file);
  if (nameProblem !== undefined) return { status: nameProblem, body: [] };
  const id = file.newId(def.kind, now);
  const lines = (prepared.lines ?? []).map((line) =>
    lineFromInput(def, line, file.newId("transaction", now)),
  );
  const record: LedgerRecord = {
    ...probe,
    id,
    lines,
    txnNumber: def.kind === "transaction" ? file.newTxnNumber() : undefined,
  };
  file.insert(record);
  return { status: prepared.warning ?? STATUS_OK, body: [ret(def, record, file, includeRetElements)] };
}

function modLines(
  def: RecordDefinition,
  record: LedgerRecord,
  inputs: readonly PreparedLine[],
  file: CompanyFile,
  now: number,
): LedgerLine[] | Status {
  // Lines listed in a Mod replace the stored set: omitted lines are deleted, TxnLineID -1 adds one.
  const result: LedgerLine[] = [];
  for (const input of inputs) {
    if (input.txnLineId === "-1" || input.txnLineId === undefined) {
      result.push(lineFromInput(def, input, file.newId("transaction", now)));
      continue;
    }
    const existing = record.lines.find((l) => l.id === input.txnLineId);
    if (existing === undefined) return statusObjectNotFound(input.txnLineId);
    const replaced = new Set(input.fields.map((f) => f.name));
    // A new Quantity or Rate without an Amount means the amount must be recomputed.
    if (!replaced.has("Amount") && (replaced.has("Quantity") || replaced.has("Rate"))) replaced.add("Amount");
    const fields = [...existing.fields.filter((f) => !replaced.has(f.name)), ...input.fields];
    result.push(lineFromInput(def, { txnLineId: existing.id, fields }, existing.id));
  }
  return result;
}

/** `…ModRq`: changes a record, guarded by its EditSequence. */
export function modRecord(
  def: RecordDefinition,
  mod: XmlElement,
  file: CompanyFile,
  includeRetElements: readonly string[],
): OpResult {
  const id = childText(mod, def.kind === "list" ? "ListID" : "TxnID") ?? "";
  const record = file.recordById(id);
  if (record === undefined || record.object !== def.object)
    return { status: statusObjectNotFound(id), body: [] };
  const editSequence = childText(mod, "EditSequence") ?? "";
  if (editSequence !== String(record.editSequence)) {
    return {
      status: statusStaleEditSequence(editSequence),
      body: [ret(def, record, file, includeRetElements)],
    };
  }
  const prepared = prepareInput(def, mod.children, file);
  if ("code" in prepared) return { status: prepared, body: [] };
  const now = file.nowSeconds();
  const replaced = new Set(prepared.fields.map((f) => f.name));
  const fields = [...record.fields.filter((f) => !replaced.has(f.name)), ...prepared.fields];
  const lines =
    prepared.lines === undefined ? record.lines : modLines(def, record, prepared.lines, file, now);
  if (!Array.isArray(lines)) return { status: lines, body: [] };
  const nameProblem = checkName(def, { ...record, fields }, file);
  if (nameProblem !== undefined) return { status: nameProblem, body: [] };
  record.fields = fields;
  record.lines = lines;
  record.modified = now;
  // EditSequence is the modification second, bumped so two Mods within one second still differ.
  record.editSequence = Math.max(now, record.editSequence + 1);
  return { status: prepared.warning ?? STATUS_OK, body: [ret(def, record, file, includeRetElements)] };
}

function isReferenced(id: string, file: CompanyFile): boolean {
  const refersTo = (fields: readonly XmlElement[]): boolean =>
    fields.some(
      (f) => f.name.endsWith("Ref") && f.children.some((c) => c.name === "ListID" && c.text === id),
    );
  return file
    .allRecords()
    .some((r) => r.id !== id && (refersTo(r.fields) || r.lines.some((l) => refersTo(l.fields))));
}

/** `ListDelRq` / `TxnDelRq`. */
export function deleteRecord(kind: "list" | "transaction", request: XmlElement, file: CompanyFile): OpResult {
  const typeField = kind === "list" ? "ListDelType" : "TxnDelType";
  const idField = kind === "list" ? "ListID" : "TxnID";
  const delType = childText(request, typeField) ?? "";
  const id = childText(request, idField) ?? "";
  const def = LEDGER_DEFINITIONS.find((d) => d.kind === kind && d.delType === delType);
  const record = file.recordById(id);
  if (def === undefined || record === undefined || definitionOf(record.object) !== def) {
    return { status: statusObjectNotFound(id), body: [] };
  }
  const label =
    kind === "list"
      ? file.fullNameOf(record)
      : (record.fields.find((f) => f.name === "RefNumber")?.text ?? "");
  if (kind === "list" && isReferenced(id, file)) return { status: statusInUse(label), body: [] };
  file.remove(id);
  const deleted = formatDateTime(file.nowSeconds(), file.utcOffset);
  const body = [leaf(typeField, delType), leaf(idField, id), leaf("TimeDeleted", deleted)];
  if (label !== "") body.push(leaf(kind === "list" ? "FullName" : "RefNumber", label));
  return { status: STATUS_OK, body };
}
