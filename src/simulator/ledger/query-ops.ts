/**
 * `…QueryRq` for every query of the schema: the records a query answers with are the `…Ret`
 * elements of its Rs type (one stored type, several for ItemQuery/EntityQuery, a view for
 * TransactionQuery and the deleted lists), selected by {@link filterPredicates}, paged by
 * MaxReturned and iterators. Iterators belong to one application session (the session hands in its
 * own {@link IteratorStore}), expire after {@link ITERATOR_IDLE_SECONDS} without use, and keep the
 * matching IDs sorted once at Start so each page costs what it returns.
 */
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { slotsOf } from "../../ledger/xml/slots.ts";
import { attr, child, childText, childrenNamed, node, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { DELETED_LIST, DELETED_RETENTION_SECONDS, DELETED_TXN } from "./lifecycle-ops.ts";
import { objectType, objectTypes } from "./objects.ts";
import { filterPredicates } from "./query-filters.ts";
import { fieldText, type LedgerRecord } from "./records.ts";
import { renderRet, type RenderOptions } from "./render.ts";
import {
  STATUS_NO_MATCH,
  STATUS_OK,
  statusInvalidIterator,
  statusNotFullyCompleted,
  statusObjectNotFound,
  type Status,
} from "./status.ts";
import { billsToPay, deletedRet, itemSitesRet, paymentsToDeposit, transactionRet } from "./views.ts";
import { parseDateTime } from "./time.ts";
import type { OpResult } from "./write-ops.ts";

/** An idle iterator is forgotten after this many seconds (company-file clock). */
export const ITERATOR_IDLE_SECONDS = 20 * 60;

/** An open iterator: the IDs matched at Start and how far the pages have got. */
export interface IteratorState {
  /** The Rq element name the iterator was started with. */
  readonly requestName: string;
  readonly maxReturned: number;
  readonly ids: readonly string[];
  position: number;
  lastUsed: number;
}

/** Iterators of one session by iteratorID. */
export type IteratorStore = Map<string, IteratorState>;

/** What a query needs besides the file. */
export interface QueryContext {
  readonly iterators: IteratorStore;
  readonly newGuid: () => string;
}

/** How a query's records are found and written. */
interface QuerySource {
  readonly isList: boolean;
  /** Candidate records in answer order. */
  readonly pool: () => LedgerRecord[];
  readonly render: (record: LedgerRecord, options: RenderOptions) => XmlElement;
}

function truthy(text: string | undefined): boolean {
  return text === "true" || text === "1";
}

function storedSource(objects: readonly string[], file: CompanyFile): QuerySource {
  const isList = objects.every((o) => objectType(o)?.kind === "list");
  return {
    isList,
    pool: () => {
      const records = objects.flatMap((o) => file.recordsOf(o));
      if (!isList) return records;
      const keyed = records.map((r) => [file.fullNameOf(r).toLowerCase(), r] as const);
      keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      return keyed.map(([, r]) => r);
    },
    render: (record, options) => renderRet(record, file, options),
  };
}

/** A stand-in record for an element of a view (only its identity is used). */
function viewHolder(index: number): { record: LedgerRecord } {
  return {
    record: {
      object: "",
      id: `view:${index}`,
      created: 0,
      modified: 0,
      editSequence: 0,
      fields: [],
      lines: [],
      txnNumber: undefined,
    },
  };
}

/** The source of a query request, or undefined when the simulator has no records for it. */
function sourceOf(rqName: string, rq: XmlElement, file: CompanyFile): QuerySource | undefined {
  const schema = ledgerSchema();
  const rsName = rqName.replace(/Rq$/, "Rs");
  if (rqName === "ListDeletedQueryRq" || rqName === "TxnDeletedQueryRq") {
    const isList = rqName === "ListDeletedQueryRq";
    const types = childrenNamed(rq, isList ? "ListDelType" : "TxnDelType").map((c) => c.text);
    const range = child(rq, "DeletedDateRangeFilter");
    const from = childText(range ?? rq, "FromDeletedDate");
    const to = childText(range ?? rq, "ToDeletedDate");
    const fromSeconds =
      from === undefined || range === undefined ? undefined : parseDateTime(from, file.utcOffset, false);
    const toSeconds =
      to === undefined || range === undefined ? undefined : parseDateTime(to, file.utcOffset, true);
    const oldest = Math.max(file.nowSeconds() - DELETED_RETENTION_SECONDS, fromSeconds ?? 0);
    return {
      isList: false,
      pool: () =>
        file
          .recordsOf(isList ? DELETED_LIST : DELETED_TXN)
          .filter(
            (r) =>
              r.modified >= oldest &&
              (toSeconds === undefined || r.modified <= toSeconds) &&
              types.includes(fieldText(r.fields, isList ? "ListDelType" : "TxnDelType") ?? ""),
          ),
      render: (record) => deletedRet(record, file, isList),
    };
  }
  if (rqName === "BillToPayQueryRq" || rqName === "ReceivePaymentToDepositQueryRq") {
    // Views without an ID of their own: each answer element is built once, then listed as is.
    const elements = rqName === "BillToPayQueryRq" ? billsToPay(rq, file) : paymentsToDeposit(file);
    const holders = elements.map((element, i) => ({ ...viewHolder(i), element }));
    return {
      isList: false,
      pool: () => holders.map((h) => h.record),
      render: (record) => holders.find((h) => h.record === record)?.element ?? node("", []),
    };
  }
  if (rqName === "ItemSitesQueryRq") {
    return {
      isList: true,
      pool: () => [...file.recordsOf("ItemInventory"), ...file.recordsOf("ItemInventoryAssembly")],
      render: (record) => itemSitesRet(record, file),
    };
  }
  if (rqName === "TransactionQueryRq") {
    const transactions = [...objectTypes().values()]
      .filter((o) => o.kind === "transaction")
      .map((o) => o.name);
    return {
      isList: false,
      pool: () => transactions.flatMap((o) => file.recordsOf(o)),
      render: (record) => transactionRet(record, file),
    };
  }
  if (!schema.isComplex(rsName)) return undefined;
  const objects = slotsOf(schema, rsName)
    .map((s) => s.name)
    .filter((n) => n.endsWith("Ret") && objectType(n.slice(0, -3)) !== undefined)
    .map((n) => n.slice(0, -3));
  return objects.length === 0 ? undefined : storedSource(objects, file);
}

interface Selection {
  readonly status: Status;
  readonly records: LedgerRecord[];
}

function byIds(pool: readonly LedgerRecord[], ids: readonly string[]): Selection {
  const records: LedgerRecord[] = [];
  for (const id of ids) {
    const record = pool.find((r) => r.id === id);
    if (record === undefined) return { status: statusObjectNotFound(id), records: [] };
    if (!records.includes(record)) records.push(record);
  }
  return { status: STATUS_OK, records };
}

function byNames(
  pool: readonly LedgerRecord[],
  names: readonly string[],
  key: (r: LedgerRecord) => string,
  caseSensitive: boolean,
): Selection {
  const records: LedgerRecord[] = [];
  let missing: string | undefined;
  for (const name of names) {
    const found = pool.find((r) =>
      caseSensitive ? key(r) === name : key(r).toLowerCase() === name.toLowerCase(),
    );
    if (found === undefined) missing ??= name;
    else if (!records.includes(found)) records.push(found);
  }
  return { status: missing === undefined ? STATUS_OK : statusNotFullyCompleted(missing), records };
}

function select(source: QuerySource, rq: XmlElement, file: CompanyFile): Selection {
  const pool = source.pool();
  for (const idName of ["ListID", "TxnID"]) {
    const ids = childrenNamed(rq, idName).map((c) => c.text);
    if (ids.length > 0) return byIds(pool, ids);
  }
  const fullName = (r: LedgerRecord): string => file.fullNameOf(r);
  const refNumber = (r: LedgerRecord): string => fieldText(r.fields, "RefNumber") ?? "";
  const lists: ReadonlyArray<readonly [string, (r: LedgerRecord) => string, boolean]> = [
    ["FullName", fullName, false],
    ["Name", fullName, false],
    ["RefNumber", refNumber, false],
    ["RefNumberCaseSensitive", refNumber, true],
  ];
  for (const [name, key, exact] of lists) {
    const values = childrenNamed(rq, name).map((c) => c.text);
    if (values.length > 0) {
      // Names are an alternative to the list filter, like IDs: a named record is returned whatever
      // its active state (the "active only" default belongs to the filter the names replace).
      const filters = filterPredicates(rq, file, false);
      const found = byNames(pool, values, key, exact);
      return { ...found, records: found.records.filter((r) => filters.every((p) => p(r))) };
    }
  }
  const filters = filterPredicates(rq, file, source.isList);
  return { status: STATUS_OK, records: pool.filter((r) => filters.every((p) => p(r))) };
}

function renderOptions(rq: XmlElement): RenderOptions {
  return {
    includeLines:
      truthy(childText(rq, "IncludeLineItems")) || truthy(childText(rq, "IncludeComponentLineItems")),
    includeLinked: truthy(childText(rq, "IncludeLinkedTxns")),
    includeRetElements: childrenNamed(rq, "IncludeRetElement").map((c) => c.text),
    ownerIds: childrenNamed(rq, "OwnerID").map((c) => c.text),
  };
}

function page(
  source: QuerySource,
  rq: XmlElement,
  records: readonly LedgerRecord[],
  iterator: readonly [number, string] | undefined,
): OpResult {
  const metaData = attr(rq, "metaData") ?? "NoMetaData";
  const attrs: Array<readonly [string, string]> = [];
  if (metaData !== "NoMetaData") attrs.push(["retCount", String(records.length)]);
  if (iterator !== undefined)
    attrs.push(["iteratorRemainingCount", String(iterator[0])], ["iteratorID", iterator[1]]);
  const options = renderOptions(rq);
  const body = metaData === "MetaDataOnly" ? [] : records.map((r) => source.render(r, options));
  return { status: records.length === 0 ? STATUS_NO_MATCH : STATUS_OK, body, attrs };
}

function continueIterator(
  source: QuerySource,
  rq: XmlElement,
  file: CompanyFile,
  context: QueryContext,
): OpResult {
  const iteratorId = attr(rq, "iteratorID") ?? "";
  const state = context.iterators.get(iteratorId);
  const now = file.nowSeconds();
  if (state !== undefined && now - state.lastUsed > ITERATOR_IDLE_SECONDS)
    context.iterators.delete(iteratorId);
  if (state === undefined || state.requestName !== rq.name || !context.iterators.has(iteratorId))
    return { status: statusInvalidIterator(iteratorId), body: [] };
  if (attr(rq, "iterator") === "Stop") {
    context.iterators.delete(iteratorId);
    return {
      status: STATUS_OK,
      body: [],
      attrs: [
        ["iteratorRemainingCount", "0"],
        ["iteratorID", iteratorId],
      ],
    };
  }
  state.lastUsed = now;
  // Records deleted since Start are skipped, as the application does.
  const records: LedgerRecord[] = [];
  while (records.length < state.maxReturned && state.position < state.ids.length) {
    const record = file.recordById(state.ids[state.position++] ?? "");
    if (record !== undefined) records.push(record);
  }
  const remaining = state.ids.length - state.position;
  if (remaining === 0) context.iterators.delete(iteratorId);
  return page(source, rq, records, [remaining, iteratorId]);
}

/** Runs one query request; undefined when the simulator has no records of its kind. */
export function queryRecords(rq: XmlElement, file: CompanyFile, context: QueryContext): OpResult | undefined {
  const source = sourceOf(rq.name, rq, file);
  if (source === undefined) return undefined;
  const iterator = attr(rq, "iterator");
  if (iterator === "Continue" || iterator === "Stop") return continueIterator(source, rq, file, context);
  const selection = select(source, rq, file);
  if (selection.status.severity === "Error") return { status: selection.status, body: [] };
  const records = selection.records;
  const maxText = childText(rq, "MaxReturned");
  const max = maxText === undefined ? records.length : Math.max(0, Number(maxText));
  if (iterator === "Start") {
    const iteratorId = context.newGuid();
    const size = max === 0 ? records.length : max;
    const first = records.slice(0, size);
    const ids = records.map((r) => r.id);
    if (ids.length > first.length) {
      context.iterators.set(iteratorId, {
        requestName: rq.name,
        maxReturned: Math.max(1, size),
        ids,
        position: first.length,
        lastUsed: file.nowSeconds(),
      });
    }
    return page(source, rq, first, [ids.length - first.length, iteratorId]);
  }
  const outcome = page(source, rq, records.slice(0, max), undefined);
  // A 500 warning (some names not found) wins over "no match".
  return selection.status.code === 0 ? outcome : { ...outcome, status: selection.status };
}
