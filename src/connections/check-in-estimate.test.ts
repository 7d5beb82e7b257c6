import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CHECK_INS_KEPT, estimateCheckIn, withCheckIn, type CheckInHistory } from "./check-in-estimate.ts";

/**
 * The expected-check-in rule (check-in-estimate.ts) on made-up schedules: regular, jittery, drifting
 * away from the configured interval, with a missed run, stopped, and too short to read.
 */
const NOW = Date.parse("2026-03-02T09:00:00.000Z");
const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** Check-ins `gaps` apart (oldest gap last), the newest `sinceLast` before NOW; newest first. */
function schedule(sinceLast: number, gaps: readonly number[]): number[] {
  const times = [NOW - sinceLast];
  for (const gap of gaps) times.push(times[times.length - 1]! - gap);
  return times;
}

function estimate(checkInsMs: number[], overrides: Partial<CheckInHistory> = {}) {
  return estimateCheckIn({
    nowMs: NOW,
    checkInsMs,
    sessionOpen: false,
    configuredIntervalMs: MINUTE,
    ...overrides,
  });
}

const iso = (ms: number): string => new Date(ms).toISOString();

void describe("expected check-in", () => {
  void it("a regular schedule: the last check-in plus the interval, high confidence", () => {
    const found = estimate(schedule(20 * SECOND, [5 * MINUTE, 5 * MINUTE, 5 * MINUTE, 5 * MINUTE]));
    assert.equal(found.basis, "observed_schedule");
    assert.equal(found.confidence, "high");
    assert.equal(found.expectedAt, iso(NOW - 20 * SECOND + 5 * MINUTE));
    assert.equal(found.intervalSeconds, 300);
    assert.equal(found.toleranceSeconds, 75, "a quarter of the interval when the schedule never varies");
    assert.equal(found.gapsObserved, 4);
    assert.equal(found.overdueSeconds, null);
  });

  void it("the connector's own interval wins over the configured one (a schedule that drifted)", () => {
    // The service asks for one minute; this connector runs every 7 minutes, give or take.
    const gaps = [7 * MINUTE + 10 * SECOND, 7 * MINUTE - 5 * SECOND, 7 * MINUTE, 7 * MINUTE + 20 * SECOND];
    const found = estimate(schedule(MINUTE, gaps));
    assert.equal(found.basis, "observed_schedule");
    assert.equal(found.intervalSeconds, 425, "the median of 415, 420, 430 and 440 seconds");
    assert.equal(found.expectedAt, iso(NOW - MINUTE + 425 * SECOND));
    assert.equal(found.confidence, "high", "10 s of spread on 7 minutes");
  });

  void it("a jittery schedule is medium or low confidence by its spread, with a wider tolerance", () => {
    const medium = estimate(schedule(0, [60 * SECOND, 75 * SECOND, 50 * SECOND, 68 * SECOND, 55 * SECOND]));
    assert.equal(medium.confidence, "medium");
    assert.equal(medium.intervalSeconds, 60);
    assert.equal(medium.toleranceSeconds, 24, "three spreads of 8 s");
    const low = estimate(schedule(0, [20 * SECOND, 90 * SECOND, 40 * SECOND, 150 * SECOND, 60 * SECOND]));
    assert.equal(low.confidence, "low");
  });

  void it("one missed run or one extra manual run does not move the interval", () => {
    const missed = estimate(schedule(0, [MINUTE, 2 * MINUTE, MINUTE, MINUTE, MINUTE]));
    assert.equal(missed.intervalSeconds, 60);
    assert.equal(missed.confidence, "high");
    const extra = estimate(schedule(0, [MINUTE, 5 * SECOND, MINUTE, MINUTE, MINUTE]));
    assert.equal(extra.intervalSeconds, 60);
  });

  void it("a few seconds late is still on schedule: the expected time is in the past, not a failure", () => {
    const late = estimate(
      schedule(5 * MINUTE + 30 * SECOND, [5 * MINUTE, 5 * MINUTE, 5 * MINUTE, 5 * MINUTE]),
    );
    assert.equal(late.basis, "observed_schedule");
    assert.equal(late.expectedAt, iso(NOW - 30 * SECOND));
  });

  void it("a stopped schedule promises nothing and says how overdue it is", () => {
    const stopped = estimate(schedule(40 * MINUTE, [5 * MINUTE, 5 * MINUTE, 5 * MINUTE, 5 * MINUTE]));
    assert.equal(stopped.basis, "schedule_stopped");
    assert.equal(stopped.expectedAt, null);
    assert.equal(stopped.confidence, "none");
    assert.equal(stopped.overdueSeconds, 40 * 60 - 300 - 75);
    // Just inside the tolerance it is still expected.
    const edge = estimate(
      schedule(5 * MINUTE + 75 * SECOND, [5 * MINUTE, 5 * MINUTE, 5 * MINUTE, 5 * MINUTE]),
    );
    assert.equal(edge.basis, "observed_schedule");
    const past = estimate(
      schedule(5 * MINUTE + 76 * SECOND, [5 * MINUTE, 5 * MINUTE, 5 * MINUTE, 5 * MINUTE]),
    );
    assert.equal(past.basis, "schedule_stopped");
    assert.equal(past.overdueSeconds, 1);
  });

  void it("too few check-ins: the configured interval from the last check-in, low confidence", () => {
    const one = estimate([NOW - 10 * SECOND]);
    assert.equal(one.basis, "configured_interval");
    assert.equal(one.confidence, "low");
    assert.equal(one.expectedAt, iso(NOW + 50 * SECOND));
    assert.equal(one.toleranceSeconds, 15);
    const twoCheckIns = estimate(schedule(0, [3 * MINUTE]));
    assert.equal(twoCheckIns.basis, "configured_interval", "one gap is not a schedule");
    assert.equal(estimate([NOW - 10 * MINUTE]).basis, "schedule_stopped");
  });

  void it("no check-in: no estimate; an open session: now", () => {
    const none = estimate([]);
    assert.deepEqual([none.basis, none.expectedAt, none.confidence], ["no_check_in", null, "none"]);
    const open = estimate(schedule(40 * MINUTE, [MINUTE, MINUTE, MINUTE]), { sessionOpen: true });
    assert.deepEqual([open.basis, open.expectedAt, open.confidence], ["session_open", iso(NOW), "high"]);
  });

  void it("the kept list: newest first, bounded, a clock step backwards drops the later entries", () => {
    let list: number[] = [];
    for (let i = 0; i < CHECK_INS_KEPT + 5; i += 1) list = withCheckIn(list, NOW + i * MINUTE);
    assert.equal(list.length, CHECK_INS_KEPT);
    assert.equal(list[0], NOW + (CHECK_INS_KEPT + 4) * MINUTE);
    assert.ok(list.every((at, i) => i === 0 || at < list[i - 1]!));
    assert.deepEqual(withCheckIn([NOW + MINUTE, NOW - MINUTE], NOW), [NOW, NOW - MINUTE]);
  });
});
