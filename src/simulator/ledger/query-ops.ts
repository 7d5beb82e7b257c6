/**
 * `…QueryRq` with MaxReturned, metaData and iterators. Iterators belong to one application session:
 * the session hands in its own {@link IteratorStore}, so an ID from another (or an ended) session
 * yields 3391.
 */
import type { CompanyFile } from "./company-file.ts";
import { selectRecords } from "./query-filters.ts";
import type { RecordDefinition } from "./records.ts";
import { renderRet } from "./render.ts";
import { STATUS_NO_MATCH, STATUS_OK, statusInvalidIterator } from "./status.ts";
import type { OpResult } from "./write-ops.ts";
import { attr, childText, childrenNamed, type XmlElement } from "./xml-tree.ts";

/** An open iterator: the IDs still to deliver, captured at `Start`. */
export interface IteratorState {
  /** The Rq element name the iterator was started with. */
  readonly requestName: string;
  readonly maxReturned: number;
  remaining: string[];
}

/** Iterators of one session by iteratorID. */
export type IteratorStore = Map<string, IteratorState>;

/** What a query needs besides the file. */
export interface QueryContext {
  readonly iterators: IteratorStore;
  readonly newGuid: () => string;
}

function renderAll(
  def: RecordDefinition,
  ids: readonly string[],
  rq: XmlElement,
  file: CompanyFile,
): XmlElement[] {
  const includeLines = ["true", "1"].includes(childText(rq, "IncludeLineItems") ?? "false");
  const includeRetElements = childrenNamed(rq, "IncludeRetElement").map((c) => c.text);
  const out: XmlElement[] = [];
  for (const id of ids) {
    const record = file.recordById(id);
    if (record !== undefined) out.push(renderRet(def, record, file, { includeLines, includeRetElements }));
  }
  return out;
}

function result(
  def: RecordDefinition,
  rq: XmlElement,
  file: CompanyFile,
  ids: readonly string[],
  iterator: readonly [number, string] | undefined,
): OpResult {
  const metaData = attr(rq, "metaData") ?? "NoMetaData";
  const attrs: Array<readonly [string, string]> = [];
  if (metaData !== "NoMetaData") attrs.push(["retCount", String(ids.length)]);
  if (iterator !== undefined)
    attrs.push(["iteratorRemainingCount", String(iterator[0])], ["iteratorID", iterator[1]]);
  const body = metaData === "MetaDataOnly" ? [] : renderAll(def, ids, rq, file);
  return { status: ids.length === 0 ? STATUS_NO_MATCH : STATUS_OK, body, attrs };
}

function continueIterator(
  def: RecordDefinition,
  rq: XmlElement,
  file: CompanyFile,
  context: QueryContext,
): OpResult {
  const iteratorId = attr(rq, "iteratorID") ?? "";
  const state = context.iterators.get(iteratorId);
  if (state === undefined || state.requestName !== rq.name)
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
  // Records deleted since Start are skipped, as the application does.
  const live = state.remaining.filter((id) => file.recordById(id) !== undefined);
  const page = live.slice(0, state.maxReturned);
  state.remaining = live.slice(state.maxReturned);
  if (state.remaining.length === 0) context.iterators.delete(iteratorId);
  return result(def, rq, file, page, [state.remaining.length, iteratorId]);
}

/** Runs one `…QueryRq` of `def`. */
export function queryRecords(
  def: RecordDefinition,
  rq: XmlElement,
  file: CompanyFile,
  context: QueryContext,
): OpResult {
  const iterator = attr(rq, "iterator");
  if (iterator === "Continue" || iterator === "Stop") return continueIterator(def, rq, file, context);
  const selection = selectRecords(def, rq, file);
  if (selection.status.severity === "Error") return { status: selection.status, body: [] };
  const ids = selection.records.map((r) => r.id);
  const maxText = childText(rq, "MaxReturned");
  const max = maxText === undefined ? ids.length : Math.max(0, Number(maxText));
  if (iterator === "Start") {
    const iteratorId = context.newGuid();
    const page = ids.slice(0, max === 0 ? ids.length : max);
    const remaining = ids.slice(page.length);
    if (remaining.length > 0) {
      context.iterators.set(iteratorId, { requestName: rq.name, maxReturned: Math.max(1, max), remaining });
    }
    return result(def, rq, file, page, [remaining.length, iteratorId]);
  }
  const outcome = result(def, rq, file, ids.slice(0, max), undefined);
  // A 500 warning (some names not found) wins over "no match".
  return selection.status.code === 0 ? outcome : { ...outcome, status: selection.status };
}
