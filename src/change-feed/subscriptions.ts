import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import {
  deleteSubscription,
  findSubscription,
  insertSubscription,
  listSubscriptions,
  updateSubscription,
  type SubscriptionChanges,
  type SubscriptionRow,
} from "../store/change-feed.ts";
import { isTestTenant, type Tenant } from "../store/tenant.ts";
import { pageOf, type PlatformPage } from "../tenancy/pagination.ts";
import { CHANGE_FEED_CHANNEL } from "./poller.ts";
import { watchableResources } from "./resources.ts";

/**
 * Change feed subscriptions (spec: Change feed subscription; `/v1/change-feed-subscriptions`).
 * Scoped by the key's project and mode like every platform object. `resources` are kept
 * alphabetical and must name watchable typed resources; a subscription's poller starts one interval
 * after it is created (or enabled), from that moment: it reports changes, not history.
 */
export interface SubscriptionResource {
  id: string;
  objectType: "change_feed_subscription";
  createdAt: string;
  updatedAt: string;
  projectId: string;
  resources: string[];
  intervalMinutes: number;
  enabled: boolean;
}

export interface SubscriptionInput {
  resources: string[];
  intervalMinutes?: number | undefined;
  enabled?: boolean | undefined;
}

export interface SubscriptionUpdate {
  resources?: string[] | undefined;
  intervalMinutes?: number | undefined;
  enabled?: boolean | undefined;
}

/** Default minutes between polls of each connection. */
export const DEFAULT_INTERVAL_MINUTES = 15;
export const INTERVAL_MINUTES_MIN = 1;
export const INTERVAL_MINUTES_MAX = 1440;

export function serializeSubscription(row: SubscriptionRow): SubscriptionResource {
  return {
    id: row.id,
    objectType: "change_feed_subscription",
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    projectId: row.project_id,
    resources: row.resources,
    intervalMinutes: row.interval_minutes,
    enabled: row.enabled,
  };
}

const missing = (): ServiceError =>
  new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such change feed subscription." });

/**
 * Checks `resources` against the watchable groups and returns them alphabetical and without
 * repeats (a repeat is refused: it names a mistake).
 */
export function checkResources(resources: readonly string[]): string[] {
  const watchable = watchableResources();
  resources.forEach((name, index) => {
    if (!watchable.has(name)) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: `resources[${index}]`,
        message: `\`${name}\` is not a resource the change feed can watch (typed resources listed by modification time, such as \`customers\` or \`invoices\`).`,
      });
    }
    if (resources.indexOf(name) !== index) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: `resources[${index}]`,
        message: `\`${name}\` is listed twice.`,
      });
    }
  });
  return [...resources].sort();
}

export async function createSubscription(
  deps: Deps,
  tenant: Tenant,
  input: SubscriptionInput,
): Promise<SubscriptionResource> {
  const at = new Date(deps.clock.now());
  const row: SubscriptionRow = {
    id: newId("changeFeedSubscription"),
    project_id: tenant.projectId,
    is_test: isTestTenant(tenant),
    resources: checkResources(input.resources),
    interval_minutes: input.intervalMinutes ?? DEFAULT_INTERVAL_MINUTES,
    enabled: input.enabled ?? true,
    created_at: at,
    updated_at: at,
  };
  await insertSubscription(deps.db, row);
  await deps.store.notifier.notify(CHANGE_FEED_CHANNEL);
  return serializeSubscription(row);
}

export async function getSubscription(deps: Deps, tenant: Tenant, id: string): Promise<SubscriptionResource> {
  const row = await findSubscription(deps.db, tenant, id);
  if (!row) throw missing();
  return serializeSubscription(row);
}

/** Omitted fields are unchanged; a disabled subscription keeps its settings. */
export async function changeSubscription(
  deps: Deps,
  tenant: Tenant,
  id: string,
  input: SubscriptionUpdate,
): Promise<SubscriptionResource> {
  const changes: SubscriptionChanges = { updated_at: new Date(deps.clock.now()) };
  if (input.resources !== undefined) changes.resources = checkResources(input.resources);
  if (input.intervalMinutes !== undefined) changes.interval_minutes = input.intervalMinutes;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  const row = await updateSubscription(deps.db, tenant, id, changes);
  if (!row) throw missing();
  await deps.store.notifier.notify(CHANGE_FEED_CHANNEL);
  return serializeSubscription(row);
}

export async function removeSubscription(
  deps: Deps,
  tenant: Tenant,
  id: string,
): Promise<{ id: string; objectType: "change_feed_subscription"; deleted: true }> {
  if (!(await deleteSubscription(deps.db, tenant, id))) throw missing();
  return { id, objectType: "change_feed_subscription", deleted: true };
}

/** The cursor namespace of a tenant's subscription list. */
export const subscriptionsList = (tenant: Tenant): string =>
  `change-feed-subscriptions:${tenant.projectId}:${tenant.mode}`;

export async function listSubscriptionsPage(
  deps: Deps,
  tenant: Tenant,
  query: { limit: number; lastId: string | null },
): Promise<PlatformPage<SubscriptionResource>> {
  const rows = await listSubscriptions(deps.db, tenant, query.limit, query.lastId);
  return pageOf(
    subscriptionsList(tenant),
    "/v1/change-feed-subscriptions",
    { limit: query.limit },
    rows,
    serializeSubscription,
  );
}
