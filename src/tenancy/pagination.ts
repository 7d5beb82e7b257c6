import { ServiceError } from "../errors/service-error.ts";

/**
 * Platform list cursors (spec: platform lists): opaque, non-expiring, newest first. A cursor holds
 * the list it belongs to, the last ID served, and the filters of the request that created it; IDs
 * are time sortable, so "older than" is `id <`.
 *
 * Cursor rules (spec): a list continues with the cursor alone (optionally a new `limit`), which
 * keeps the first page's filters, or with exactly the first page's filters; a changed, added or
 * dropped filter is CURSOR_PARAMS_MISMATCH, since it would silently page through another result set.
 */
export interface PlatformPage<T> {
  objectType: "list";
  url: string;
  data: T[];
  nextCursor: string | null;
  hasMore: boolean;
  remainingCount: null;
  cursorExpiresAt: null;
}

/** A list endpoint's parsed query: its filters plus `cursor` and `limit`. */
export type ListQuery = Readonly<Record<string, unknown>>;

/** The filters of a list (every parameter but `cursor` and `limit`), as given. */
export type ListFilters = Readonly<Record<string, string | number | boolean>>;

/** Query parameters that are not filters: they may differ between the pages of one list. */
const PAGING_PARAMS: ReadonlySet<string> = new Set(["cursor", "limit"]);

/** The filters of a query, absent ones left out, in name order (query-string order does not matter). */
export function filtersOf(query: ListQuery): ListFilters {
  const entries = Object.entries(query)
    .filter(
      (entry): entry is [string, string | number | boolean] =>
        !PAGING_PARAMS.has(entry[0]) &&
        (typeof entry[1] === "string" || typeof entry[1] === "number" || typeof entry[1] === "boolean"),
    )
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

/** A cursor continuing `list` after `lastId` with `filters`. */
export function encodeCursor(list: string, lastId: string, filters: ListFilters): string {
  const payload =
    Object.keys(filters).length > 0 ? { l: list, a: lastId, f: filters } : { l: list, a: lastId };
  return Buffer.from(JSON.stringify(payload), "utf8").toString("base64url");
}

/**
 * Decodes a cursor of `list` for a request with `query`: the last ID served and the filters to go
 * on with (the cursor's, when the request sends none). CURSOR_INVALID for a malformed or foreign
 * cursor; CURSOR_PARAMS_MISMATCH when the request sends filters other than the cursor's.
 */
export function decodeCursor(
  list: string,
  cursor: string,
  query: ListQuery,
): { lastId: string; filters: ListFilters } {
  const decoded = parseCursor(list, cursor);
  const sent = filtersOf(query);
  if (Object.keys(sent).length === 0) return decoded;
  if (JSON.stringify(sent) !== JSON.stringify(decoded.filters)) {
    throw new ServiceError("CURSOR_PARAMS_MISMATCH", {
      param: "cursor",
      message:
        "The filters differ from those of the request that created the cursor. Continue with the cursor alone (optionally a new `limit`) or with the first page's filters unchanged, or start the list again without a cursor.",
    });
  }
  return decoded;
}

function parseCursor(list: string, cursor: string): { lastId: string; filters: ListFilters } {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (typeof parsed === "object" && parsed !== null && "l" in parsed && "a" in parsed) {
      const { l, a } = parsed;
      const f = "f" in parsed ? parsed.f : {};
      if (l === list && typeof a === "string" && a.length > 0 && typeof f === "object" && f !== null)
        return { lastId: a, filters: filtersOf(f as ListQuery) };
    }
  } catch {
    // fall through to the typed error
  }
  throw new ServiceError("CURSOR_INVALID", { param: "cursor" });
}

/** Builds the envelope from `limit + 1` rows; the next cursor is bound to `query`'s filters. */
export function pageOf<R extends { id: string }, T>(
  list: string,
  url: string,
  query: ListQuery & { limit: number },
  rows: R[],
  serialize: (row: R) => T,
): PlatformPage<T> {
  const { limit } = query;
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return {
    objectType: "list",
    url,
    data: pageRows.map(serialize),
    nextCursor: hasMore && last ? encodeCursor(list, last.id, filtersOf(query)) : null,
    hasMore,
    remainingCount: null,
    cursorExpiresAt: null,
  };
}
