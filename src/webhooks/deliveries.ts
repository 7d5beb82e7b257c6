import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import { EVENTS_CHANNEL } from "../store/events.ts";
import type { AttemptRecord } from "../store/webhook-dispatch.ts";
import {
  findDelivery,
  findEndpoint,
  insertDeliveries,
  listDeliveries,
  type WebhookDeliveryRow,
} from "../store/webhooks.ts";
import type { Principal } from "../tenancy/api-keys.ts";
import { pageOf, type PlatformPage } from "../tenancy/pagination.ts";

/**
 * Webhook deliveries (spec: Webhook delivery; `GET /v1/webhook-endpoints/{id}/deliveries`, resend).
 * A delivery is one event for one endpoint; `eventId` is the `webhook-id` header. Kept 30 days.
 */
export interface DeliveryResource {
  id: string;
  objectType: "webhook_delivery";
  createdAt: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: "pending" | "succeeded" | "failed";
  attemptCount: number;
  nextAttemptAt: string | null;
  completedAt: string | null;
  attempts: AttemptRecord[];
}

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;

export function serializeDelivery(row: WebhookDeliveryRow): DeliveryResource {
  return {
    id: row.id,
    objectType: "webhook_delivery",
    createdAt: row.created_at.toISOString(),
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === "pending" ? (row.next_attempt_at?.toISOString() ?? null) : null,
    completedAt: row.completed_at?.toISOString() ?? null,
    attempts: row.attempts as AttemptRecord[],
  };
}

const endpointMissing = (): ServiceError =>
  new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such webhook endpoint." });

/** The cursor namespace of one endpoint's delivery list. */
export const deliveriesList = (endpointId: string): string => `webhook-deliveries:${endpointId}`;

export async function listDeliveriesPage(
  deps: Deps,
  principal: Principal,
  endpointId: string,
  query: { limit: number; lastId: string | null; status?: string | undefined },
): Promise<PlatformPage<DeliveryResource>> {
  const endpoint = await findEndpoint(deps.db, principal, endpointId);
  if (!endpoint) throw endpointMissing();
  const rows = await listDeliveries(
    deps.db,
    principal.projectId,
    endpoint.id,
    { status: query.status },
    query.limit,
    query.lastId,
  );
  return pageOf(
    deliveriesList(endpoint.id),
    `/v1/webhook-endpoints/${endpoint.id}/deliveries`,
    { limit: query.limit, ...(query.status ? { status: query.status } : {}) },
    rows,
    serializeDelivery,
  );
}

/**
 * Resends a delivery's event to its endpoint as a new delivery (a fresh budget of attempts, the same
 * `webhook-id`, so a receiver that already has it drops the copy). The original keeps its history.
 * A disabled endpoint's new delivery waits until the endpoint is enabled.
 */
export async function resendDelivery(
  deps: Deps,
  principal: Principal,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryResource> {
  const endpoint = await findEndpoint(deps.db, principal, endpointId);
  if (!endpoint) throw endpointMissing();
  const original = await findDelivery(deps.db, principal.projectId, endpoint.id, deliveryId);
  if (!original)
    throw new ServiceError("RESOURCE_MISSING", { param: "deliveryId", message: "No such webhook delivery." });
  const [row] = await insertDeliveries(deps.db, [
    {
      id: newId("webhookDelivery"),
      projectId: original.project_id,
      endpointId: endpoint.id,
      eventId: original.event_id,
      eventType: original.event_type,
      at: new Date(deps.clock.now()),
    },
  ]);
  if (!row) throw new ServiceError("INTERNAL_ERROR");
  await deps.store.notifier.notify(EVENTS_CHANNEL);
  return serializeDelivery(row);
}
