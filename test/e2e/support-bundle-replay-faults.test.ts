import assert from "node:assert/strict";
import { test } from "node:test";
import { replayBundle, type ReplayReport } from "../../src/simulation/replay.ts";
import type { BundleDocument } from "../../src/simulator/replay.ts";
import { startWebhookReceiver } from "../../src/testing/webhook-receiver.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { READ, bringOnline, json, queueAsync, stopConnector } from "./helpers.ts";
import { readRequest, untilStatus } from "./waiting-helpers.ts";
import { bundleStatusChanges } from "../../src/store/support-bundle.ts";
import { SYSTEM_CONFIG, endpointFor, untilDispatchSettled } from "./webhook-helpers.ts";

/**
 * Replay of a support bundle, beyond the application's answers (issue 28 item 2, decision 0049): a
 * path recorded through HTTP, SOAP and the simulator with webhooks delivered to a receiver, a
 * Request that waited while the connector was offline, and one that waited while the application
 * was closed (a session ended in `connectionError`). Its bundle replays to the same ends — waiting
 * reasons and webhook event types included; a bundle whose outage or webhook was changed reports
 * what the replay did otherwise; recorded application time is spent on the replay's clock.
 */
async function recordPath(sys: System, eu: ConnectedEndUser): Promise<BundleDocument> {
  const clock = sys.fakeClock;
  assert.ok(clock && sys.dispatcher);
  const written = await queueAsync(
    sys,
    eu.endUserId,
    "<CustomerAddRq><CustomerAdd><Name>Hooked Ltd</Name></CustomerAdd></CustomerAddRq>",
  );
  await untilStatus(sys, written, "succeeded");

  // The PC off: the connector silent past CONNECTION_OFFLINE_AFTER_MS, the sweep stores offline.
  await stopConnector(sys, eu);
  const config = sys.deps.config;
  await clock.advance(config.CONNECTION_OFFLINE_AFTER_MS + config.SWEEP_INTERVAL_MS);
  await untilEvent(sys, eu, "online→offline");
  await clock.advance(1);
  const whileOffline = await queueAsync(sys, eu.endUserId, READ);
  assert.equal((await readRequest(sys, whileOffline)).waitingReason, "connector_offline");
  await clock.advance(1);
  eu.connector.start();
  await untilStatus(sys, whileOffline, "succeeded");

  // The application closed: the next session's connectionError; a Request made then waits.
  await stopConnector(sys, eu);
  eu.ledger.setFault({ kind: "app_not_running" });
  assert.equal((await eu.connector.checkInNow()).outcome, "connection_failed");
  await untilEvent(sys, eu, "online→ledger_unavailable");
  await clock.advance(1);
  const whileClosed = await queueAsync(sys, eu.endUserId, READ);
  assert.equal((await readRequest(sys, whileClosed)).waitingReason, "ledger_unavailable");
  eu.ledger.setFault(null);
  await clock.advance(1);
  eu.connector.start();
  await untilStatus(sys, whileClosed, "succeeded");
  await untilDispatchSettled(sys.deps, sys.dispatcher);

  const bundle = await json<BundleDocument>(
    await sys.call("GET", `/v1/end-users/${eu.endUserId}/support-bundle?since=1h`),
  );
  const reasons = (id: string) => bundle.requests.find((r) => r.request.id === id)?.waitingReasons;
  assert.deepEqual(reasons(written), []);
  assert.deepEqual(reasons(whileOffline), ["connector_offline"]);
  assert.deepEqual(reasons(whileClosed), ["ledger_unavailable"]);
  const requestEvents = (bundle.webhookDeliveries ?? []).filter((d) => d.requestId !== null);
  assert.deepEqual(
    requestEvents.map((d) => [d.requestId, d.eventType]),
    [written, whileOffline, whileClosed].map((id) => [id, "request.succeeded"]),
  );
  return bundle;
}

