import assert from "node:assert/strict";
import { test } from "node:test";
import { verifySignature } from "../../src/testing/webhook-receiver.ts";
import { startDispatcher } from "../../src/webhooks/dispatcher.ts";
import { eventually } from "./helpers.ts";
import { sendTest, webhookRig, writeEvent } from "./webhook-helpers.ts";

/**
 * Endpoint lifecycle around delivery (spec: Webhook endpoint, Events; issue 9 items 1 and 3):
 * rotation overlap, auto-disable after 5 days, deletion, retention, and several dispatchers on one
 * store, all on the injected clock, against a real receiver on loopback.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

test("after a rotation deliveries carry both signatures until previousSecretExpiresAt, then only the new one", async (t) => {
  const rig = await webhookRig(t);
  const endpoint = await rig.createEndpoint();
  const rotated = await rig.api<{ secret: string; previousSecretExpiresAt: string; secretRotatedAt: string }>(
    "POST",
    `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`,
  );
  assert.equal(rotated.status, 200);
  assert.notEqual(rotated.body.secret, endpoint.secret);
  assert.equal(rotated.body.secretRotatedAt, new Date(rig.clock.now()).toISOString());
  assert.equal(rotated.body.previousSecretExpiresAt, new Date(rig.clock.now() + DAY).toISOString());
  await sendTest(rig, endpoint.id);
  await rig.receiver.waitFor("first", (r) => r.length === 1);
  // Each attempt is recorded before the clock jumps: a jump past an attempt still in flight would
  // time it out and expire its lease, and the event would rightly be sent again.
  const settled = (n: number) =>
    rig.untilDeliveries(
      endpoint.id,
      `${n} recorded`,
      (d) => d.length === n && d.every((x) => x.status === "succeeded"),
    );
  await settled(1);
  const during = rig.receiver.received[0];
  assert.ok(during);
  assert.equal(during.signature.split(" ").length, 2);
  verifySignature(rotated.body.secret, during);
  verifySignature(endpoint.secret, during);
  await rig.clock.advance(DAY - 1);
  await sendTest(rig, endpoint.id);
  await rig.receiver.waitFor("second", (r) => r.length === 2);
  await settled(2);
  verifySignature(endpoint.secret, rig.receiver.received[1] ?? during);
  await rig.clock.advance(1);
  await sendTest(rig, endpoint.id);
  await rig.receiver.waitFor("third", (r) => r.length === 3);
  const after = rig.receiver.received[2];
  assert.ok(after);
  assert.equal(after.signature.split(" ").length, 1);
  verifySignature(rotated.body.secret, after);
  assert.throws(() => verifySignature(endpoint.secret, after), "the old secret no longer verifies");
});

test("an endpoint failing for 5 days is disabled with disabledReason; its deliveries wait; enabling clears it and they go out", async (t) => {
  const rig = await webhookRig(t);
  rig.receiver.respond = () => ({ status: 500 });
  const endpoint = await rig.createEndpoint();
  const first = await writeEvent(rig);
  await rig.untilDeliveries(endpoint.id, "first failure", (d) => d[0]?.attemptCount === 1);
  await rig.clock.advance(5 * DAY - 1);
  await writeEvent(rig);
  await rig.untilDeliveries(
    endpoint.id,
    "second event attempted",
    (d) => d.length === 2 && (d[0]?.attemptCount ?? 0) >= 1,
  );
  let current = await rig.api<{ enabled: boolean; disabledReason: string | null }>(
    "GET",
    `/v1/webhook-endpoints/${endpoint.id}`,
  );
  assert.equal(current.body.enabled, true, "4 days 23:59:59.999 of failures: still enabled");
  await rig.clock.advance(1);
  await writeEvent(rig);
  await eventually("disabled", async () => {
    current = await rig.api("GET", `/v1/webhook-endpoints/${endpoint.id}`);
    return current.body.enabled === false;
  });
  assert.equal(current.body.disabledReason, "Every delivery attempt failed for 5 days.");
  const sent = rig.receiver.received.length;
  await rig.clock.advance(DAY);
  await rig.settled();
  assert.equal(rig.receiver.received.length, sent, "a disabled endpoint gets nothing");
  const held = (await rig.deliveries(endpoint.id)).filter((d) => d.status === "pending");
  assert.ok(held.length > 0, "its pending deliveries are kept");
  rig.receiver.respond = () => ({ status: 200 });
  const enabled = await rig.api<{ enabled: boolean; disabledReason: string | null }>(
    "POST",
    `/v1/webhook-endpoints/${endpoint.id}`,
    { enabled: true },
  );
  assert.equal(enabled.body.enabled, true);
  assert.equal(enabled.body.disabledReason, null);
  await rig.untilDeliveries(endpoint.id, "held deliveries delivered", (d) =>
    d.every((x) => x.status === "succeeded"),
  );
  assert.ok(rig.receiver.received.some((r) => r.id === first));
});

test("deleting an endpoint removes its delivery log and stops its retries", async (t) => {
  const rig = await webhookRig(t);
  rig.receiver.respond = () => ({ status: 500 });
  const endpoint = await rig.createEndpoint();
  await sendTest(rig, endpoint.id);
  await rig.untilDeliveries(endpoint.id, "first attempt", (d) => d[0]?.attemptCount === 1);
  const deleted = await rig.api("DELETE", `/v1/webhook-endpoints/${endpoint.id}`);
  assert.deepEqual(deleted.body, { id: endpoint.id, objectType: "webhook_endpoint", deleted: true });
  const left = await rig.h.deps.db
    .selectFrom("webhook_deliveries")
    .select("id")
    .where("endpoint_id", "=", endpoint.id)
    .execute();
  assert.deepEqual(left, []);
  await rig.clock.advance(DAY);
  await rig.settled();
  assert.equal(rig.receiver.received.length, 1, "no retry after deletion");
});

test("deliveries and events older than 30 days are deleted by the retention sweep", async (t) => {
  const rig = await webhookRig(t, { config: { SWEEP_INTERVAL_MS: String(HOUR) } });
  const endpoint = await rig.createEndpoint();
  const old = await sendTest(rig, endpoint.id);
  await rig.untilDeliveries(endpoint.id, "delivered", (d) => d[0]?.status === "succeeded");
  await rig.clock.advance(29 * DAY);
  const recent = await sendTest(rig, endpoint.id);
  await rig.untilDeliveries(
    endpoint.id,
    "both",
    (d) => d.length === 2 && d.every((x) => x.status === "succeeded"),
  );
  await rig.clock.advance(DAY + HOUR);
  const left = await rig.untilDeliveries(endpoint.id, "the old one is gone", (d) => d.length === 1);
  assert.equal(left[0]?.id, recent.id);
  const events = await rig.h.deps.db.selectFrom("events").select("id").execute();
  assert.deepEqual(
    events.map((e) => e.id),
    [recent.eventId],
  );
  assert.notEqual(old.id, recent.id);
});

test("two dispatchers on one store never attempt the same delivery at once and deliver each exactly once", async (t) => {
  const rig = await webhookRig(t, { config: { WEBHOOK_CONCURRENCY: "4" } });
  const second = startDispatcher(rig.h.deps, { random: () => 0.5 });
  t.after(() => second.stop());
  const inFlight = new Map<string, number>();
  let overlap = 0;
  rig.receiver.respond = (webhook) => {
    const now = (inFlight.get(webhook.id) ?? 0) + 1;
    inFlight.set(webhook.id, now);
    if (now > 1) overlap++;
    setTimeout(() => inFlight.set(webhook.id, (inFlight.get(webhook.id) ?? 1) - 1), 5);
    return { status: 200 };
  };
  const endpoint = await rig.createEndpoint();
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) ids.push(await writeEvent(rig));
  await rig.untilDeliveries(
    endpoint.id,
    "all delivered",
    (d) => d.length === 40 && d.every((x) => x.status === "succeeded"),
  );
  assert.equal(overlap, 0);
  assert.deepEqual(rig.receiver.received.map((r) => r.id).sort(), [...ids].sort(), "each exactly once");
});
