import type { IncomingHttpHeaders } from "node:http";
import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { CallInput } from "../ledger/action-table.ts";
import { CURSOR_PAGE_SIZE_MAX, newCursorId } from "../ledger/cursors.ts";
import type { TypedOperation } from "../ledger/operations.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { ParamValue } from "../ledger/typed/filters.ts";
import {
  findMirrorCursor,
  findMirrorsForRead,
  insertMirrorCursor,
  type MirrorForRead,
} from "../store/mirrors.ts";
import { withJsonBytes } from "../platform/json-text.ts";
import type { Tenant } from "../store/tenant.ts";
import { copyOf, type Copy } from "./copy.ts";
import { currentView, type View } from "./names.ts";
import { LINKED_FIELD, mirrorableGroups } from "./groups.ts";
import { answer, unsupportedParam } from "./query.ts";
import { offsetMinutes } from "./stored-records.ts";
import { catchUpWrites } from "./writes.ts";

/**
 * The staleness contract on typed reads (issue 26 item 3, decision 0044). A list or retrieve of a
 * mirrored group that carries `Svc-Max-Staleness-Seconds: N` is answered from the mirror when the
 * copy is ready and its `as_of` is at most N seconds old, the query is one the mirror answers
 * exactly, and every write of the end user the caller could have seen answered is in the copy
 * (read-your-writes); otherwise the call goes live, exactly as without the header. A mirrored answer
 * carries `Svc-Data-As-Of` and `Age`, and a list's envelope says `source: "mirror"`.
 */

type Json = Record<string, unknown>;

export const MAX_STALENESS_HEADER = "Svc-Max-Staleness-Seconds";
const MAX_STALENESS_SECONDS = 86_400;

/** `Svc-Max-Staleness-Seconds`: null when absent; a whole number of seconds, 0 to 86400. */
export function parseMaxStaleness(headers: IncomingHttpHeaders): number | null {
  const raw = headers[MAX_STALENESS_HEADER.toLowerCase()];
  if (raw === undefined) return null;
  const text = Array.isArray(raw) ? raw.join(",") : raw;
  if (!/^\d{1,6}$/.test(text.trim()) || Number(text) > MAX_STALENESS_SECONDS) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: MAX_STALENESS_HEADER,
      message: `\`${MAX_STALENESS_HEADER}\` must be a whole number of seconds from 0 to ${MAX_STALENESS_SECONDS}.`,
    });
  }
  return Number(text);
}

export interface MirrorRead {
  readonly tenant: Tenant;
  readonly endUserId: string;
  readonly operation: TypedOperation;
  readonly input: CallInput;
  readonly maxStalenessSeconds: number;
}

