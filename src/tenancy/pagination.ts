import { ServiceError } from "../errors/service-error.ts";

/**
 * Platform list cursors (spec: platform lists): opaque, non-expiring, newest first. A cursor holds
 * the list it belongs to and the last ID served; IDs are time sortable, so "older than" is `id <`.
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

export function encodeCursor(list: string, lastId: string): string {
  return Buffer.from(JSON.stringify({ l: list, a: lastId }), "utf8").toString("base64url");
}

/** Decodes a cursor of the given list; CURSOR_INVALID for a malformed or foreign one. */
export function decodeCursor(list: string, cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (typeof parsed === "object" && parsed !== null && "l" in parsed && "a" in parsed) {
      const { l, a } = parsed;
      if (l === list && typeof a === "string" && a.length > 0) return a;
    }
  } catch {
    // fall through to the typed error
  }
  throw new ServiceError("CURSOR_INVALID", { param: "cursor" });
}

/** Builds the envelope from `limit + 1` rows. */
export function pageOf<R extends { id: string }, T>(
  list: string,
  url: string,
  rows: R[],
  limit: number,
  serialize: (row: R) => T,
): PlatformPage<T> {
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return {
    objectType: "list",
    url,
    data: pageRows.map(serialize),
    nextCursor: hasMore && last ? encodeCursor(list, last.id) : null,
    hasMore,
    remainingCount: null,
    cursorExpiresAt: null,
  };
}
