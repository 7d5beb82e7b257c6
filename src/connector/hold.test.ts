import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { SoapByHand } from "../testing/soap-by-hand.ts";
import { startSystem } from "../testing/system.ts";
import { SessionMemory } from "./session/memory.ts";
import { HOLD_CLOCK, sendRequestXML, type ConnectorContext } from "./session.ts";

/**
 * Held `sendRequestXML` calls leave the shared shutdown signal alone (issue 8, P4): with thousands
 * of idle sessions, a listener added and removed on one signal at every hold cost time in
 * proportion to their number (N²) and raised MaxListenersExceededWarning. Held calls are kept in a
 * set instead, and shutdown aborts each of them.
 */
test("held calls add no listener to the shared shutdown signal and all return at shutdown", async (t) => {
  const sys = await startSystem(t, { config: { CONNECTOR_HOLD_MS: "60000", RATE_LIMIT_MAX: "1000000" } });
  const shutdown = new AbortController();
  const ctx: ConnectorContext = {
    deps: sys.deps,
    shutdown: shutdown.signal,
    held: new Set(),
    memory: new SessionMemory(sys.deps.store.notifier),
    holdClock: HOLD_CLOCK,
  };
  const held: Promise<string>[] = [];
  const before = sys.fakeClock?.sleeperCount ?? 0;
  for (let i = 0; i < 5; i++) {
    const eu = await sys.connectEndUser({ companyName: `Held Co ${i}` });
    const ticket = await SoapByHand.for(sys, eu).ticket();
    const input = {
      ticket,
      hcp: "",
      companyFileName: eu.companyFilePath,
      country: "US",
      major: "16",
      minor: "0",
    };
    held.push(sendRequestXML(ctx, input, new AbortController().signal));
  }
  // Each held call sleeps on the service clock until its idle window ends.
  await sys.fakeClock?.untilSleepers(before + 5);
  assert.equal(ctx.held.size, 5, "every held call is registered");
  assert.equal(getEventListeners(shutdown.signal, "abort").length, 0, "none listens on the shared signal");
  shutdown.abort();
  for (const call of ctx.held) call.abort();
  assert.deepEqual(await Promise.all(held), ["", "", "", "", ""]);
  assert.equal(ctx.held.size, 0, "finished calls are forgotten");
});
