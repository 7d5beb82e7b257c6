import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import type { FakeClock } from "../../src/platform/clock.ts";
import { buildTestApp, bearer, type TestApp } from "../../src/testing/harness.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../src/testing/webhook-receiver.ts";
import { startDispatcher, type Dispatcher, type DispatcherOptions } from "../../src/webhooks/dispatcher.ts";
import { newId } from "../../src/platform/ids.ts";
import { insertEventIfSubscribed } from "../../src/store/events.ts";
import { nextWorkAt } from "../../src/store/webhook-dispatch.ts";
import type { Deps } from "../../src/deps.ts";
import type { System } from "../../src/testing/system.ts";
import type { ReceivedWebhook } from "../../src/testing/webhook-receiver.ts";
import { E2E_CONFIG, eventually, json } from "./helpers.ts";

/** A service (fake clock), its webhook dispatcher and a loopback receiver. */
export interface WebhookRig {
  h: TestApp;
  clock: FakeClock;
  receiver: WebhookReceiver;
  dispatcher: Dispatcher;
  api<T = Record<string, unknown>>(
    method: "GET" | "POST" | "PUT" | "DELETE",
    url: string,
    body?: unknown,
    key?: string,
  ): Promise<{ status: number; body: T }>;
  /** Creates an endpoint (default: the receiver, every event type) and returns it with its secret. */
  createEndpoint(body?: Record<string, unknown>, key?: string): Promise<EndpointWithSecret>;
  deliveries(endpointId: string, query?: string): Promise<DeliveryResource[]>;
  /** Waits until webhook delivery has nothing left to do ({@link untilDispatchSettled}). */
  settled(): Promise<void>;
  /** Waits (real time, bounded) until the endpoint's deliveries satisfy `check`. */
  untilDeliveries(
    endpointId: string,
    what: string,
    check: (d: DeliveryResource[]) => boolean,
  ): Promise<DeliveryResource[]>;
}

export interface EndpointWithSecret {
  id: string;
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  previousSecretExpiresAt: string | null;
  [key: string]: unknown;
}

export interface DeliveryResource {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  completedAt: string | null;
  attempts: Array<{
    attempt: number;
    at: string;
    statusCode: number | null;
    latencyMs: number;
    responseExcerpt: string | null;
    error: string | null;
  }>;
}

export async function webhookRig(
  t: TestContext,
  options: { config?: Record<string, string>; dispatcher?: DispatcherOptions } = {},
): Promise<WebhookRig> {
  const h = await buildTestApp(null, {
    config: { WEBHOOK_ALLOW_LOOPBACK: "on", RATE_LIMIT_MAX: "1000000", ...options.config },
  });
  const clock = h.fakeClock;
  assert.ok(clock);
  const receiver = await startWebhookReceiver(null);
  const dispatcher = startDispatcher(h.deps, { random: () => 0.5, ...options.dispatcher });
  t.after(async () => {
    await dispatcher.stop();
    await receiver.close();
    await h.close();
  });
  const api: WebhookRig["api"] = async (method, url, body, key) => {
    const res = await h.app.inject({
      method,
      url,
      headers: bearer(key ?? h.project.keys.secretLive),
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const rig: WebhookRig = {
    h,
    clock,
    receiver,
    dispatcher,
    api,
    settled: () => untilDispatchSettled(h.deps, dispatcher),
    createEndpoint: async (body = {}, key) => {
      const res = await api<EndpointWithSecret>(
        "POST",
        "/v1/webhook-endpoints",
        { url: receiver.url, eventTypes: ["request.*", "connection.*"], ...body },
        key,
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body;
    },
    deliveries: async (endpointId, query = "") => {
      const res = await api<{ data: DeliveryResource[] }>(
        "GET",
        `/v1/webhook-endpoints/${endpointId}/deliveries${query}`,
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data;
    },
    untilDeliveries: async (endpointId, what, check) =>
      eventually(what, async () => {
        const list = await rig.deliveries(endpointId);
        return check(list) ? list : null;
      }),
  };
  return rig;
}

export async function sendTest(rig: WebhookRig, endpointId: string): Promise<DeliveryResource> {
  const res = await rig.api<DeliveryResource>("POST", `/v1/webhook-endpoints/${endpointId}/test`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** Writes an event through the outbox as a state change would (project's live mode). */
export async function writeEvent(rig: WebhookRig, type = "connection.status_changed"): Promise<string> {
  const id = newId("event");
  const written = await insertEventIfSubscribed(rig.h.deps.db, {
    id,
    projectId: rig.h.project.project.id,
    isTest: false,
    type,
    data: JSON.stringify({ id: "conn_test", objectType: "integration_connection", status: "online" }),
    at: new Date(rig.clock.now()),
  });
  assert.ok(written, "an enabled endpoint subscribes, so the event is written");
  await rig.h.deps.store.notifier.notify("events");
  return id;
}

export async function deliveryOf(
  rig: WebhookRig,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryResource> {
  const found = (await rig.deliveries(endpointId)).find((d) => d.id === deliveryId);
  assert.ok(found, `delivery ${deliveryId} is listed`);
  return found;
}

export async function untilAttempts(rig: WebhookRig, endpointId: string, deliveryId: string, count: number) {
  return eventually(`delivery has ${count} attempts`, async () => {
    const d = await deliveryOf(rig, endpointId, deliveryId);
    return d.attemptCount >= count ? d : null;
  });
}

/** startSystem options for webhook tests: E2E timings, loopback receivers allowed. */
export const SYSTEM_CONFIG = {
  webhooks: true,
  config: { ...E2E_CONFIG.config, WEBHOOK_ALLOW_LOOPBACK: "on" },
};

/** Creates an endpoint through the API of a running system. */
export async function endpointFor(
  sys: System,
  url: string,
  body: Record<string, unknown> = {},
  key = sys.project.keys.secretLive,
): Promise<{ id: string; secret: string }> {
  const res = await sys.call("POST", "/v1/webhook-endpoints", {
    key,
    body: { url, eventTypes: ["request.*", "connection.*"], ...body },
  });
  assert.equal(res.status, 201, await res.clone().text());
  return json<{ id: string; secret: string }>(res);
}

/** The received webhooks of one event type. */
export const ofType = (received: ReceivedWebhook[], type: string): ReceivedWebhook[] =>
  received.filter((r) => r.event.type === type);

/**
 * Waits until webhook delivery has nothing left to do at the clock's present time: no event waits
 * for its fan-out, no delivery of an enabled endpoint is due, and the dispatcher rests (nothing
 * leased, in flight or being recorded; `Dispatcher.settled`). Whatever would be sent without a new
 * event or a move of the clock has then been sent: what a receiver has not got by now, it does not
 * get. Polls the store (real time, bounded) only while an event or a due delivery is still waiting.
 */
export async function untilDispatchSettled(deps: Deps, dispatcher: Dispatcher): Promise<void> {
  await eventually("webhook dispatch settled", async () => {
    await dispatcher.settled();
    const next = await nextWorkAt(deps.db);
    return next === null || next.getTime() > deps.clock.now();
  });
}
