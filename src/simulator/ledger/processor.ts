/**
 * ProcessRequest: one request document in, one response document (or HRESULT 0x80040400) out.
 *
 * Order of work: parse and validate everything first (any problem rejects the whole set and
 * changes nothing), then handle error recovery (old/newMessageSetID), then run the requests in
 * order honouring onError, then save the response when newMessageSetID is given.
 *
 * The work is a generator of {@link ProcessStep}s: the message set, each request as the
 * application reaches it, the records each returns. {@link processDocument} runs it straight
 * through; the simulated application spends its latency profile's time on each step where it is
 * yielded (`simulator/latency.ts`), so a request runs only after the ones before it took theirs.
 */
import type { ProcessResult } from "../application.ts";
import { HRESULT_PARSE_ERROR, hresultFailure } from "./faults.ts";
import type { HostInfo } from "./hcp.ts";
import { validateRequest, type RequestContext, type ValidRequest } from "./request-catalogue.ts";
import { parseDocument } from "../../ledger/xml/parse.ts";
import { attr, node, renderDocument, type XmlElement } from "../../ledger/xml/tree.ts";

const MSGS_ATTRS = ["onError", "newMessageSetID", "oldMessageSetID", "responseData"];

interface ValidSet {
  readonly onError: "stopOnError" | "continueOnError";
  readonly newMessageSetId: string | undefined;
  readonly oldMessageSetId: string | undefined;
  readonly includeNone: boolean;
  readonly requests: readonly ValidRequest[];
}

function versionValue(text: string): number | undefined {
  const m = /^(\d+)\.(\d+)$/.exec(text);
  return m === null ? undefined : Number(m[1]) * 1000 + Number(m[2]);
}

function validate(xml: string, host: HostInfo): ValidSet | undefined {
  const supported = host.xmlVersion;
  const doc = parseDocument(xml);
  if (doc === undefined || doc.qbxmlVersion === undefined) return undefined;
  const version = versionValue(doc.qbxmlVersion);
  if (version === undefined || version > supported.major * 1000 + supported.minor) return undefined;
  const [msgs, ...rest] = doc.root.children;
  if (doc.root.name !== "QBXML" || msgs === undefined || rest.length > 0 || msgs.name !== "QBXMLMsgsRq")
    return undefined;
  if (msgs.attrs.some(([key]) => !MSGS_ATTRS.includes(key))) return undefined;
  const onError = attr(msgs, "onError");
  // rollbackOnError is in the schema but the desktop application does not implement it.
  if (onError !== "stopOnError" && onError !== "continueOnError") return undefined;
  const responseData = attr(msgs, "responseData") ?? "includeAll";
  if (responseData !== "includeAll" && responseData !== "includeNone") return undefined;
  const requests: ValidRequest[] = [];
  // Elements newer than the message set's version, or that the edition lacks, are refused.
  const reader = { xmlVersion: doc.qbxmlVersion, country: host.country };
  for (const rq of msgs.children) {
    const valid = validateRequest(rq, reader);
    if (valid === undefined) return undefined;
    requests.push(valid);
  }
  return {
    onError,
    newMessageSetId: attr(msgs, "newMessageSetID"),
    oldMessageSetId: attr(msgs, "oldMessageSetID"),
    includeNone: responseData === "includeNone",
    requests,
  };
}

function responseName(rqName: string): string {
  return `${rqName.slice(0, -2)}Rs`;
}

/**
 * One unit of the application's work, in the order it does it: a message set taken in (parsed and
 * validated, whatever becomes of it), a request about to run, the records (`…Ret` elements) a
 * request's response returns.
 */
export type ProcessStep =
  | { readonly kind: "messageSet" }
  | { readonly kind: "request" }
  | { readonly kind: "records"; readonly count: number };

const MESSAGE_SET_STEP: ProcessStep = { kind: "messageSet" };
const REQUEST_STEP: ProcessStep = { kind: "request" };

/** Records a response returns: its `…Ret` children (none with `responseData="includeNone"`). */
function recordCount(rs: XmlElement): number {
  let count = 0;
  for (const element of rs.children) if (element.name.endsWith("Ret")) count += 1;
  return count;
}

function* runRequests(set: ValidSet, context: RequestContext): Generator<ProcessStep, XmlElement[]> {
  const responses: XmlElement[] = [];
  for (const { rq, run } of set.requests) {
    yield REQUEST_STEP;
    const refused = context.refuse?.(rq.name);
    const outcome = refused === undefined ? run(context) : { status: refused, body: [] };
    const requestId = attr(rq, "requestID");
    const attrs: Array<readonly [string, string]> = [
      ...(requestId === undefined ? [] : [["requestID", requestId] as const]),
      ["statusCode", String(outcome.status.code)],
      ["statusSeverity", outcome.status.severity],
      ["statusMessage", outcome.status.message],
      ...(outcome.attrs ?? []),
    ];
    const rs = node(responseName(rq.name), set.includeNone ? [] : outcome.body, attrs);
    responses.push(rs);
    const records = recordCount(rs);
    if (records > 0) yield { kind: "records", count: records };
    // stopOnError: later requests are not executed and get no Rs at all.
    if (set.onError === "stopOnError" && outcome.status.severity === "Error") break;
  }
  return responses;
}

function document(responses: readonly XmlElement[], attrs: ReadonlyArray<readonly [string, string]>): string {
  return renderDocument(node("QBXML", [node("QBXMLMsgsRs", responses, attrs)]));
}

/** Processes one request document against the context's company file, all at once. */
export function processDocument(xml: string, context: RequestContext): ProcessResult {
  const steps = processSteps(xml, context);
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}

/**
 * Processes one request document against the context's company file, yielding each step of the
 * work before (a message set, a request) or after (its records) it is done. A recovery answer
 * (`oldMessageSetID`) runs no request: it is the message set and the stored records it returns.
 */
export function* processSteps(xml: string, context: RequestContext): Generator<ProcessStep, ProcessResult> {
  yield MESSAGE_SET_STEP;
  const set = validate(xml, context.host);
  if (set === undefined) return hresultFailure(HRESULT_PARSE_ERROR);
  const saved = context.file.savedMessageSets;
  const { oldMessageSetId, newMessageSetId } = set;
  if (oldMessageSetId !== undefined) {
    if (oldMessageSetId === newMessageSetId) {
      const stored = saved.get(oldMessageSetId);
      if (stored !== undefined) {
        const records = stored.reduce((sum, rs) => sum + recordCount(rs), 0);
        if (records > 0) yield { kind: "records", count: records };
        return {
          ok: true,
          response: document(stored, [
            ["newMessageSetID", oldMessageSetId],
            ["messageSetStatusCode", "0"],
          ]),
        };
      }
      if (set.requests.length === 0) {
        // Status 600: no saved state to return for this message set.
        return {
          ok: true,
          response: document(
            [],
            [
              ["newMessageSetID", oldMessageSetId],
              ["messageSetStatusCode", "600"],
            ],
          ),
        };
      }
    }
    saved.delete(oldMessageSetId);
    if (set.requests.length === 0 && newMessageSetId === undefined)
      return { ok: true, response: document([], []) };
  }
  const responses = yield* runRequests(set, context);
  if (newMessageSetId !== undefined) saved.set(newMessageSetId, responses);
  return {
    ok: true,
    response: document(
      responses,
      newMessageSetId === undefined ? [] : [["newMessageSetID", newMessageSetId]],
    ),
  };
}