export interface MirrorAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** The mirror's answer to a typed read, or null when the call goes live. */
export async function answerFromMirror(deps: Deps, read: MirrorRead): Promise<MirrorAnswer | null> {
  const resource = read.operation.resource;
  const action = read.operation.action;
  if (!resource || (action !== "list" && action !== "retrieve")) return null;
  if (mirrorableGroups().get(resource.entry.path) !== resource) return null;
  const query = new Map(read.input.query);
  const cursor = query.get("cursor");
  const position = typeof cursor === "string" ? readMirrorCursor(cursor) : undefined;
  // A live cursor continues live; a mirror cursor continues on the mirror.
  if (position === null) return null;
  let continued: MirrorCursor | undefined;
  if (position) {
    const found = await findMirrorCursor(
      deps.db,
      { id: position.c, endUserId: read.endUserId, resource: resource.entry.path },
      new Date(deps.clock.now()),
    );
    if (!found)
      throw new ServiceError("CURSOR_INVALID", {
        param: "cursor",
        message: "This cursor belongs to another list, or is over a day old.",
      });
    continued = { ...position, filters: found.filters as Array<[string, ParamValue]>, linked: found.linked };
    if ([...query.keys()].every((name) => name === "cursor" || name === "limit")) {
      // The cursor alone (maybe with `limit`): the first page's filters, as a live cursor keeps them.
      for (const [name, value] of continued.filters) query.set(name, value);
      if (continued.linked) query.set("includeLinkedTransactions", true);
    }
  }
  const linked = takeLinked(resource, query);
  if (action === "list" && unsupportedParam(resource, query) !== null) {
    if (position) throw cursorMismatch();
    return null;
  }
  const groups = mirrorableGroups();
  let rows = await findMirrorsForRead(deps.db, read.tenant, read.endUserId);
  let mirror = rows.find((r) => r.resource === resource.entry.path) ?? null;
  const nowMs = deps.clock.now();
  const fresh = (m: MirrorForRead | null): m is MirrorForRead & { as_of: Date } =>
    m !== null &&
    m.state === "ready" &&
    m.as_of !== null &&
    (position !== undefined || nowMs - m.as_of.getTime() <= read.maxStalenessSeconds * 1000);
  if (!fresh(mirror)) {
    if (position) throw cursorEnded();
    return null;
  }
  if (mirror.writes_pending) {
    // Read-your-writes: every write answered before this read is in the copy, or the read goes live.
    if (!(await catchUpWrites(deps, mirror))) return null;
    rows = await findMirrorsForRead(deps.db, read.tenant, read.endUserId);
    mirror = rows.find((r) => r.resource === resource.entry.path) ?? null;
    if (!fresh(mirror)) return null;
  }
  const copy = await copyOf(deps.db, mirror);
  // The names the records show come from the mirrored list groups' copies (names.ts).
  const lists = rows.filter(
    (r): r is MirrorForRead & { as_of: Date } =>
      r.state === "ready" && r.as_of !== null && groups.get(r.resource)?.entry.kind === "list",
  );
  const listCopies: Copy[] = [];
  for (const row of lists)
    listCopies.push(row.resource === mirror.resource ? copy : await copyOf(deps.db, row));
  const view = currentView(resource, copy, listCopies);
  // As of the oldest copy the answer draws on.
  const asOf = new Date(Math.min(mirror.as_of.getTime(), ...lists.map((r) => r.as_of.getTime())));
  const headers = {
    [MAX_STALENESS_HEADER.replace("Max-Staleness-Seconds", "Data-As-Of")]: asOf.toISOString(),
    Age: String(Math.max(0, Math.floor((nowMs - asOf.getTime()) / 1000))),
  };
  if (action === "retrieve")
    return { status: 200, body: retrieved(resource, copy, view, read.input.id, asOf), headers };
  return {
    status: 200,
    body: await listPage(deps, resource, copy, view, mirror, read, query, linked, continued, nowMs),
    headers,
  };
}

/** Takes `includeLinkedTransactions` out of the query: the copy holds them, a record shows them when asked. */
function takeLinked(resource: ResourceDefinition, query: Map<string, ParamValue>): boolean {
  const asked = query.get("includeLinkedTransactions") === true;
  query.delete("includeLinkedTransactions");
  return asked || !resource.queryElements.has("IncludeLinkedTxns");
}

function shown(record: Json, linked: boolean): Json {
  return linked || !(LINKED_FIELD in record) ? record : { ...record, [LINKED_FIELD]: [] };
}

function retrieved(
  resource: ResourceDefinition,
  copy: Copy,
  view: View,
  id: string | null,
  asOf: Date,
): Json {
  const record = id === null ? undefined : view.byId.get(id);
  if (!record) {
    throw new ServiceError("LEDGER_OBJECT_NOT_FOUND", {
      param: "id",
      message: `No ${resource.entry.objectType.replace(/^ledger_/, "").replace(/_/g, " ")} with this ID was in the company file as of ${asOf.toISOString()}.`,
    });
  }
  const bytes = copy.bytesOf(record, null);
  return bytes === undefined ? record : withJsonBytes(record, bytes);
}

// ---------------------------------------------------------------------------------------------
// list pages and mirror cursors

/** A mirror cursor's token: its stored filters' ID and the position of the next page. */
interface Position {
  c: string;
  /** Records served so far. */
  n: number;
  /** Page size. */
  s: number;
  /** The last record served. */
  i: string;
}

/** A continued list: its position and the first page's filters. */
interface MirrorCursor extends Position {
  filters: Array<[string, ParamValue]>;
  linked: boolean;
}

const MIRROR_CURSOR = "m1";

/** A mirror cursor's position, null for a live cursor (continued live), or CURSOR_INVALID. */
function readMirrorCursor(token: string): Position | null {
  const text = Buffer.from(token, "base64url").toString("utf8");
  if (!text.startsWith(`{"v":"${MIRROR_CURSOR}"`)) return null;
  try {
    const p = JSON.parse(text) as Partial<Position> & { v: string };
    if (typeof p.c === "string" && typeof p.i === "string" && Number.isInteger(p.n) && Number.isInteger(p.s))
      return p as Position;
  } catch {
    // falls through
  }
  throw new ServiceError("CURSOR_INVALID", { param: "cursor", message: "The cursor is malformed." });
}

