import assert from "node:assert/strict";
import { test } from "node:test";
import { verifySignature } from "../../src/testing/webhook-receiver.ts";
import { deliveryOf, sendTest, untilAttempts, webhookRig } from "./webhook-helpers.ts";

/**
 * Delivery (spec: Events, Webhook delivery; issue 9 item 3): signed Standard Webhooks requests,
 * the retry schedule with Retry-After, redirects, timeouts, rotation overlap, auto-disable,
 * deletion and retention, all on the injected clock, against a real receiver on loopback.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

test("a test event is delivered once, signed (verified by the standardwebhooks package), with the documented body", async (t) => {
  const rig = await webhookRig(t);
  const endpoint = await rig.createEndpoint();
  const pending = await sendTest(rig, endpoint.id);
  assert.equal(pending.status, "pending");
  assert.equal(pending.eventType, "webhook.test");
  await rig.receiver.waitFor("the test event", (r) => r.length === 1);
  const [webhook] = rig.receiver.received;
  assert.ok(webhook);
  verifySignature(endpoint.secret, webhook);
  assert.equal(webhook.id, pending.eventId, "webhook-id is the event ID");
  assert.match(webhook.id, /^evt_[0-9a-hjkmnp-tv-z]{26}$/);
  assert.equal(webhook.timestamp, String(Math.floor(rig.clock.now() / 1000)));
  assert.match(webhook.signature, /^v1,[A-Za-z0-9+/]{43}=$/, "one signature without a rotation");
  assert.equal(webhook.headers["content-type"], "application/json");
  assert.deepEqual(Object.keys(webhook.event), ["id", "type", "timestamp", "projectId", "data"]);
  assert.deepEqual(webhook.event, {
    id: pending.eventId,
    type: "webhook.test",
    timestamp: new Date(rig.clock.now()).toISOString(),
    projectId: rig.h.project.project.id,
    data: {
      objectType: "webhook_test",
      endpointId: endpoint.id,
      message: "A test event from ledger-bridge.",
    },
  });
  const done = await rig.untilDeliveries(endpoint.id, "succeeded", (d) => d[0]?.status === "succeeded");
  const delivery = done[0];
  assert.ok(delivery);
  assert.equal(delivery.attemptCount, 1);
  assert.equal(delivery.nextAttemptAt, null);
  assert.equal(delivery.completedAt, new Date(rig.clock.now()).toISOString());
  assert.deepEqual(delivery.attempts, [
    {
      attempt: 1,
      at: delivery.completedAt,
      statusCode: 200,
      latencyMs: 0,
      responseExcerpt: "ok",
      error: null,
    },
  ]);
});

test("failures are retried on the schedule, Retry-After postpones the next attempt, and every attempt is recorded", async (t) => {
  const rig = await webhookRig(t);
  const long = "é".repeat(600);
  let calls = 0;
  rig.receiver.respond = () => {
    calls++;
    if (calls <= 2) return { status: 500, body: long };
    if (calls === 3) return { status: 503, headers: { "retry-after": "3600" }, body: "busy" };
    return { status: 204 };
  };
  const endpoint = await rig.createEndpoint();
  const t0 = rig.clock.now();
  const delivery = await sendTest(rig, endpoint.id);
  let d = await untilAttempts(rig, endpoint.id, delivery.id, 1);
  assert.equal(d.status, "pending");
  assert.equal(
    d.nextAttemptAt,
    new Date(t0 + 5_000).toISOString(),
    "attempt 2 after 5 s (jitter pinned to 1.0)",
  );
  assert.deepEqual(d.attempts[0], {
    attempt: 1,
    at: new Date(t0).toISOString(),
    statusCode: 500,
    latencyMs: 0,
    responseExcerpt: "é".repeat(512),
    error: "non_2xx_status",
  });
  await rig.clock.advance(4_999);
  await rig.settled();
  assert.equal(rig.receiver.received.length, 1, "not before the scheduled time");
  await rig.clock.advance(1);
  d = await untilAttempts(rig, endpoint.id, delivery.id, 2);
  assert.equal(d.nextAttemptAt, new Date(t0 + 5_000 + 300_000).toISOString(), "attempt 3 after 5 min");
  await rig.clock.advance(300_000);
  d = await untilAttempts(rig, endpoint.id, delivery.id, 3);
  const third = t0 + 305_000;
  assert.equal(d.attempts[2]?.statusCode, 503);
  assert.equal(
    d.nextAttemptAt,
    new Date(third + HOUR).toISOString(),
    "Retry-After: 3600 beats the 30 min step",
  );
  await rig.clock.advance(30 * 60_000);
  await rig.settled();
  assert.equal(rig.receiver.received.length, 3, "the 30 min step was postponed");
  await rig.clock.advance(30 * 60_000);
  d = await untilAttempts(rig, endpoint.id, delivery.id, 4);
  assert.equal(d.status, "succeeded");
  assert.equal(d.attempts[3]?.statusCode, 204);
  assert.equal(d.attempts[3]?.error, null);
  assert.equal(d.attempts[3]?.responseExcerpt, "");
  assert.deepEqual(
    d.attempts.map((a) => a.attempt),
    [1, 2, 3, 4],
  );
  const ids = new Set(rig.receiver.received.map((r) => r.id));
  assert.equal(ids.size, 1, "every attempt carries the same webhook-id");
  for (const webhook of rig.receiver.received) verifySignature(endpoint.secret, webhook);
});

test("the dispatcher is settled only once the attempt a move of the clock made due is sent and recorded", async (t) => {
  const rig = await webhookRig(t, { config: { WEBHOOK_ATTEMPT_TIMEOUT_MS: "10000" } });
  let calls = 0;
  rig.receiver.respond = () => (++calls === 1 ? { status: 500 } : { status: 200, hang: true });
  const endpoint = await rig.createEndpoint();
  const delivery = await sendTest(rig, endpoint.id);
  await untilAttempts(rig, endpoint.id, delivery.id, 1);
  await rig.dispatcher.settled();
  assert.equal(rig.receiver.received.length, 1, "at rest: attempt 2 waits for its time");

  await rig.clock.advance(5_000);
  let rested = false;
  const settled = rig.dispatcher.settled().then(() => {
    rested = true;
  });
  await rig.receiver.waitFor("attempt 2 arrived", (r) => r.length === 2);
  assert.equal(rested, false, "not settled while attempt 2 hangs");
  await rig.clock.advance(10_000);
  await settled;
  // No polling: by the time it is settled, the attempt's end is recorded.
  const d = await deliveryOf(rig, endpoint.id, delivery.id);
  assert.equal(d.attemptCount, 2);
  assert.equal(d.attempts[1]?.error, "timeout");
  await rig.dispatcher.stop();
  const afterStop = await Promise.race([
    rig.dispatcher.settled().then(() => "settled"),
    new Promise((resolve) => setImmediate(() => resolve("pending"))),
  ]);
  assert.equal(afterStop, "settled", "a stopped dispatcher is settled at once");
});

test("after the 8th failed attempt the delivery is failed (dead-lettered) and nothing more is sent", async (t) => {
  const rig = await webhookRig(t);
  rig.receiver.respond = () => ({ status: 500 });
  const endpoint = await rig.createEndpoint();
  const delivery = await sendTest(rig, endpoint.id);
  for (let attempt = 1; attempt <= 8; attempt++) {
    const d = await untilAttempts(rig, endpoint.id, delivery.id, attempt);
    if (attempt < 8) {
      assert.equal(d.status, "pending");
      assert.ok(d.nextAttemptAt);
      await rig.clock.advance(new Date(d.nextAttemptAt).getTime() - rig.clock.now());
    } else {
      assert.equal(d.status, "failed");
      assert.equal(d.nextAttemptAt, null);
      assert.equal(d.completedAt, new Date(rig.clock.now()).toISOString());
    }
  }
  await rig.clock.advance(2 * DAY);
  await rig.settled();
  assert.equal(rig.receiver.received.length, 8);
  const failed = await rig.deliveries(endpoint.id, "?status=failed");
  assert.deepEqual(
    failed.map((d) => d.id),
    [delivery.id],
  );
});

test("redirects are not followed; one towards a private address is recorded as blocked_destination", async (t) => {
  const rig = await webhookRig(t);
  let calls = 0;
  rig.receiver.respond = () => {
    calls++;
    return calls === 1
      ? { status: 302, headers: { location: "https://elsewhere.customer.com/hook" } }
      : { status: 307, headers: { location: "http://169.254.169.254/latest/meta-data/" } };
  };
  const endpoint = await rig.createEndpoint();
  const first = await sendTest(rig, endpoint.id);
  const second = await sendTest(rig, endpoint.id);
  const a = await untilAttempts(rig, endpoint.id, first.id, 1);
  const b = await untilAttempts(rig, endpoint.id, second.id, 1);
  const errors = [a.attempts[0], b.attempts[0]].map((x) => [x?.statusCode, x?.error]).sort();
  assert.deepEqual(errors, [
    [302, "redirect_not_followed"],
    [307, "blocked_destination: redirect to 169.254.169.254 (cloud metadata) not followed"],
  ]);
  assert.equal(rig.receiver.received.length, 2, "nothing else was requested");
});

test("an attempt without an answer within the attempt timeout is recorded as timeout", async (t) => {
  const rig = await webhookRig(t, { config: { WEBHOOK_ATTEMPT_TIMEOUT_MS: "10000" } });
  rig.receiver.respond = () => ({ status: 200, hang: true });
  const endpoint = await rig.createEndpoint();
  const delivery = await sendTest(rig, endpoint.id);
  await rig.receiver.waitFor("the attempt arrived", (r) => r.length === 1);
  // The attempt hangs, so the dispatcher cannot rest; no wait is needed: an attempt timed out
  // early would be recorded with its own latency, and the record below pins it at 10 s.
  await rig.clock.advance(9_999);
  assert.equal((await deliveryOf(rig, endpoint.id, delivery.id)).attemptCount, 0, "still in flight");
  await rig.clock.advance(1);
  const d = await untilAttempts(rig, endpoint.id, delivery.id, 1);
  assert.deepEqual(d.attempts[0], {
    attempt: 1,
    at: new Date(rig.clock.now() - 10_000).toISOString(),
    statusCode: null,
    latencyMs: 10_000,
    responseExcerpt: null,
    error: "timeout",
  });
  assert.equal(d.status, "pending");
});

test("a refused connection is a network_error", async (t) => {
  const rig = await webhookRig(t);
  const endpoint = await rig.createEndpoint();
  await rig.receiver.close();
  const delivery = await sendTest(rig, endpoint.id);
  const d = await untilAttempts(rig, endpoint.id, delivery.id, 1);
  assert.match(d.attempts[0]?.error ?? "", /^network_error: .*ECONNREFUSED/);
  assert.equal(d.attempts[0]?.statusCode, null);
});
