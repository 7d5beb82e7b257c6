import assert from "node:assert/strict";
import { test } from "node:test";
import { findRequestById } from "../store/requests.ts";
import { buildTestApp, type TestApp } from "../testing/harness.ts";
import { connectionOf, queueRequest, type QueueTarget } from "../testing/queue.ts";
import { completeFromAnswer, nextWork } from "./engine.ts";

/**
 * The service spaces its own consecutive writes to one record by more than a second (spec: common
 * record fields: the application changes a revision number at most once a second). The claim holds
 * such a write back, and the queue behind it, until a second after the previous write's answer, on
 * the injected clock; writes to other records are not held.
 */
const modOf = (id: string): { xml: string; targets: string[] } => ({
  xml: `<?xml version="1.0"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError"><CustomerModRq><CustomerMod><ListID>${id}</ListID><EditSequence>1</EditSequence></CustomerMod></CustomerModRq></QBXMLMsgsRq></QBXML>`,
  targets: [id],
});

const ANSWER = {
  responseXml: `<?xml version="1.0"?><QBXML><QBXMLMsgsRs><CustomerModRs requestID="1" statusCode="0" statusSeverity="Info" statusMessage="Status OK"/></QBXMLMsgsRs></QBXML>`,
  hresult: "",
  message: "",
};

async function handOut(h: TestApp, target: QueueTarget): Promise<string | { spacedUntil: number } | null> {
  const work = await nextWork(h.deps, target.connectionId, target.ticketHash, "16.0");
  if (work?.kind === "request") return work.rows.map((row) => row.id).join(",");
  if (work?.kind === "spaced") return { spacedUntil: work.untilMs };
  return null;
}

async function answer(h: TestApp, id: string): Promise<void> {
  const row = await findRequestById(h.deps.db, id);
  assert.ok(row);
  assert.ok(await completeFromAnswer(h.deps, row, ANSWER, row.ticket_hash ?? ""));
}

test("a second write to one record waits until more than a second after the first one's answer", async (t) => {
  const h = await buildTestApp(t);
  const clock = h.fakeClock;
  assert.ok(clock);
  assert.equal(h.deps.config.RECORD_WRITE_SPACING_MS, 1000, "the default spacing");
  const target = await connectionOf(h);
  const first = await queueRequest(h, target, { write: modOf("80000001-1") });
  const second = await queueRequest(h, target, { write: modOf("80000001-1") });
  assert.equal(await handOut(h, target), first);
  await clock.advance(300); // the application takes its time: the spacing counts from the answer
  await answer(h, first);
  const answeredAt = clock.now();
  assert.deepEqual(await handOut(h, target), { spacedUntil: answeredAt + 1001 });
  await clock.advance(1000);
  assert.deepEqual(
    await handOut(h, target),
    { spacedUntil: answeredAt + 1001 },
    "exactly a second is not more",
  );
  assert.equal((await findRequestById(h.deps.db, second))?.status, "queued");
  await clock.advance(1);
  assert.equal(await handOut(h, target), second);
});

test("writes to other records, reads and creates are not held back", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  const first = await queueRequest(h, target, { write: modOf("80000001-1") });
  const other = await queueRequest(h, target, { write: modOf("80000002-1") });
  const read = await queueRequest(h, target);
  const create = await queueRequest(h, target, { write: { xml: "<QBXML/>", targets: [] } });
  for (const id of [first, other, read, create]) {
    assert.equal(await handOut(h, target), id);
    await answer(h, id);
  }
});

test("the sweep forgets write stamps a minute old", async (t) => {
  const h = await buildTestApp(t);
  const clock = h.fakeClock;
  assert.ok(clock);
  const target = await connectionOf(h);
  const first = await queueRequest(h, target, { write: modOf("80000001-1") });
  assert.equal(await handOut(h, target), first);
  await answer(h, first);
  const { sweepOnce } = await import("./sweeper.ts");
  assert.equal((await sweepOnce(h.deps)).recordWritesDeleted, 0);
  await clock.advance(60_001);
  assert.equal((await sweepOnce(h.deps)).recordWritesDeleted, 1);
});
