/**
 * Custom fields: definitions (DataExtDef Add/Mod/Del/Query, stored as records of object
 * `DataExtDef`) and values (DataExt Add/Mod/Del, stored as `DataExtRet` fields on the record or line
 * they belong to, or on the company for `OtherDataExtType`). A value needs a definition of the same
 * owner (`0` = public) and name.
 */
import { child, childText, childrenNamed, leaf, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { objectType, objectTypes } from "./objects.ts";
import { fieldText, type LedgerRecord } from "./records.ts";
import { renderType } from "./render.ts";
import { STATUS_NO_MATCH, STATUS_OK, statusNameInUse, statusObjectNotFound, type Status } from "./status.ts";
import { formatDateTime } from "./time.ts";
import type { OpResult } from "./write-ops.ts";

/** Object name of stored definitions. */
export const DATA_EXT_DEF = "DataExtDef";

function same(a: string | undefined, b: string | undefined): boolean {
  return (a ?? "").toLowerCase() === (b ?? "").toLowerCase();
}

function findDef(file: CompanyFile, owner: string, name: string): LedgerRecord | undefined {
  return file
    .recordsOf(DATA_EXT_DEF)
    .find(
      (d) => same(fieldText(d.fields, "OwnerID"), owner) && same(fieldText(d.fields, "DataExtName"), name),
    );
}

function defRet(def: LedgerRecord, file: CompanyFile): XmlElement {
  return node(
    "DataExtDefRet",
    renderType("DataExtDefRet", def.fields, file, () => undefined),
  );
}

function fail(status: Status): OpResult {
  return { status, body: [] };
}

/** `DataExtDefAddRq`. */
export function addDef(add: XmlElement, file: CompanyFile): OpResult {
  const owner = childText(add, "OwnerID") ?? "";
  const name = childText(add, "DataExtName") ?? "";
  if (findDef(file, owner, name) !== undefined) return fail(statusNameInUse(name));
  const now = file.nowSeconds();
  const ids = file.recordsOf(DATA_EXT_DEF).map((d) => Number(fieldText(d.fields, "DataExtID") ?? "0"));
  const dataExtId = String(Math.max(0, ...ids) + 1);
  const fields = [
    leaf("OwnerID", owner),
    leaf("DataExtID", dataExtId),
    ...add.children.filter((c) => c.name !== "OwnerID"),
  ];
  for (const [name_, value] of [
    ["DataExtListRequire", "false"],
    ["DataExtTxnRequire", "false"],
    ["DataExtFormatString", ""],
  ] as const)
    if (!fields.some((f) => f.name === name_)) fields.push(leaf(name_, value));
  const def: LedgerRecord = {
    object: DATA_EXT_DEF,
    id: `dataextdef:${dataExtId}`,
    created: now,
    modified: now,
    editSequence: now,
    fields,
    lines: [],
    txnNumber: undefined,
  };
  file.insert(def);
  return { status: STATUS_OK, body: [defRet(def, file)] };
}

/** `DataExtDefModRq`: rename, assign to / remove from object types, change the requirements. */
export function modDef(mod: XmlElement, file: CompanyFile): OpResult {
  const owner = childText(mod, "OwnerID") ?? "";
  const name = childText(mod, "DataExtName") ?? "";
  const def = findDef(file, owner, name);
  if (def === undefined) return fail(statusObjectNotFound(name));
  const newName = childText(mod, "DataExtNewName");
  if (newName !== undefined && !same(newName, name) && findDef(file, owner, newName) !== undefined)
    return fail(statusNameInUse(newName));
  const removed = childrenNamed(mod, "RemoveFromObject").map((c) => c.text);
  let fields = def.fields.filter((f) => !(f.name === "AssignToObject" && removed.includes(f.text)));
  const assigned = childrenNamed(mod, "AssignToObject").filter(
    (a) => !fields.some((f) => f.name === a.name && f.text === a.text),
  );
  fields = [...fields, ...assigned];
  for (const name_ of ["DataExtListRequire", "DataExtTxnRequire", "DataExtFormatString"]) {
    const value = childText(mod, name_);
    if (value !== undefined) fields = [...fields.filter((f) => f.name !== name_), leaf(name_, value)];
  }
  if (newName !== undefined)
    fields = [...fields.filter((f) => f.name !== "DataExtName"), leaf("DataExtName", newName)];
  def.fields = fields;
  def.modified = file.nowSeconds();
  file.touch(def);
  return { status: STATUS_OK, body: [defRet(def, file)] };
}

function stripValues(fields: readonly XmlElement[], owner: string, name: string): XmlElement[] {
  return fields.filter(
    (f) =>
      !(
        f.name === "DataExtRet" &&
        same(childText(f, "OwnerID"), owner) &&
        same(childText(f, "DataExtName"), name)
      ),
  );
}

/** `DataExtDefDelRq`: the definition and every value of it go. */
export function delDef(del: XmlElement, file: CompanyFile): OpResult {
  const owner = childText(del, "OwnerID") ?? "";
  const name = childText(del, "DataExtName") ?? "";
  const def = findDef(file, owner, name);
  if (def === undefined) return fail(statusObjectNotFound(name));
  file.remove(def.id);
  for (const record of file.allRecords()) {
    if (objectType(record.object) === undefined) continue;
    record.fields = stripValues(record.fields, owner, name);
    for (const line of record.lines) line.fields = stripValues(line.fields, owner, name);
  }
  return {
    status: STATUS_OK,
    body: [
      node("DataExtDefDelRet", [
        leaf("OwnerID", owner),
        leaf("DataExtName", fieldText(def.fields, "DataExtName") ?? name),
        leaf("TimeDeleted", formatDateTime(file.nowSeconds(), file.utcOffset)),
      ]),
    ],
  };
}

/** `DataExtDefQueryRq`: by owner or by assigned object type. */
export function queryDefs(rq: XmlElement, file: CompanyFile): OpResult {
  const owners = childrenNamed(rq, "OwnerID").map((c) => c.text.toLowerCase());
  const assigned = childrenNamed(rq, "AssignToObject").map((c) => c.text);
  const defs = file
    .recordsOf(DATA_EXT_DEF)
    .filter(
      (d) =>
        (owners.length === 0 || owners.includes((fieldText(d.fields, "OwnerID") ?? "").toLowerCase())) &&
        (assigned.length === 0 ||
          d.fields.some((f) => f.name === "AssignToObject" && assigned.includes(f.text))),
    );
  return { status: defs.length === 0 ? STATUS_NO_MATCH : STATUS_OK, body: defs.map((d) => defRet(d, file)) };
}

/** Where a DataExt request points: a record (and maybe a line), or the company. */
type Target =
  | { kind: "record"; record: LedgerRecord; lineId: string | undefined; ref: XmlElement[] }
  | { kind: "company"; ref: XmlElement[] };

function targetOf(element: XmlElement, file: CompanyFile): Target | Status {
  const listType = childText(element, "ListDataExtType");
  if (listType !== undefined) {
    const ref = child(element, "ListObjRef");
    const objects = [...objectTypes().values()]
      .filter(
        (o) =>
          o.kind === "list" && (o.name === listType || (listType === "Item" && o.name.startsWith("Item"))),
      )
      .map((o) => o.name);
    const listId = ref === undefined ? undefined : childText(ref, "ListID");
    const fullName = ref === undefined ? undefined : childText(ref, "FullName");
    const record =
      listId !== undefined
        ? file.recordById(listId)
        : objects.flatMap((o) => file.recordsOf(o)).find((r) => same(file.fullNameOf(r), fullName));
    if (record === undefined || !objects.includes(record.object))
      return statusObjectNotFound(listId ?? fullName ?? "");
    return {
      kind: "record",
      record,
      lineId: undefined,
      ref: [leaf("ListDataExtType", listType), ...(ref === undefined ? [] : [ref])],
    };
  }
  const txnType = childText(element, "TxnDataExtType");
  if (txnType !== undefined) {
    const txnId = childText(element, "TxnID") ?? "";
    const record = file.recordById(txnId);
    if (record === undefined || record.object !== txnType) return statusObjectNotFound(txnId);
    const lineId = childText(element, "TxnLineID");
    if (lineId !== undefined && !record.lines.some((l) => l.id === lineId))
      return statusObjectNotFound(lineId);
    const ref = [
      leaf("TxnDataExtType", txnType),
      leaf("TxnID", txnId),
      ...(lineId === undefined ? [] : [leaf("TxnLineID", lineId)]),
    ];
    return { kind: "record", record, lineId, ref };
  }
  return {
    kind: "company",
    ref: [leaf("OtherDataExtType", childText(element, "OtherDataExtType") ?? "Company")],
  };
}

/**
 * `DataExtAddRq` / `DataExtModRq` / `DataExtDelRq`. A Mod of a public field (owner `0`, a custom
 * field the user sees) writes the value whether or not the record has one yet, as the application
 * does for custom fields; a Mod of a private field needs an existing value (an Add gives the first).
 */
export function changeDataExt(kind: "add" | "mod" | "del", element: XmlElement, file: CompanyFile): OpResult {
  const owner = childText(element, "OwnerID") ?? "";
  const writesAnyway = kind === "add" || (kind === "mod" && owner === "0");
  const name = childText(element, "DataExtName") ?? "";
  const value = childText(element, "DataExtValue") ?? "";
  const def = findDef(file, owner, name);
  if (def === undefined) return fail(statusObjectNotFound(name));
  const target = targetOf(element, file);
  if ("code" in target) return fail(target);
  const type = (def === undefined ? undefined : fieldText(def.fields, "DataExtType")) ?? "STR255TYPE";
  // Values carry their definition's own spelling of the owner and name (names match case-insensitively).
  const ownName = fieldText(def.fields, "DataExtName") ?? name;
  const ownOwner = fieldText(def.fields, "OwnerID") ?? owner;
  const stored = node("DataExtRet", [
    leaf("OwnerID", ownOwner),
    leaf("DataExtName", ownName),
    leaf("DataExtType", type),
    leaf("DataExtValue", value),
  ]);
  if (target.kind === "company") {
    const index = file.companyDataExts.findIndex((d) => same(d.ownerId, owner) && same(d.name, name));
    if (index < 0 && !writesAnyway) return fail(statusObjectNotFound(name));
    if (index >= 0) file.companyDataExts.splice(index, 1);
    if (kind !== "del") file.companyDataExts.push({ ownerId: owner, name, value });
  } else {
    const holder =
      target.lineId === undefined ? target.record : target.record.lines.find((l) => l.id === target.lineId);
    if (holder === undefined) return fail(statusObjectNotFound(target.lineId ?? ""));
    const exists = holder.fields.length !== stripValues(holder.fields, owner, name).length;
    if (!exists && !writesAnyway) return fail(statusObjectNotFound(name));
    holder.fields = [...stripValues(holder.fields, owner, name), ...(kind === "del" ? [] : [stored])];
    file.touch(target.record);
  }
  if (kind === "del") {
    const when = formatDateTime(file.nowSeconds(), file.utcOffset);
    return {
      status: STATUS_OK,
      body: [
        node("DataExtDelRet", [
          leaf("OwnerID", ownOwner),
          leaf("DataExtName", ownName),
          ...target.ref,
          leaf("TimeDeleted", when),
        ]),
      ],
    };
  }
  return { status: STATUS_OK, body: [stored] };
}
