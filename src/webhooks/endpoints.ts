import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import { EVENTS_CHANNEL } from "../store/events.ts";
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpointWithinLimit,
  insertEventWithDelivery,
  listEndpoints,
  rotateEndpointSecret,
  signingSecretPlace,
  updateEndpoint,
  type EndpointChanges,
  type WebhookEndpointRow,
} from "../store/webhooks.ts";
import { isTestTenant } from "../store/tenant.ts";
import type { Principal } from "../tenancy/api-keys.ts";
import { pageOf, type PlatformPage } from "../tenancy/pagination.ts";
import { serializeDelivery, type DeliveryResource } from "./deliveries.ts";
import { checkEndpointUrl } from "./endpoint-url.ts";
import type { WebhookTestData } from "./event-types.ts";
import { PREVIOUS_SECRET_TTL_MS } from "./schedule.ts";
import { newSecret } from "./signer.ts";

/**
 * Webhook endpoints (spec: Webhook endpoint; platform endpoints `/v1/webhook-endpoints…`). Every
 * operation is scoped by the key's project and mode: another project's or mode's endpoint is 404.
 * The signing secret (`whsec_…`) is returned by create and rotate-secret only, and stored sealed
 * with the key-encryption key (decision 0032).
 */
export interface EndpointResource {
  id: string;
  objectType: "webhook_endpoint";
  createdAt: string;
  projectId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  includeSyncRequests: boolean;
  secretRotatedAt: string | null;
  previousSecretExpiresAt: string | null;
}

export interface EndpointInput {
  url: string;
  eventTypes: string[];
  description?: string | null | undefined;
  enabled?: boolean | undefined;
  includeSyncRequests?: boolean | undefined;
}

