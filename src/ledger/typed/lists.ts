import { ServiceError } from "../../errors/service-error.ts";
import {
  cursorExpiresAt,
  cursorToken,
  endCursor,
  parsePageRequestId,
  recordPage,
  tenantOf,
} from "../cursors.ts";
import type { Decoded, FinishContext } from "../operations.ts";
import type { ResourceDefinition } from "../resources/definitions.ts";
import type { RequestRow } from "../../store/requests.ts";
import { findCursor } from "../../store/cursors.ts";
import { attr } from "../xml/tree.ts";
import { decodeRecords, type RequestWarning, type ResponseMessage } from "./actions.ts";

/**
 * List pages (spec: list envelope `{objectType:'list', url, data[], nextCursor, hasMore,
 * remainingCount, cursorExpiresAt}`). Decoding reads the records; finishing books the page on its
 * cursor and builds the envelope, on whichever instance received the answer, so sync and async calls
 * store the same result.
 */

/** The application's status for an iterator it no longer knows (ledger-protocol §2.5). */
const ITERATOR_NOT_VALID = 3391;

export interface ListPage {
  data: Record<string, unknown>[];
  iteratorId: string | null;
  remaining: number | null;
  requestId: string | null;
  /** The application no longer knows the iterator (it restarted, or the session changed). */
  iteratorLost: boolean;
}

export function decodeListPage(
  resource: ResourceDefinition,
  message: ResponseMessage,
): { result: ListPage; warnings: RequestWarning[] } {
  const requestId = attr(message.element, "requestID") ?? null;
  if (message.statusCode === ITERATOR_NOT_VALID) {
    return {
      result: { data: [], iteratorId: null, remaining: null, requestId, iteratorLost: true },
      warnings: [],
    };
  }
  const page = decodeRecords(resource, message);
  return {
    result: {
      data: page.data,
      iteratorId: page.iteratorId,
      remaining: page.remaining,
      requestId,
      iteratorLost: false,
    },
    warnings: page.warnings,
  };
}

export async function finishListPage(
  resource: ResourceDefinition,
  context: FinishContext,
  request: RequestRow,
  result: unknown,
): Promise<Decoded> {
  const page = result as ListPage;
  const url = `/v1/ledger-desktop/${resource.entry.path}`;
  const paged = parsePageRequestId(page.requestId);
  if (!paged) {
    return {
      ok: true,
      result: {
        objectType: "list",
        url,
        data: page.data,
        nextCursor: null,
        hasMore: false,
        remainingCount: null,
        cursorExpiresAt: null,
        source: "live",
      },
      warnings: [],
    };
  }
  if (page.iteratorLost) {
    const cursor = await findCursor(context.db, tenantOf(request), paged.cursorId);
    if (cursor) await endCursor(context.db, cursor, "ledger_restarted");
    return {
      ok: false,
      error: new ServiceError("CURSOR_EXPIRED", {
        param: "cursor",
        details: {
          reason: "ledger_restarted",
          pagesServed: cursor?.pages_served ?? 0,
          recordsServed: cursor?.records_served ?? 0,
        },
        message:
          "The application no longer knows this list's iterator. Start the list again without a cursor.",
      }),
    };
  }
  const cursor = await recordPage(context.db, tenantOf(request), {
    cursorId: paged.cursorId,
    page: paged.page,
    requestId: request.id,
    ticketHash: context.ticketHash,
    iteratorId: page.iteratorId,
    records: page.data.length,
    remaining: page.remaining,
    nowMs: context.nowMs,
  });
  const more = cursor?.state === "open";
  return {
    ok: true,
    result: {
      objectType: "list",
      url,
      data: page.data,
      nextCursor: more && cursor ? cursorToken(cursor.id, cursor.pages_served) : null,
      hasMore: more,
      remainingCount: page.remaining,
      cursorExpiresAt: more && cursor ? cursorExpiresAt(cursor).toISOString() : null,
      source: "live",
    },
    warnings: [],
  };
}