/** Waits until the connection's status history holds `change` (`from→to`). */
async function untilEvent(sys: System, eu: ConnectedEndUser, change: string): Promise<void> {
  const started = Date.now();
  const changes = async () =>
    (
      await bundleStatusChanges(sys.deps.db, eu.connectionId, {
        since: new Date(0),
        until: new Date(Date.UTC(9999, 0, 1)),
      })
    ).map((c) => `${c.previous_status}→${c.status}`);
  while (!(await changes()).includes(change)) {
    if (Date.now() - started > 30_000) assert.fail(`no ${change} within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const byOriginal = (report: ReplayReport, id: string) => {
  const found = report.requests.find((r) => r.originalId === id);
  assert.ok(found, `${id} replayed`);
  return found;
};

test("webhooks, waits while offline and a closed application replay to the same ends", async (t) => {
  const sys = await startSystem(t, SYSTEM_CONFIG);
  const receiver = await startWebhookReceiver(t);
  await endpointFor(sys, receiver.url, { eventTypes: ["request.*"] });
  const eu = await sys.connectEndUser({ companyName: "Outage Co" });
  await bringOnline(sys, eu);
  const bundle = await recordPath(sys, eu);
  const [written, whileOffline, whileClosed] = bundle.requests.map((r) => r.request.id) as [
    string,
    string,
    string,
  ];

  await t.test("the same ends, waiting reasons and webhooks", async () => {
    const report = await replayBundle(bundle);
    assert.deepEqual(report.divergences, []);
    for (const r of report.requests) assert.deepEqual(r.differences, [], JSON.stringify(r, null, 2));
    assert.equal(report.ok, true);
    assert.deepEqual(byOriginal(report, whileOffline).replayed?.waitingReasons, ["connector_offline"]);
    assert.deepEqual(byOriginal(report, whileClosed).replayed?.waitingReasons, ["ledger_unavailable"]);
    for (const id of [written, whileOffline, whileClosed])
      assert.deepEqual(byOriginal(report, id).replayed?.webhooks, ["request.succeeded"]);
    assert.ok((byOriginal(report, written).replayedLedgerMs ?? 0) < 300, "no recorded time spent");
  });

  await t.test("an outage or a webhook the bundle tells otherwise is reported as a difference", async () => {
    const tampered = structuredClone(bundle);
    // No outage recorded: the replay's connector stays online, so the Request never waits offline.
    const changes = tampered.connection?.statusChanges ?? [];
    tampered.connection = {
      ...tampered.connection,
      statusChanges: changes.filter((c) => c.status !== "offline"),
    };
    // The recorded event of the write said it failed.
    const delivery = tampered.webhookDeliveries?.find((d) => d.requestId === written);
    assert.ok(delivery);
    delivery.eventType = "request.failed";
    const report = await replayBundle(tampered);
    assert.equal(report.ok, false);
    assert.deepEqual(report.divergences, []);
    assert.deepEqual(byOriginal(report, written).differences, [
      'webhooks: recorded ["request.failed"], replayed ["request.succeeded"]',
    ]);
    // Sent at once: neither the offline status in its timeline nor its waiting reason.
    assert.deepEqual(byOriginal(report, whileOffline).differences, [
      'timeline: recorded ["waiting_for_connection","queued","sent","succeeded"], replayed ["queued","sent","succeeded"]',
      'waitingReasons: recorded ["connector_offline"], replayed []',
    ]);
    assert.equal(byOriginal(report, whileClosed).same, true);
  });

  await t.test("the service's own Requests in a bundle are neither made again nor expected", async () => {
    assert.ok(
      bundle.requests.every((r) => r.background === false),
      "every recorded call is a caller's",
    );
    const own = structuredClone(bundle);
    const entry = own.requests.find((r) => r.request.id === whileClosed);
    assert.ok(entry);
    entry.background = true;
    const report = await replayBundle(own);
    assert.equal(
      report.requests.find((r) => r.originalId === whileClosed),
      undefined,
      "not made again",
    );
    assert.deepEqual(report.unplayed, [], "its document not expected");
    assert.deepEqual(report.divergences, []);
    assert.equal(report.ok, true, JSON.stringify(report.requests, null, 2));
  });

  await t.test("recorded application time is spent on the replay's clock", async () => {
    const timed = structuredClone(bundle);
    const first = timed.requests.find((r) => r.request.id === written);
    assert.ok(first);
    first.request.timings.ledgerMs = 300;
    const slept: number[] = [];
    const report = await replayBundle(timed, {
      recordedTiming: true,
      sleep: async (ms, replaySystem) => {
        slept.push(ms);
        await replaySystem.fakeClock?.advance(ms);
      },
    });
    assert.ok(slept.includes(300), JSON.stringify(slept));
    assert.ok((byOriginal(report, written).replayedLedgerMs ?? 0) >= 300);
    assert.equal(report.ok, true, JSON.stringify(report.requests, null, 2));
  });
});
