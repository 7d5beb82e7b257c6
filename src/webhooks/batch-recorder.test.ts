import assert from "node:assert/strict";
import { test } from "node:test";
import type { AttemptResult } from "../store/webhook-dispatch.ts";
import { BatchRecorder } from "./batch-recorder.ts";

const result = (n: number): AttemptResult => ({
  deliveryId: `whd_${n}`,
  leaseToken: "lease",
  record: { attempt: 1, at: "", statusCode: 200, latencyMs: 1, responseExcerpt: null, error: null },
  status: "succeeded",
  nextAttemptAt: null,
  at: new Date(0),
});

test("results that arrive as I/O callbacks while a write runs form one batch, even when the store answers at once", async () => {
  const batches: string[][] = [];
  // An embedded store: the write resolves without yielding to I/O.
  const recorder = new BatchRecorder(async (batch) => {
    batches.push(batch.map((r) => r.deliveryId));
  });
  // Six attempts end in one turn of the event loop (their responses were read together).
  const recorded = await new Promise<Promise<void>[]>((resolve) => {
    const all: Promise<void>[] = [];
    for (let n = 1; n <= 6; n++) setImmediate(() => all.push(recorder.record(result(n))));
    setImmediate(() => resolve(all));
  });
  await Promise.all(recorded);
  assert.deepEqual(batches, [["whd_1", "whd_2", "whd_3", "whd_4", "whd_5", "whd_6"]]);
});

test("a failed write rejects its own results only; the next batch is written", async () => {
  let calls = 0;
  const recorder = new BatchRecorder(async () => {
    calls += 1;
    if (calls === 1) throw new Error("store unavailable");
  });
  const first = recorder.record(result(1));
  await assert.rejects(first, /store unavailable/);
  await recorder.record(result(2));
  assert.equal(calls, 2);
});
