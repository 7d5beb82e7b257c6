import { z } from "zod";
import { ServiceError } from "../../errors/service-error.ts";
import { endUnsent } from "../../requests/engine.ts";
import { asOfNow } from "../../requests/on-read.ts";
import { REQUEST_STATUSES } from "../../requests/lifecycle.ts";
import { serializeRequest } from "../../requests/resource.ts";
import { CallerWatch } from "../../requests/request-watch.ts";
import { settledRequestsOf } from "../../requests/settled-cache.ts";
import { findRequest, listRequests, type RequestRow } from "../../store/requests.ts";
import type { Deps } from "../../deps.ts";
import type { Tenant } from "../../store/tenant.ts";
import { decodeCursor, encodeCursor, filtersOf, type ListFilters } from "../../tenancy/pagination.ts";
import { defineRoute } from "../route.ts";
import { text } from "../../ledger/fields.ts";
import { endUserIdSchema, integerParam, platformLimit } from "../schemas.ts";
import { requestListSchema, requestMessagesSchema, requestSchema } from "../response-schemas.ts";
import { requestMessages } from "../../requests/messages.ts";

const TAG = "Requests";
/** A body already serialized to JSON text. */
const JSON_TEXT = { "content-type": "application/json; charset=utf-8" };
const isoDate = z.iso.datetime({ offset: true }).or(z.iso.date());

/** The filters of `GET /v1/requests` (also carried by its cursors). */
const requestFilters = z.strictObject({
  endUserId: endUserIdSchema.optional(),
  status: z.enum(REQUEST_STATUSES).optional(),
  operationId: text({ min: 1, max: 100 }).schema.optional(),
  createdAfter: isoDate.optional(),
  createdBefore: isoDate.optional(),
});

/** A cursor's filters, checked again: a cursor is opaque, not trusted. */
function cursorFilters(filters: ListFilters): z.infer<typeof requestFilters> {
  const parsed = requestFilters.safeParse(filters);
  if (!parsed.success) throw new ServiceError("CURSOR_INVALID", { param: "cursor" });
  return parsed.data;
}

async function load(deps: Deps, tenant: Tenant, id: string): Promise<RequestRow> {
  const row = await findRequest(deps.db, tenant, id);
  if (!row) throw new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such request." });
  return asOfNow(deps, row);
}

export const requestRoutes = [
  defineRoute({
    method: "GET",
    url: "/v1/requests",
    operationId: "requests.list",
    summary: "List requests (summaries), newest first",
    tag: TAG,
    query: z.strictObject({
      limit: platformLimit,
      // Longer than other platform cursors: it carries the filters, so it can continue alone.
      cursor: z.string().min(1).max(1000).optional(),
      ...requestFilters.shape,
    }),
    response: { status: 200, description: "A list of requests without `result`", schema: requestListSchema },
    handler: async ({ deps, principal, query }) => {
      // A cursor belongs to one project's list in one mode (another project's or mode's cursor is
      // CURSOR_INVALID) and to
      // the filters of the first page (other filters are CURSOR_PARAMS_MISMATCH; `limit` may change).
      const list = `requests:${principal.projectId}:${principal.mode}`;
      const continued = query.cursor ? decodeCursor(list, query.cursor, query) : null;
      const filters = continued ? cursorFilters(continued.filters) : query;
      const rows = await listRequests(
        deps.db,
        principal,
        {
          endUserId: filters.endUserId,
          status: filters.status,
          operationId: filters.operationId,
          createdAfter: filters.createdAfter ? new Date(filters.createdAfter) : undefined,
          createdBefore: filters.createdBefore ? new Date(filters.createdBefore) : undefined,
        },
        query.limit,
        continued?.lastId ?? null,
      );
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return {
        body: {
          objectType: "list",
          url: "/v1/requests",
          data: await Promise.all(
            page.map(async (row) =>
              serializeRequest(deps, await asOfNow(deps, row), { includeResult: false }),
            ),
          ),
          nextCursor:
            rows.length > query.limit && last ? encodeCursor(list, last.id, filtersOf(filters)) : null,
          hasMore: rows.length > query.limit,
          remainingCount: null,
          cursorExpiresAt: null,
        },
      };
    },
  }),
  defineRoute({
    method: "GET",
    url: "/v1/requests/:id",
    operationId: "requests.retrieve",
    summary: "Retrieve a request; `waitSeconds` (up to 60) long-polls until it settles",
    tag: TAG,
    pathParams: ["id"],
    query: z.strictObject({
      waitSeconds: integerParam("waitSeconds", 0, 60, 0),
    }),
    response: { status: 200, description: "The request", schema: requestSchema },
    handler: async ({ deps, principal, params, query }) => {
      if (query.waitSeconds === 0) {
        // A final Request is answered from memory once read (decision 0027).
        const settled = settledRequestsOf(deps);
        const id = params.id ?? "";
        const cached = settled.get(principal, id);
        if (cached !== null) return { body: cached, headers: JSON_TEXT };
        const generation = settled.generation;
        const row = await load(deps, principal, id);
        const body = JSON.stringify(await serializeRequest(deps, row));
        settled.set(row, body, generation);
        return { body, headers: JSON_TEXT };
      }
      // Watch before reading, so that a request settling in between still ends the wait.
      const watch = new CallerWatch(deps);
      try {
        watch.watch(params.id ?? "");
        const row = await load(deps, principal, params.id ?? "");
        const settled = await watch.until(row, deps.clock.now() + query.waitSeconds * 1000);
        return { body: await serializeRequest(deps, await asOfNow(deps, settled)) };
      } finally {
        watch.close();
      }
    },
  }),
  defineRoute({
    method: "GET",
    url: "/v1/requests/:id/messages",
    operationId: "requests.messages",
    summary: "The XML message the Request sent and the application's answer, secrets redacted",
    tag: TAG,
    pathParams: ["id"],
    response: { status: 200, description: "The Request's messages", schema: requestMessagesSchema },
    handler: async ({ deps, principal, params }) => ({
      body: await requestMessages(deps, await load(deps, principal, params.id ?? "")),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/requests/:id/cancel",
    operationId: "requests.cancel",
    summary: "Cancel a request that has not been sent yet",
    tag: TAG,
    pathParams: ["id"],
    body: z.strictObject({}).optional(),
    response: { status: 200, description: "The canceled request", schema: requestSchema },
    // REQUEST_NOT_CANCELABLE once sent.
    errors: [409],
    handler: async ({ deps, principal, params }) => {
      const row = await load(deps, principal, params.id ?? "");
      if (row.status === "canceled") return { body: await serializeRequest(deps, row) };
      const canceled = await endUnsent(
        deps,
        row,
        "cancel",
        new ServiceError("REQUEST_CANCELED"),
        "Canceled by the caller",
      );
      if (!canceled) {
        const current = (await findRequest(deps.db, principal, row.id)) ?? row;
        // Canceled meanwhile (its queue TTL ended, or another cancel): as for one canceled before.
        if (current.status === "canceled") return { body: await serializeRequest(deps, current) };
        throw new ServiceError("REQUEST_NOT_CANCELABLE", {
          param: "id",
          message: `The request is ${current.status} and can no longer be canceled.`,
        });
      }
      return { body: await serializeRequest(deps, canceled) };
    },
  }),
];
