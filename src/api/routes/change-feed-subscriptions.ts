import { z } from "zod";
import {
  changeSubscription,
  createSubscription,
  getSubscription,
  INTERVAL_MINUTES_MAX,
  INTERVAL_MINUTES_MIN,
  listSubscriptionsPage,
  removeSubscription,
  subscriptionsList,
} from "../../change-feed/subscriptions.ts";
import { decodeCursor } from "../../tenancy/pagination.ts";
import { defineRoute } from "../route.ts";
import { platformListQuery } from "../schemas.ts";
import {
  changeFeedSubscriptionDeletedSchema,
  changeFeedSubscriptionListSchema,
  changeFeedSubscriptionSchema,
} from "../response-schemas.ts";

const TAG = "Change feed subscriptions";
const noBody = z.strictObject({}).optional();

const resources = z
  .array(z.string({ error: "Each resource is a typed resource's path name, such as `customers`." }), {
    error: "`resources` must be an array of resource names.",
  })
  .min(1, { error: "`resources` must name 1 to 50 resources." })
  .max(50, { error: "`resources` must name 1 to 50 resources." })
  .meta({
    description:
      "Typed resources listed by modification time, by path name (`customers`, `invoices`); kept alphabetical.",
    minItems: 1,
    maxItems: 50,
  });

const intervalMinutes = z
  .number({
    error: `\`intervalMinutes\` must be an integer from ${INTERVAL_MINUTES_MIN} to ${INTERVAL_MINUTES_MAX}.`,
  })
  .int({
    error: `\`intervalMinutes\` must be an integer from ${INTERVAL_MINUTES_MIN} to ${INTERVAL_MINUTES_MAX}.`,
  })
  .min(INTERVAL_MINUTES_MIN, {
    error: `\`intervalMinutes\` must be an integer from ${INTERVAL_MINUTES_MIN} to ${INTERVAL_MINUTES_MAX}.`,
  })
  .max(INTERVAL_MINUTES_MAX, {
    error: `\`intervalMinutes\` must be an integer from ${INTERVAL_MINUTES_MIN} to ${INTERVAL_MINUTES_MAX}.`,
  })
  .meta({ description: "Minutes between polls of each connection (default 15)." });

const enabled = z
  .boolean()
  .meta({ description: "A disabled subscription keeps its settings. Default true." });

const createBody = z.strictObject({
  resources,
  intervalMinutes: intervalMinutes.optional(),
  enabled: enabled.optional(),
});

const updateBody = z.strictObject({
  resources: resources.optional(),
  intervalMinutes: intervalMinutes.optional(),
  enabled: enabled.optional(),
});

/** `/v1/change-feed-subscriptions…` (spec: Platform endpoints, Change feed subscription). */
export const changeFeedSubscriptionRoutes = [
  defineRoute({
    method: "GET",
    url: "/v1/change-feed-subscriptions",
    operationId: "changeFeedSubscriptions.list",
    summary: "List change feed subscriptions, newest first",
    tag: TAG,
    query: platformListQuery,
    response: {
      status: 200,
      description: "A list of change feed subscriptions",
      schema: changeFeedSubscriptionListSchema,
    },
    handler: async ({ deps, principal, query }) => {
      const lastId = query.cursor
        ? decodeCursor(subscriptionsList(principal), query.cursor, {}).lastId
        : null;
      return { body: await listSubscriptionsPage(deps, principal, { limit: query.limit, lastId }) };
    },
  }),
  defineRoute({
    method: "POST",
    url: "/v1/change-feed-subscriptions",
    operationId: "changeFeedSubscriptions.create",
    summary: "Create a change feed subscription",
    tag: TAG,
    body: createBody,
    examples: {
      customers: { resources: ["customers", "invoices"], intervalMinutes: 15 },
      items: { resources: ["inventory-items"], intervalMinutes: 60, enabled: false },
    },
    response: {
      status: 201,
      description: "The change feed subscription",
      schema: changeFeedSubscriptionSchema,
    },
    handler: async ({ deps, principal, body }) => ({
      status: 201,
      body: await createSubscription(deps, principal, body),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/change-feed-subscriptions/:id",
    operationId: "changeFeedSubscriptions.retrieve",
    summary: "Retrieve a change feed subscription",
    tag: TAG,
    pathParams: ["id"],
    response: {
      status: 200,
      description: "The change feed subscription",
      schema: changeFeedSubscriptionSchema,
    },
    handler: async ({ deps, principal, params }) => ({
      body: await getSubscription(deps, principal, params.id ?? ""),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/change-feed-subscriptions/:id",
    operationId: "changeFeedSubscriptions.update",
    summary: "Update a change feed subscription (omitted fields are unchanged)",
    tag: TAG,
    pathParams: ["id"],
    body: updateBody,
    examples: {
      slower: { intervalMinutes: 60 },
      pause: { enabled: false, resources: ["customers"] },
    },
    response: {
      status: 200,
      description: "The change feed subscription",
      schema: changeFeedSubscriptionSchema,
    },
    handler: async ({ deps, principal, params, body }) => ({
      body: await changeSubscription(deps, principal, params.id ?? "", body),
    }),
  }),
  defineRoute({
    method: "DELETE",
    url: "/v1/change-feed-subscriptions/:id",
    operationId: "changeFeedSubscriptions.delete",
    summary: "Delete a change feed subscription",
    tag: TAG,
    pathParams: ["id"],
    body: noBody,
    response: {
      status: 200,
      description: "`{id, objectType: 'change_feed_subscription', deleted: true}`",
      schema: changeFeedSubscriptionDeletedSchema,
    },
    handler: async ({ deps, principal, params }) => ({
      body: await removeSubscription(deps, principal, params.id ?? ""),
    }),
  }),
];
