import { z } from "zod";
import { serviceIssue } from "../../errors/from-zod.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { decodeCursor, type ListFilters } from "../../tenancy/pagination.ts";
import {
  DELIVERY_STATUSES,
  deliveriesList,
  listDeliveriesPage,
  resendDelivery,
} from "../../webhooks/deliveries.ts";
import {
  changeEndpoint,
  createEndpoint,
  endpointsList,
  listEndpointsPage,
  loadEndpoint,
  removeEndpoint,
  rotateSecret,
  sendTestEvent,
  serializeEndpoint,
} from "../../webhooks/endpoints.ts";
import { SUBSCRIBABLE_EVENT_TYPES } from "../../webhooks/event-types.ts";
import { defineRoute } from "../route.ts";
import { platformLimit, platformListQuery } from "../schemas.ts";
import {
  webhookDeliveryListSchema,
  webhookDeliverySchema,
  webhookEndpointDeletedSchema,
  webhookEndpointListSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from "../response-schemas.ts";

const TAG = "Webhook endpoints";
const noBody = z.strictObject({}).optional();

/** Spec: 1 to 7 event types; known types or the `request.*` / `connection.*` wildcards, no repeats. */
const eventTypes = z
  .array(z.string(), { error: "`eventTypes` must be an array of event type names." })
  .check((ctx) => {
    const types = ctx.value;
    if (types.length < 1 || types.length > 7) {
      ctx.issues.push({
        ...serviceIssue("INVALID_PARAMETER", "`eventTypes` must list 1 to 7 event types."),
        input: types,
      });
      return;
    }
    types.forEach((type, index) => {
      const known = (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(type);
      const repeated = types.indexOf(type) !== index;
      if (known && !repeated) return;
      const message = repeated
        ? `\`${type}\` is listed twice.`
        : type === "webhook.test"
          ? "`webhook.test` is sent by the test operation to any endpoint; it is not subscribed to."
          : `Unknown event type \`${type}\`. Known: ${SUBSCRIBABLE_EVENT_TYPES.join(", ")}.`;
      ctx.issues.push({ ...serviceIssue("INVALID_PARAMETER", message), input: type, path: [index] });
    });
  })
  .meta({
    description: "1 to 7 event types; `request.*` and `connection.*` subscribe to a whole family.",
    minItems: 1,
    maxItems: 7,
    items: { type: "string", enum: [...SUBSCRIBABLE_EVENT_TYPES] },
  });

/** Spec: description up to 500 characters (null clears it). */
const description = z
  .string()
  .check((ctx) => {
    if (ctx.value.length > 500)
      ctx.issues.push({
        ...serviceIssue("STRING_TOO_LONG", "Must be at most 500 characters."),
        input: ctx.value,
      });
    else if (hasControlCharacter(ctx.value))
      ctx.issues.push({
        ...serviceIssue("INVALID_PARAMETER", "Must not contain control characters."),
        input: ctx.value,
      });
  })
  .meta({ description: "Up to 500 characters; null clears it.", maxLength: 500 });

/** C0 controls other than tab, line feed and carriage return (the store cannot hold NUL). */
function hasControlCharacter(value: string): boolean {
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return true;
  }
  return false;
}

const url = z.string({ error: "`url` must be a string." }).meta({
  description:
    "HTTPS, public DNS name, default port, no IP addresses, no internal names; redirects are not followed. Up to 2048 characters.",
  maxLength: 2048,
});

const includeSyncRequests = z.boolean().meta({
  description:
    "Default false. Also deliver request events of sync calls whose caller already got the result.",
});

const createBody = z.strictObject({
  url,
  eventTypes,
  description: description.nullable().optional(),
  enabled: z.boolean().optional().meta({ description: "Default true." }),
  includeSyncRequests: includeSyncRequests.optional(),
});

const updateBody = z.strictObject({
  url: url.optional(),
  eventTypes: eventTypes.optional(),
  description: description.nullable().optional(),
  enabled: z.boolean().optional().meta({ description: "Enabling clears `disabledReason`." }),
  includeSyncRequests: includeSyncRequests.optional(),
});

const deliveryFilters = z.strictObject({ status: z.enum(DELIVERY_STATUSES).optional() });

/** A cursor's filters, checked again: a cursor is opaque, not trusted. */
function cursorFilters(filters: ListFilters): z.infer<typeof deliveryFilters> {
  const parsed = deliveryFilters.safeParse(filters);
  if (!parsed.success) throw new ServiceError("CURSOR_INVALID", { param: "cursor" });
  return parsed.data;
}

/** `/v1/webhook-endpoints…` (spec: Platform endpoints; architecture §5). */
export const webhookEndpointRoutes = [
  defineRoute({
    method: "GET",
    url: "/v1/webhook-endpoints",
    operationId: "webhookEndpoints.list",
    summary: "List webhook endpoints, newest first",
    tag: TAG,
    query: platformListQuery,
    response: { status: 200, description: "A list of webhook endpoints", schema: webhookEndpointListSchema },
    handler: async ({ deps, principal, query }) => {
      const lastId = query.cursor ? decodeCursor(endpointsList(principal), query.cursor, {}).lastId : null;
      return { body: await listEndpointsPage(deps, principal, { limit: query.limit, lastId }) };
    },
  }),
  defineRoute({
    method: "POST",
    url: "/v1/webhook-endpoints",
    operationId: "webhookEndpoints.create",
    summary: "Create a webhook endpoint; the response carries its signing `secret` (shown once)",
    tag: TAG,
    body: createBody,
    examples: {
      requests: { url: "https://hooks.example.com/ledger", eventTypes: ["request.*"], description: "Orders" },
      connections: { url: "https://hooks.example.com/status", eventTypes: ["connection.status_changed"] },
    },
    response: {
      status: 201,
      description: "The webhook endpoint with `secret` (`whsec_…`)",
      schema: webhookEndpointWithSecretSchema,
    },
    // WEBHOOK_ENDPOINT_LIMIT_REACHED.
    errors: [422],
    handler: async ({ deps, principal, body }) => ({
      status: 201,
      body: await createEndpoint(deps, principal, body),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/webhook-endpoints/:id",
    operationId: "webhookEndpoints.retrieve",
    summary: "Retrieve a webhook endpoint",
    tag: TAG,
    pathParams: ["id"],
    response: { status: 200, description: "The webhook endpoint", schema: webhookEndpointSchema },
    handler: async ({ deps, principal, params }) => ({
      body: serializeEndpoint(await loadEndpoint(deps, principal, params.id ?? "")),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/webhook-endpoints/:id",
    operationId: "webhookEndpoints.update",
    summary: "Update a webhook endpoint (omitted fields are unchanged; enabling clears `disabledReason`)",
    tag: TAG,
    pathParams: ["id"],
    body: updateBody,
    examples: {
      describe: { description: "Orders (billing team)" },
      subscribe: { eventTypes: ["request.succeeded", "request.failed"], includeSyncRequests: true },
    },
    response: { status: 200, description: "The webhook endpoint", schema: webhookEndpointSchema },
    handler: async ({ deps, principal, params, body }) => ({
      body: await changeEndpoint(deps, principal, params.id ?? "", body),
    }),
  }),
  defineRoute({
    method: "DELETE",
    url: "/v1/webhook-endpoints/:id",
    operationId: "webhookEndpoints.delete",
    summary: "Delete a webhook endpoint with its delivery log; pending retries stop",
    tag: TAG,
    pathParams: ["id"],
    body: noBody,
    response: {
      status: 200,
      description: "`{id, objectType: 'webhook_endpoint', deleted: true}`",
      schema: webhookEndpointDeletedSchema,
    },
    handler: async ({ deps, principal, params }) => ({
      body: await removeEndpoint(deps, principal, params.id ?? ""),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/webhook-endpoints/:id/rotate-secret",
    operationId: "webhookEndpoints.rotateSecret",
    summary: "Rotate the signing secret; the previous one also signs until `previousSecretExpiresAt` (24 h)",
    tag: TAG,
    pathParams: ["id"],
    body: noBody,
    response: {
      status: 200,
      description: "The webhook endpoint with its new `secret` (shown once)",
      schema: webhookEndpointWithSecretSchema,
    },
    handler: async ({ deps, principal, params }) => ({
      body: await rotateSecret(deps, principal, params.id ?? ""),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/webhook-endpoints/:id/test",
    operationId: "webhookEndpoints.test",
    summary: "Send a `webhook.test` event to the endpoint",
    tag: TAG,
    pathParams: ["id"],
    body: noBody,
    response: {
      status: 200,
      description: "The pending webhook delivery of the test event",
      schema: webhookDeliverySchema,
    },
    handler: async ({ deps, principal, params }) => ({
      body: await sendTestEvent(deps, principal, params.id ?? ""),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/webhook-endpoints/:id/deliveries",
    operationId: "webhookEndpoints.deliveries.list",
    summary: "List an endpoint's deliveries, newest first (kept 30 days)",
    tag: TAG,
    pathParams: ["id"],
    query: z.strictObject({
      limit: platformLimit,
      cursor: z.string().min(1).max(200).optional(),
      ...deliveryFilters.shape,
    }),
    response: { status: 200, description: "A list of webhook deliveries", schema: webhookDeliveryListSchema },
    handler: async ({ deps, principal, params, query }) => {
      const endpointId = params.id ?? "";
      const continued = query.cursor ? decodeCursor(deliveriesList(endpointId), query.cursor, query) : null;
      const filters = continued ? cursorFilters(continued.filters) : query;
      return {
        body: await listDeliveriesPage(deps, principal, endpointId, {
          limit: query.limit,
          lastId: continued?.lastId ?? null,
          status: filters.status,
        }),
      };
    },
  }),
  defineRoute({
    method: "POST",
    url: "/v1/webhook-endpoints/:id/deliveries/:deliveryId/resend",
    operationId: "webhookEndpoints.deliveries.resend",
    summary: "Resend a delivery's event as a new delivery (same `webhook-id`)",
    tag: TAG,
    pathParams: ["id", "deliveryId"],
    body: noBody,
    response: { status: 200, description: "The new pending webhook delivery", schema: webhookDeliverySchema },
    handler: async ({ deps, principal, params }) => ({
      body: await resendDelivery(deps, principal, params.id ?? "", params.deliveryId ?? ""),
    }),
  }),
];
