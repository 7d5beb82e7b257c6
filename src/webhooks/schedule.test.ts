import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ATTEMPTS_MAX,
  DEFAULT_RETRY_SCHEDULE_MS,
  JITTER_FRACTION,
  RETRY_AFTER_MAX_MS,
  nextAttemptAt,
  parseRetryAfter,
  parseSchedule,
} from "./schedule.ts";

const T = 1_000_000_000;

test("the published schedule has 8 attempts: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
  assert.equal(ATTEMPTS_MAX, 8);
  assert.deepEqual(DEFAULT_RETRY_SCHEDULE_MS, [0, 5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
});

test("after attempt n fails, attempt n+1 follows the schedule; after the 8th there is none", () => {
  for (let made = 1; made < 8; made++) {
    assert.equal(
      nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, made, T, 0.5, null),
      T + (DEFAULT_RETRY_SCHEDULE_MS[made] ?? NaN),
    );
  }
  assert.equal(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 8, T, 0.5, null), null);
  assert.equal(nextAttemptAt([0, 1000], 2, T, 0.5, null), null, "a shorter schedule ends earlier");
});

test("each delay is jittered within ±10 %", () => {
  const delay = DEFAULT_RETRY_SCHEDULE_MS[2] ?? 0;
  assert.equal(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 2, T, 0, null), T + delay * (1 - JITTER_FRACTION));
  assert.equal(
    nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 2, T, 0.999999, null),
    T + Math.round(delay * (1 - JITTER_FRACTION + 2 * JITTER_FRACTION * 0.999999)),
  );
  const spread = new Set(
    [0.1, 0.3, 0.7, 0.9].map((r) => nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 2, T, r, null)),
  );
  assert.equal(spread.size, 4, "different random draws give different times");
});

test("Retry-After postpones the next attempt, never brings it forward, and is capped at 6 hours", () => {
  const scheduled = T + 300_000;
  assert.equal(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 2, T, 0.5, 3_600_000), T + 3_600_000);
  assert.equal(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 2, T, 0.5, 1_000), scheduled);
  assert.equal(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 2, T, 0.5, 30 * 86_400_000), T + RETRY_AFTER_MAX_MS);
  assert.equal(RETRY_AFTER_MAX_MS, 6 * 3_600_000);
  assert.equal(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_MS, 8, T, 0.5, 1_000), null, "no attempt is added");
});

test("Retry-After is read as seconds or as an HTTP date", () => {
  assert.equal(parseRetryAfter("120", T), 120_000);
  assert.equal(parseRetryAfter(["7"], T), 7_000);
  assert.equal(parseRetryAfter(new Date(T + 90_000).toUTCString(), T), 90_000);
  assert.equal(parseRetryAfter(new Date(T - 90_000).toUTCString(), T), 0);
  assert.equal(parseRetryAfter(undefined, T), null);
  assert.equal(parseRetryAfter("soon", T), null);
  assert.equal(parseRetryAfter("-5", T), null);
});

test("a configured schedule lists 1 to 8 non-negative integers", () => {
  assert.deepEqual(parseSchedule("0, 100,200"), [0, 100, 200]);
  for (const bad of ["", "0,1,2,3,4,5,6,7,8", "0,-1", "0,1.5", "0,x"])
    assert.throws(() => parseSchedule(bad), /WEBHOOK_RETRY_SCHEDULE_MS/, bad);
});
