import assert from "node:assert/strict";
import { test } from "node:test";
import { LocalNotifier } from "../store/notifier.ts";
import { findRequestById, type RequestRow } from "../store/requests.ts";
import { bearer, buildTestApp, type TestApp } from "../testing/harness.ts";
import { connectionOf, queueRequest, type QueueTarget } from "../testing/queue.ts";
import { connectionChannel, completeFromAnswer, nextWork, requestChannel } from "./engine.ts";
import { CallerWatch } from "./request-watch.ts";

/**
 * A caller waiting for a Request (a sync call, a long poll) listens before it reads the row: a
 * request that settles between the read and the wait must end the wait at once. Every test here runs
 * on a fake clock that never moves, so a missed wake-up would wait forever; each is bounded in real
 * time instead.
 */
const ANSWER = {
  responseXml: `<?xml version="1.0"?><QBXML><QBXMLMsgsRs><CustomerAddRs requestID="1" statusCode="0" statusSeverity="Info" statusMessage="Status OK"><CustomerRet><ListID>80000001-1</ListID><Name>Watch Co</Name></CustomerRet></CustomerAddRs></QBXMLMsgsRs></QBXML>`,
  hresult: "",
  message: "",
};

async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms of real time`)), ms);
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

const ADD = {
  xml: `<?xml version="1.0"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError"><CustomerAddRq><CustomerAdd><Name>Watch Co</Name></CustomerAdd></CustomerAddRq></QBXMLMsgsRq></QBXML>`,
  targets: [],
};

/** Hands the connection's next request to a connector and answers it, as the connector endpoint would. */
async function handOverAndAnswer(h: TestApp, target: QueueTarget): Promise<RequestRow> {
  const work = await nextWork(h.deps, target.connectionId, target.ticketHash, "16.0");
  assert.equal(work?.kind, "request");
  const sent = work?.kind === "request" ? await findRequestById(h.deps.db, work.rows[0]?.id ?? "") : null;
  assert.ok(sent);
  const done = await completeFromAnswer(h.deps, sent, ANSWER, target.ticketHash);
  assert.equal(done?.status, "succeeded");
  return done;
}

async function online(h: TestApp, target: QueueTarget): Promise<void> {
  await h.deps.db
    .updateTable("connections")
    .set({ status: "online", last_seen_at: new Date(h.clock.now()) })
    .where("id", "=", target.connectionId)
    .execute();
}

test("a sync caller attached by Idempotency-Key to a request that settles while it attaches gets the answer at once", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  await online(h, target);
  const call = (prefer?: string) =>
    h.app.inject({
      method: "POST",
      url: `/v1/end-users/${target.endUserId}/passthrough/ledger_desktop`,
      headers: {
        ...bearer(h.project.keys.secretLive),
        "content-type": "application/xml",
        "idempotency-key": "watch-1",
        ...(prefer ? { prefer } : {}),
      },
      payload: "<CustomerAddRq><CustomerAdd><Name>Watch Co</Name></CustomerAdd></CustomerAddRq>",
    });
  const accepted = await call("respond-async");
  assert.equal(accepted.statusCode, 202, accepted.body);
  const requestId = accepted.json<{ id: string }>().id;

  // The second caller attaches to the first request, reads it (not settled), and then wakes the
  // connection: the connector answers right then, before the caller has started to wait.
  const notifier = h.deps.store.notifier;
  const notify = notifier.notify.bind(notifier);
  let answeredDuringAttach = false;
  notifier.notify = async (channel, payload) => {
    if (channel === connectionChannel(target.connectionId) && !answeredDuringAttach) {
      answeredDuringAttach = true;
      await handOverAndAnswer(h, target);
    }
    return notify(channel, payload);
  };
  const replay = await within(5000, "the attached sync caller", call());
  assert.ok(answeredDuringAttach, "the request settled while the caller attached");
  assert.equal(replay.statusCode, 200, replay.body);
  assert.match(replay.body, /<CustomerAddRs [^>]*statusCode="0"/);
  assert.equal(replay.headers["svc-request-id"], requestId, "the caller got the earlier request's answer");
});

test("a watch catches a settle that happened after it started listening and before the wait", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  const id = await queueRequest(h, target, { write: ADD });
  const stale = await findRequestById(h.deps.db, id);
  assert.equal(stale?.status, "queued");
  assert.ok(stale);

  const watch = new CallerWatch(h.deps);
  watch.watch(id);
  await handOverAndAnswer(h, target);
  const settled = await within(5000, "the watch", watch.until(stale, h.clock.now() + 60_000));
  watch.close();
  assert.equal(settled.status, "succeeded");
});

test("a wake-up without the row (another instance settled it) makes the watch read the row back", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  const id = await queueRequest(h, target, { write: ADD });
  const stale = await findRequestById(h.deps.db, id);
  assert.ok(stale);

  const watch = new CallerWatch(h.deps);
  watch.watch(id);
  const waiting = watch.until(stale, h.clock.now() + 60_000);
  // Another instance completes the request: here only its wake-up, carrying nothing, arrives.
  const notifier = h.deps.store.notifier;
  const notify = notifier.notify.bind(notifier);
  notifier.notify = async (channel, payload) =>
    notify(channel, channel === requestChannel(id) ? undefined : payload);
  await handOverAndAnswer(h, target);
  const settled = await within(5000, "the watch", waiting);
  watch.close();
  assert.equal(settled.status, "succeeded");
});

test("a watch ends at its deadline on the service clock with the latest row, and leaves no listener", async (t) => {
  const h = await buildTestApp(t);
  const clock = h.fakeClock;
  assert.ok(clock);
  const notifier = h.deps.store.notifier;
  assert.ok(notifier instanceof LocalNotifier);
  const target = await connectionOf(h);
  const id = await queueRequest(h, target);
  const row = await findRequestById(h.deps.db, id);
  assert.ok(row);
  const idle = notifier.waiterCount;

  const watch = new CallerWatch(h.deps);
  watch.watch(id);
  assert.equal(notifier.waiterCount, idle + 1);
  let ended = false;
  const waiting = watch.until(row, clock.now() + 30_000).finally(() => {
    ended = true;
  });
  await clock.advance(29_999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(ended, false, "still waiting a millisecond before its deadline");
  await clock.advance(1);
  const last = await within(5000, "the watch", waiting);
  assert.equal(last.status, "queued");
  watch.close();
  assert.equal(notifier.waiterCount, idle, "closing the watch removes its listener");
});
