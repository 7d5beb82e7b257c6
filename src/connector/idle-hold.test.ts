import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeClock } from "../platform/clock.ts";
import { hashSecret } from "../platform/secrets.ts";
import { connectionChannel } from "../requests/engine.ts";
import { ActivityStamps } from "../store/activity-stamps.ts";
import type { ObservedQuery } from "../store/database.ts";
import { openTestStore } from "../testing/harness.ts";
import { SoapByHand } from "../testing/soap-by-hand.ts";
import { startSystem, type ConnectedEndUser, type System } from "../testing/system.ts";
import { SessionMemory } from "./session/memory.ts";
import { getLastError, sendRequestXML, type ConnectorContext, type SendRequestInput } from "./session.ts";

/**
 * What an idle session costs (issue 17, decision 0023): held calls end at `CONNECTOR_HOLD_MS` on
 * the hold's clock (injected here), and a re-ask of a session with nothing to do (sendRequestXML
 * after an empty hold, getLastError after it) touches no store: held calls wait on the notifier,
 * the activity stamps are written in batches, and only a wake-up sends the next call to the store.
 */
const HOLD_MS = 90_000;
const CONFIG = {
  CONNECTOR_HOLD_MS: String(HOLD_MS),
  RATE_LIMIT_MAX: "1000000",
  // Nothing else may touch the store while statements are counted: no lease renewal, no sweep.
  INSTANCE_LEASE_MS: "86400000",
  SWEEP_INTERVAL_MS: "86400000",
};
/** The real connector's pause after NoOp, on the service clock. */
const NOOP_PAUSE_MS = 5000;

function contextFor(sys: System, holdClock: FakeClock): ConnectorContext {
  return {
    deps: sys.deps,
    shutdown: new AbortController().signal,
    held: new Set(),
    memory: new SessionMemory(sys.deps.store.notifier),
    holdClock,
  };
}

function inputFor(eu: ConnectedEndUser, ticket: string): SendRequestInput {
  return { ticket, hcp: "", companyFileName: eu.companyFilePath, country: "US", major: "16", minor: "0" };
}

/** Lets whatever the last step woke run to its next wait. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** One held sendRequestXML that ends empty when the hold clock reaches the limit. */
async function emptyHold(
  ctx: ConnectorContext,
  holdClock: FakeClock,
  input: SendRequestInput,
): Promise<void> {
  let result: string | undefined;
  const call = sendRequestXML(ctx, input, new AbortController().signal).then((r) => (result = r));
  await holdClock.untilSleepers(1);
  await holdClock.advance(HOLD_MS - 1);
  await settle();
  assert.equal(result, undefined, "still held a millisecond before the limit");
  await holdClock.advance(1);
  await call;
  assert.equal(result, "", "the hold ends empty at the configured limit");
}

test("a held sendRequestXML ends at CONNECTOR_HOLD_MS, the first call and a quiet re-ask alike", async (t) => {
  const sys = await startSystem(t, { config: CONFIG });
  const holdClock = new FakeClock();
  const ctx = contextFor(sys, holdClock);
  const eu = await sys.connectEndUser({ companyName: "Hold Limit Co" });
  const input = inputFor(eu, await SoapByHand.for(sys, eu).ticket());
  const quietBefore = (await sys.deps.metrics.connectorQuietCalls.get()).values[0]?.value ?? 0;
  await emptyHold(ctx, holdClock, input);
  assert.equal(await getLastError(ctx, input.ticket), "NoOp");
  await emptyHold(ctx, holdClock, input);
  const quietAfter = (await sys.deps.metrics.connectorQuietCalls.get()).values[0]?.value ?? 0;
  assert.equal(quietAfter - quietBefore, 2, "getLastError and the re-ask were answered from memory");
});

