import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { connectionChannel } from "../../requests/engine.ts";
import type { ConnectorSessionRow } from "../../store/connector-sessions.ts";
import { LocalNotifier } from "../../store/notifier.ts";
import {
  SessionMemory,
  afterWait,
  holdEnding,
  holdStarts,
  isQuiet,
  looked,
  looksNow,
  markBusy,
  markQuiet,
  serviceClockWaitMs,
} from "./memory.ts";

/**
 * What an instance keeps in memory of its connector sessions, and the hold's decisions on it
 * (decisions 0023, 0027, 0030), without a store: the steps are pure, and the memory needs only a
 * notifier.
 */
function session(ticketHash: string, connectionId = "conn_1"): ConnectorSessionRow {
  const at = new Date(0);
  return {
    ticket_hash: ticketHash,
    connection_id: connectionId,
    phase: "ready",
    state: "open",
    last_error: null,
    recovery_message_set_id: null,
    connection_errors: 0,
    company_file_path: null,
    xml_version: "16.0",
    created_at: at,
    last_activity_at: at,
    last_work_at: at,
    closed_at: null,
    instance_id: "inst_here",
    ledger_answered_at: at,
    personal_data_allowed: null,
  };
}

void describe("a remembered session is quiet until its connection is woken", () => {
  void it("is quiet only at the wake-up count of the look that found nothing, and while the notifier delivers", () => {
    const entry = { changes: 0, quietAt: null as number | null };
    assert.equal(isQuiet(entry, true), false, "never looked at");
    markQuiet(entry, 0);
    assert.equal(isQuiet(entry, true), true);
    assert.equal(isQuiet(entry, false), false, "a notifier that cannot deliver proves nothing");
    entry.changes = 1;
    assert.equal(isQuiet(entry, true), false, "woken since");
    markQuiet(entry, 1);
    markBusy(entry);
    assert.equal(isQuiet(entry, true), false, "the last look found something");
  });

  void it("counts wake-ups on its connection's channel from when it is tracked, and stops listening when forgotten", async () => {
    const notifier = new LocalNotifier();
    const memory = new SessionMemory(notifier);
    const entry = memory.track(session("t1"));
    markQuiet(entry, entry.changes);
    assert.equal(memory.quiet("t1"), entry);
    await notifier.notify(connectionChannel("conn_1"));
    assert.equal(entry.changes, 1);
    assert.equal(memory.quiet("t1"), null, "woken: the next call looks at the store");
    memory.forget("t1");
    await notifier.notify(connectionChannel("conn_1"));
    assert.equal(entry.changes, 1, "no listener left");
    assert.equal(memory.size, 0);
  });

  void it("keeps one session per connection: a newer one replaces the older", () => {
    const memory = new SessionMemory(new LocalNotifier());
    memory.track(session("old"));
    memory.track(session("new"));
    memory.track(session("other", "conn_2"));
    assert.equal(memory.size, 2);
    assert.equal(memory.quiet("old"), null);
  });

  void it("drops sessions no call used for a while, on real time", () => {
    let now = 1000;
    const memory = new SessionMemory(new LocalNotifier(), () => now);
    memory.track(session("used"));
    memory.track(session("idle", "conn_2"));
    now = 5000;
    memory.track(session("used"));
    memory.prune(3000);
    assert.equal(memory.size, 1);
  });

  void it("hands an answered session over once, and forgets it with the session", () => {
    const memory = new SessionMemory(new LocalNotifier());
    memory.noteAnswered(session("t1"));
    assert.equal(memory.takeAnswered("t1")?.ticket_hash, "t1");
    assert.equal(memory.takeAnswered("t1"), null, "once");
    memory.noteAnswered(session("t2"));
    memory.forget("t2");
    assert.equal(memory.takeAnswered("t2"), null);
  });
});

void describe("the hold's steps", () => {
  void it("a first call looks; a quiet re-ask looks only when its session is no longer quiet", () => {
    assert.equal(looksNow(holdStarts(true), true), true);
    assert.equal(looksNow(holdStarts(false), true), false);
    assert.equal(looksNow(holdStarts(false), false), true);
    assert.deepEqual(looked({ mustLook: true, unread: true, timerOnly: false }), {
      mustLook: false,
      unread: false,
      timerOnly: false,
    });
  });

  void it("after a wait: a hang-up ends it, a timer alone may end the hold without a look, a wake-up looks with the row unread", () => {
    const flags = holdStarts(false);
    assert.deepEqual(afterWait(flags, true, true), ["hung_up", flags]);
    assert.deepEqual(afterWait(flags, true, false), ["hung_up", flags]);
    assert.deepEqual(afterWait(flags, false, true), ["timer_only", { ...flags, timerOnly: true }]);
    assert.deepEqual(afterWait(flags, false, false), ["woken", { ...flags, unread: true }]);
  });

  void it("ends with the closing query when idle, with NoOp when the hold's time is up or the service stops", () => {
    assert.equal(holdEnding(0, 10_000, false), "close_idle");
    assert.equal(holdEnding(-1, -1, true), "close_idle", "the idle close comes first");
    assert.equal(holdEnding(1, 0, false), "end");
    assert.equal(holdEnding(1, 10_000, true), "end");
    assert.equal(holdEnding(1, 1, false), null);
  });

  void it("waits on the service clock until the idle close, or until a spaced write may go", () => {
    assert.equal(serviceClockWaitMs(300_000, 1000, null), 300_000);
    assert.equal(serviceClockWaitMs(300_000, 1000, 1600), 600);
    assert.equal(serviceClockWaitMs(500, 1000, 9000), 500);
  });
});