export interface EndpointUpdate {
  url?: string | undefined;
  eventTypes?: string[] | undefined;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
  includeSyncRequests?: boolean | undefined;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function serializeEndpoint(row: WebhookEndpointRow): EndpointResource {
  return {
    id: row.id,
    objectType: "webhook_endpoint",
    createdAt: row.created_at.toISOString(),
    projectId: row.project_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    includeSyncRequests: row.include_sync_requests,
    secretRotatedAt: iso(row.secret_rotated_at),
    previousSecretExpiresAt: iso(row.previous_secret_expires_at),
  };
}

const missing = (): ServiceError =>
  new ServiceError("RESOURCE_MISSING", { param: "id", message: "No such webhook endpoint." });

const allowLoopback = (deps: Deps): boolean => deps.config.WEBHOOK_ALLOW_LOOPBACK === "on";

export async function loadEndpoint(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<WebhookEndpointRow> {
  const row = await findEndpoint(deps.db, principal, id);
  if (!row) throw missing();
  return row;
}

export async function createEndpoint(
  deps: Deps,
  principal: Principal,
  input: EndpointInput,
): Promise<EndpointResource & { secret: string }> {
  const url = checkEndpointUrl(input.url, allowLoopback(deps));
  const now = new Date(deps.clock.now());
  const secret = newSecret();
  const id = newId("webhookEndpoint");
  const row: WebhookEndpointRow = {
    id,
    project_id: principal.projectId,
    is_test: isTestTenant(principal),
    url,
    description: input.description ?? null,
    event_types: input.eventTypes,
    enabled: input.enabled ?? true,
    disabled_reason: null,
    include_sync_requests: input.includeSyncRequests ?? false,
    // Sealed at rest (decision 0032); shown in clear once, in this answer.
    secret: deps.sealing.seal(secret, signingSecretPlace(id)),
    previous_secret: null,
    previous_secret_expires_at: null,
    secret_rotated_at: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
  };
  const limit = deps.config.WEBHOOK_ENDPOINT_LIMIT;
  if (!(await insertEndpointWithinLimit(deps.db, row, limit))) {
    throw new ServiceError("WEBHOOK_ENDPOINT_LIMIT_REACHED", {
      message: `The project already has ${limit} webhook endpoints (WEBHOOK_ENDPOINT_LIMIT).`,
    });
  }
  return { ...serializeEndpoint(row), secret };
}

export async function listEndpointsPage(
  deps: Deps,
  principal: Principal,
  query: { limit: number; lastId: string | null },
): Promise<PlatformPage<EndpointResource>> {
  const rows = await listEndpoints(deps.db, principal, query.limit, query.lastId);
  return pageOf(
    endpointsList(principal),
    "/v1/webhook-endpoints",
    { limit: query.limit },
    rows,
    serializeEndpoint,
  );
}

/** The cursor namespace of a project's endpoint list (a cursor of another list is CURSOR_INVALID). */
export const endpointsList = (principal: Principal): string =>
  `webhook-endpoints:${principal.projectId}:${principal.mode}`;

/** Omitted fields stay unchanged; enabling clears `disabledReason` (spec: update). */
export async function changeEndpoint(
  deps: Deps,
  principal: Principal,
  id: string,
  input: EndpointUpdate,
): Promise<EndpointResource> {
  const current = await loadEndpoint(deps, principal, id);
  const changes: EndpointChanges = { updated_at: new Date(deps.clock.now()) };
  if (input.url !== undefined) changes.url = checkEndpointUrl(input.url, allowLoopback(deps));
  if (input.eventTypes !== undefined) changes.event_types = input.eventTypes;
  if (input.description !== undefined) changes.description = input.description;
  if (input.includeSyncRequests !== undefined) changes.include_sync_requests = input.includeSyncRequests;
  if (input.enabled !== undefined) {
    changes.enabled = input.enabled;
    // Enabling starts afresh: the reason goes, and so does the failure streak.
    if (input.enabled && !current.enabled) {
      changes.disabled_reason = null;
      changes.failing_since = null;
    }
  }
  const updated = await updateEndpoint(deps.db, principal, id, changes);
  if (!updated) throw missing();
  // Re-enabled: held deliveries may be due now.
  if (updated.enabled && !current.enabled) await deps.store.notifier.notify(EVENTS_CHANNEL);
  return serializeEndpoint(updated);
}

export async function removeEndpoint(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<{ id: string; objectType: "webhook_endpoint"; deleted: true }> {
  if (!(await deleteEndpoint(deps.db, principal, id))) throw missing();
  return { id, objectType: "webhook_endpoint", deleted: true };
}

/**
 * A new secret; the current one keeps signing (a second signature) for
 * {@link PREVIOUS_SECRET_TTL_MS}. Rotating again within that window drops the oldest secret.
 */
export async function rotateSecret(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<EndpointResource & { secret: string }> {
  const now = deps.clock.now();
  const secret = newSecret();
  const row = await rotateEndpointSecret(
    deps.db,
    principal,
    id,
    deps.sealing.seal(secret, signingSecretPlace(id)),
    new Date(now),
    new Date(now + PREVIOUS_SECRET_TTL_MS),
  );
  if (!row) throw missing();
  return { ...serializeEndpoint(row), secret };
}

/**
 * Sends a `webhook.test` event to this endpoint only, whatever it subscribes to and even while it
 * is disabled (so a fix can be checked before enabling it again). Returns the pending delivery.
 */
export async function sendTestEvent(deps: Deps, principal: Principal, id: string): Promise<DeliveryResource> {
  const endpoint = await loadEndpoint(deps, principal, id);
  const at = new Date(deps.clock.now());
  const data: WebhookTestData = {
    objectType: "webhook_test",
    endpointId: endpoint.id,
    message: "A test event from ledger-bridge.",
  };
  const eventId = newId("event");
  const delivery = await insertEventWithDelivery(
    deps.db,
    {
      id: eventId,
      projectId: endpoint.project_id,
      isTest: endpoint.is_test,
      type: "webhook.test",
      data: JSON.stringify(data),
      at,
    },
    {
      id: newId("webhookDelivery"),
      projectId: endpoint.project_id,
      endpointId: endpoint.id,
      eventId,
      eventType: "webhook.test",
      at,
    },
  );
  await deps.store.notifier.notify(EVENTS_CHANNEL);
  return serializeDelivery(delivery);
}