function writeMirrorCursor(position: Position): string {
  return Buffer.from(JSON.stringify({ v: MIRROR_CURSOR, ...position }), "utf8").toString("base64url");
}

const cursorMismatch = (): ServiceError =>
  new ServiceError("CURSOR_PARAMS_MISMATCH", {
    param: "cursor",
    message: "A list continued with its cursor must keep the filters of its first page.",
  });

const cursorEnded = (): ServiceError =>
  new ServiceError("CURSOR_EXPIRED", {
    param: "cursor",
    details: { reason: "session_ended", pagesServed: 0, recordsServed: 0 },
    message:
      "The mirror this list was read from is being filled again. Start the list again without a cursor.",
  });

/** The filters of a list query (no cursor, no page size), in a fixed order. */
function filtersOf(query: ReadonlyMap<string, ParamValue>): Array<[string, ParamValue]> {
  return [...query]
    .filter(([name]) => name !== "cursor" && name !== "limit")
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

async function listPage(
  deps: Deps,
  resource: ResourceDefinition,
  copy: Copy,
  view: View,
  mirror: MirrorForRead & { as_of: Date },
  read: MirrorRead,
  query: Map<string, ParamValue>,
  linked: boolean,
  continued: MirrorCursor | undefined,
  nowMs: number,
): Promise<Json> {
  const url = `/v1/ledger-desktop/${resource.entry.path}`;
  const filters = filtersOf(query);
  if (
    continued &&
    (JSON.stringify(continued.filters) !== JSON.stringify(filters) || continued.linked !== linked)
  )
    throw cursorMismatch();
  const limit = query.get("limit");
  query.delete("cursor");
  const evaluated = answer(resource, view.records, query, {
    utcOffsetMinutes: offsetMinutes(mirror.utc_offset),
    nowMs,
    ordered: true,
  });
  if (evaluated.kind === "error") throw evaluated.error;
  const paging = read.operation.paging(read.input);
  let records = evaluated.records;
  if (paging !== "cursor") {
    return envelope(copy, url, records, linked, { nextCursor: null, hasMore: false, remainingCount: null });
  }
  const size = continued?.s ?? (typeof limit === "number" ? limit : CURSOR_PAGE_SIZE_MAX);
  if (continued) {
    // After the last record served; should it be gone since, after as many records as were served.
    const at = records.findIndex((r) => r.id === continued.i);
    records = records.slice(at >= 0 ? at + 1 : continued.n);
  }
  const page = records.slice(0, size);
  const remaining = records.length - page.length;
  const last = page[page.length - 1];
  let next: string | null = null;
  if (remaining > 0 && last) {
    let id = continued?.c;
    if (id === undefined) {
      id = newCursorId();
      await insertMirrorCursor(
        deps.db,
        { id, endUserId: read.endUserId, resource: resource.entry.path, filters, linked },
        new Date(nowMs),
      );
    }
    next = writeMirrorCursor({ c: id, n: (continued?.n ?? 0) + page.length, s: size, i: String(last.id) });
  }
  return envelope(copy, url, page, linked, {
    nextCursor: next,
    hasMore: remaining > 0,
    remainingCount: remaining,
  });
}

const COMMA = Buffer.from(",");

/**
 * The list envelope, with its JSON assembled from the records' stored bytes (a page of 150
 * invoices is not serialised again: the reply sends the bytes as they are).
 */
function envelope(
  copy: Copy,
  url: string,
  records: readonly Json[],
  linked: boolean,
  paging: { nextCursor: string | null; hasMore: boolean; remainingCount: number | null },
): Json {
  const head = { objectType: "list", url };
  const tail = { ...paging, cursorExpiresAt: null, source: "mirror" };
  const hidden = linked ? null : LINKED_FIELD;
  const parts: Buffer[] = [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"data":[`)];
  records.forEach((r, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(copy.bytesOf(r, hidden) ?? Buffer.from(JSON.stringify(shown(r, linked))));
  });
  parts.push(Buffer.from(`],${JSON.stringify(tail).slice(1)}`));
  // The records as shown are made only if someone reads them: the reply sends the bytes.
  let data: Json[] | null = null;
  const body: Json = { ...head };
  Object.defineProperty(body, "data", {
    enumerable: true,
    get: () => (data ??= records.map((r) => shown(r, linked))),
  });
  return withJsonBytes(Object.assign(body, tail), Buffer.concat(parts));
}
