import { systemClock } from "../platform/clock.ts";
import { nextWorkAt } from "../store/webhook-dispatch.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../testing/webhook-receiver.ts";
import type { System } from "../testing/system.ts";

/**
 * The webhooks of a replay (issue 28 item 2, decision 0049): a loopback receiver (127.0.0.1, a port
 * of the system's choosing, closed with the replay) registered as an endpoint of the replay's
 * project for the Request event types the bundle's deliveries show, so the replayed Requests'
 * events are delivered by the service's own dispatcher, on its clock, and compared per Request with
 * the bundle's: the order of event types (IDs and times differ by nature). Connection events are
 * not compared (their number follows check-ins, which a replay does not reproduce one for one).
 */
export interface BundleDelivery {
  eventId: string;
  eventType: string;
  requestId: string | null;
}

/** The event types the bundle's deliveries show for each Request, in order, one per event. */
export function recordedEventTypes(deliveries: readonly BundleDelivery[]): Map<string, string[]> {
  const byRequest = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const d of deliveries) {
    if (d.requestId === null || seen.has(d.eventId)) continue;
    seen.add(d.eventId);
    byRequest.set(d.requestId, [...(byRequest.get(d.requestId) ?? []), d.eventType]);
  }
  return byRequest;
}

export interface ReplayWebhooks {
  /** The event types delivered for a replayed Request, in order, one per event. */
  typesOf(replayId: string): string[];
  /** Waits until the dispatcher has delivered all it would now (bounded, real time). */
  settled(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the receiver and registers it for `types` (with sync Requests' events, as a recorded sync
 * Request's delivery shows an endpoint that asked for them). Null when the bundle shows no Request
 * event: nothing to compare.
 */
export async function startReplayWebhooks(
  sys: System,
  key: string,
  types: readonly string[],
): Promise<ReplayWebhooks | null> {
  if (types.length === 0) return null;
  const receiver: WebhookReceiver = await startWebhookReceiver(null);
  const created = await sys.call("POST", "/v1/webhook-endpoints", {
    key,
    body: { url: receiver.url, eventTypes: [...types], includeSyncRequests: true },
  });
  if (created.status !== 201) {
    await receiver.close();
    throw new Error(`replay: the webhook endpoint was refused (${created.status}: ${await created.text()})`);
  }
  const dispatcher = sys.dispatcher;
  return {
    typesOf: (replayId) => {
      const seen = new Set<string>();
      return receiver.received
        .filter((w) => w.event.data.id === replayId && !seen.has(w.event.id) && seen.add(w.event.id))
        .map((w) => w.event.type);
    },
    settled: async (timeoutMs) => {
      const started = systemClock.now();
      for (;;) {
        await dispatcher?.settled();
        const next = await nextWorkAt(sys.deps.db);
        if (next === null || next.getTime() > sys.deps.clock.now()) return;
        if (systemClock.now() - started > timeoutMs)
          throw new Error("replay: timed out waiting for webhook deliveries");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => receiver.close(),
  };
}