test("an idle session makes no store call between wake-ups; a wake-up sends it to the store", async (t) => {
  const seen: ObservedQuery[] = [];
  const opened = await openTestStore({ onQuery: (query) => seen.push(query) });
  // The stamps are written by hand here, so that their timer cannot write while statements are counted.
  const activity = new ActivityStamps(3_600_000);
  const sys = await startSystem(null, { store: opened.store, config: CONFIG, activity });
  t.after(async () => {
    await sys.close();
    await opened.store.close();
    await opened.drop();
  });
  const holdClock = new FakeClock();
  const ctx = contextFor(sys, holdClock);
  const eu = await sys.connectEndUser({ companyName: "Idle Co" });
  const input = inputFor(eu, await SoapByHand.for(sys, eu).ticket());
  // The first hold looks at the store (the company file, the queue) and finds nothing to do.
  await emptyHold(ctx, holdClock, input);
  assert.equal(await getLastError(ctx, input.ticket), "NoOp");
  await activity.flush(sys.deps.db);

  seen.length = 0;
  for (let cycle = 0; cycle < 3; cycle++) {
    await sys.fakeClock?.advance(NOOP_PAUSE_MS);
    await emptyHold(ctx, holdClock, input);
    assert.equal(await getLastError(ctx, input.ticket), "NoOp");
  }
  assert.deepEqual(
    seen.map((q) => q.sql),
    [],
    "three idle cycles (re-ask, hold, getLastError) without a store call",
  );

  // The activity of those calls is written in one statement, and reads as the last call.
  await activity.flush(sys.deps.db);
  assert.equal(seen.length, 1, `one statement writes the stamps:\n${seen.map((q) => q.sql).join("\n")}`);
  assert.match(seen[0]?.sql ?? "", /update connector_sessions/);
  assert.match(seen[0]?.sql ?? "", /update connections/);
  const session = await opened.store.db
    .selectFrom("connector_sessions")
    .select(["last_activity_at"])
    .where("ticket_hash", "=", hashSecret(input.ticket))
    .executeTakeFirstOrThrow();
  const connection = await opened.store.db
    .selectFrom("connections")
    .select(["last_seen_at"])
    .where("id", "=", eu.connectionId)
    .executeTakeFirstOrThrow();
  assert.equal(session.last_activity_at.getTime(), sys.clock.now());
  assert.equal(connection.last_seen_at?.getTime(), sys.clock.now());

  // A wake-up on the connection (nothing queued: a neighbour's session news, say) makes the
  // held call look at the store, and the next re-ask too until a look finds nothing again.
  seen.length = 0;
  let result: string | undefined;
  const held = sendRequestXML(ctx, input, new AbortController().signal).then((r) => (result = r));
  await holdClock.untilSleepers(1);
  assert.equal(seen.length, 0, "the quiet re-ask holds without a store call");
  await sys.deps.store.notifier.notify(connectionChannel(eu.connectionId));
  // The woken call looks at the store (the claim finds nothing) and waits again on the hold clock.
  while (!seen.some((q) => /with recovery as/.test(q.sql))) await settle();
  await holdClock.untilSleepers(1);
  assert.equal(result, undefined, "nothing to hand over: still held");
  await holdClock.advance(HOLD_MS);
  assert.equal(await held, "");

  // A request submitted while the session is quiet is handed over by the held call.
  const next = sendRequestXML(ctx, input, new AbortController().signal);
  await holdClock.untilSleepers(1);
  const queued = await sys.call("POST", `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`, {
    body: `<?xml version="1.0"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError"><CompanyQueryRq/></QBXMLMsgsRq></QBXML>`,
    headers: { prefer: "respond-async" },
  });
  assert.equal(queued.status, 202, await queued.clone().text());
  assert.match(await next, /CompanyQueryRq/);
});

test("a quiet re-ask that ends on its hold timer waits on its connection once, and leaves no waiter", async (t) => {
  const sys = await startSystem(t, { config: CONFIG });
  const holdClock = new FakeClock();
  const ctx = contextFor(sys, holdClock);
  const eu = await sys.connectEndUser({ companyName: "One Wait Co" });
  const input = inputFor(eu, await SoapByHand.for(sys, eu).ticket());
  await emptyHold(ctx, holdClock, input);
  assert.equal(await getLastError(ctx, input.ticket), "NoOp");
  const notifier = sys.deps.store.notifier;
  const waits = t.mock.method(notifier, "wait");
  const listenersBefore = waiterCount(notifier);
  // The re-ask is memory: it waits once, on the hold clock and the connection's channel, and when
  // the hold timer ends that wait it answers "" without setting up another one (decision 0030).
  await emptyHold(ctx, holdClock, input);
  assert.equal(waits.mock.callCount(), 1, "one wait on the connection per quiet hold");
  assert.equal(holdClock.sleeperCount, 0, "no hold timer left behind");
  assert.equal(waiterCount(notifier), listenersBefore, "no listener left behind");
  assert.equal(await getLastError(ctx, input.ticket), "NoOp");
});

/** Listeners registered on the in-process notifier (the tracked session's own listener included). */
function waiterCount(notifier: object): number {
  return (notifier as { waiterCount?: number }).waiterCount ?? 0;
}
