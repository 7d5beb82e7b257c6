/**
 * When will the connector check in next? A pure function of the check-ins the connector endpoint
 * recorded (`connections.recent_check_ins`, newest first), the open session and the configured
 * interval, so every rule is tested without a clock or a database (check-in-estimate.test.ts).
 *
 * The rule (docs/decisions/0025-expected-check-in.md):
 * 1. A session is open: the connector is here now (`session_open`, high confidence).
 * 2. No check-in recorded: nothing to go on (`no_check_in`, no estimate).
 * 3. The connector's own schedule, when at least {@link MIN_GAPS} gaps between check-ins are known:
 *    the interval is the median gap (robust to a missed run or an extra manual run), its spread the
 *    median absolute deviation, and the next check-in is the last one plus the interval
 *    (`observed_schedule`). Otherwise the interval the service asks of the connector, from the last
 *    check-in (`configured_interval`, low confidence): a connector may run on another schedule.
 * 4. Late by more than the tolerance (the larger of three spreads, a quarter of the interval and
 *    {@link MIN_TOLERANCE_MS}): the schedule has stopped (the computer, the connector or its
 *    schedule changed) and no time is promised (`schedule_stopped`, `overdueSeconds`).
 * 5. Confidence: high with {@link HIGH_GAPS} gaps or more that vary by at most a tenth of the
 *    interval, medium within three tenths, low otherwise.
 */
export const CHECK_IN_BASES = [
  "session_open",
  "observed_schedule",
  "configured_interval",
  "schedule_stopped",
  "no_check_in",
] as const;
export const CHECK_IN_CONFIDENCES = ["high", "medium", "low", "none"] as const;

export interface CheckInEstimate {
  /** When the next check-in is expected; null when there is no basis for one. */
  expectedAt: string | null;
  confidence: (typeof CHECK_IN_CONFIDENCES)[number];
  basis: (typeof CHECK_IN_BASES)[number];
  /** The interval the estimate uses (observed median or configured); null without one. */
  intervalSeconds: number | null;
  /** How early or late a check-in may come and still be on schedule. */
  toleranceSeconds: number | null;
  /** Gaps between recorded check-ins the estimate rests on. */
  gapsObserved: number;
  /** With `schedule_stopped`: how long past the expected time (plus tolerance) the connector is. */
  overdueSeconds: number | null;
}

export interface CheckInHistory {
  nowMs: number;
  /** Recorded check-ins (epoch ms), newest first. */
  checkInsMs: readonly number[];
  sessionOpen: boolean;
  configuredIntervalMs: number;
}

/** Check-ins a connection keeps for the estimate (the store caps its list at this length). */
export const CHECK_INS_KEPT = 12;
const MIN_GAPS = 2;
const HIGH_GAPS = 4;
const MIN_TOLERANCE_MS = 5_000;

const seconds = (ms: number): number => Math.round(ms / 1000);

export function estimateCheckIn(history: CheckInHistory): CheckInEstimate {
  const { nowMs, checkInsMs, sessionOpen, configuredIntervalMs } = history;
  const gaps = gapsOf(checkInsMs);
  if (sessionOpen)
    return {
      expectedAt: new Date(nowMs).toISOString(),
      confidence: "high",
      basis: "session_open",
      intervalSeconds: gaps.length >= MIN_GAPS ? seconds(median(gaps)) : null,
      toleranceSeconds: 0,
      gapsObserved: gaps.length,
      overdueSeconds: null,
    };
  const last = checkInsMs[0];
  if (last === undefined)
    return {
      expectedAt: null,
      confidence: "none",
      basis: "no_check_in",
      intervalSeconds: null,
      toleranceSeconds: null,
      gapsObserved: 0,
      overdueSeconds: null,
    };
  const observed = gaps.length >= MIN_GAPS;
  const interval = observed ? median(gaps) : configuredIntervalMs;
  const spread = observed ? median(gaps.map((gap) => Math.abs(gap - interval))) : 0;
  const tolerance = Math.max(3 * spread, interval / 4, MIN_TOLERANCE_MS);
  const expected = last + interval;
  const overdue = nowMs - (expected + tolerance);
  if (overdue > 0)
    return {
      expectedAt: null,
      confidence: "none",
      basis: "schedule_stopped",
      intervalSeconds: seconds(interval),
      toleranceSeconds: seconds(tolerance),
      gapsObserved: gaps.length,
      overdueSeconds: seconds(overdue),
    };
  return {
    expectedAt: new Date(expected).toISOString(),
    confidence: observed ? confidenceOf(gaps.length, spread / interval) : "low",
    basis: observed ? "observed_schedule" : "configured_interval",
    intervalSeconds: seconds(interval),
    toleranceSeconds: seconds(tolerance),
    gapsObserved: gaps.length,
    overdueSeconds: null,
  };
}

function confidenceOf(gapCount: number, relativeSpread: number): CheckInEstimate["confidence"] {
  if (gapCount >= HIGH_GAPS && relativeSpread <= 0.1) return "high";
  if (relativeSpread <= 0.3) return "medium";
  return "low";
}

/** Positive gaps between consecutive check-ins (newest first in, any order out). */
function gapsOf(checkInsMs: readonly number[]): number[] {
  return checkInsMs.slice(1).flatMap((older, i) => {
    const gap = (checkInsMs[i] ?? older) - older;
    return gap > 0 ? [gap] : [];
  });
}

/** The median of a non-empty list. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const upper = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const lower = sorted[Math.ceil(sorted.length / 2) - 1] ?? upper;
  return (lower + upper) / 2;
}

/** The check-in list after one more check-in at `nowMs` (newest first, at most {@link CHECK_INS_KEPT}). */
export function withCheckIn(checkInsMs: readonly number[], nowMs: number): number[] {
  return [nowMs, ...checkInsMs.filter((at) => at < nowMs)].slice(0, CHECK_INS_KEPT);
}
