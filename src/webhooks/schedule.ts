/**
 * The delivery retry policy, as data (spec: Events, Limits; house style habit 8). Published in the
 * README:
 *
 * | attempt | after the previous failure |
 * |---|---|
 * | 1 | at once |
 * | 2 | 5 seconds |
 * | 3 | 5 minutes |
 * | 4 | 30 minutes |
 * | 5 | 2 hours |
 * | 6 | 5 hours |
 * | 7 | 10 hours |
 * | 8 | 10 hours |
 *
 * Each delay is jittered by ±{@link JITTER_FRACTION} (so receivers that failed together do not get
 * their retries together); the whole schedule spans about 27.6 hours. A `Retry-After` on a failed
 * attempt (seconds or an HTTP date) postpones the next attempt to at least that moment, capped at
 * {@link RETRY_AFTER_MAX_MS}; it never brings an attempt forward. After the last attempt the
 * delivery is `failed` (dead-lettered; it can be resent).
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Spec: "Delivery attempts: 8". */
export const ATTEMPTS_MAX = 8;

/** Delays are multiplied by a random factor in [1 − JITTER_FRACTION, 1 + JITTER_FRACTION). */
export const JITTER_FRACTION = 0.1;

/** A receiver's `Retry-After` is honoured up to this far ahead (6 hours). */
export const RETRY_AFTER_MAX_MS = 6 * 3_600_000;

/** Spec: "An endpoint failing for 5 days is disabled automatically with `disabledReason`." */
export const AUTO_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** The `disabledReason` of an automatic disable. */
export const AUTO_DISABLED_REASON = "Every delivery attempt failed for 5 days.";

/** Spec: "Deliveries are stored 30 days." */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;

/**
 * How long the previous secret keeps signing after a rotation (24 hours): receivers have a day to
 * deploy the new secret while deliveries carry both signatures.
 */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;

/**
 * When to make the next attempt after attempt number `attemptsMade` failed, or null when it was the
 * last one. `random` is a number in [0, 1) (injected so tests can pin the jitter).
 */
export function nextAttemptAt(
  schedule: readonly number[],
  attemptsMade: number,
  failedAtMs: number,
  random: number,
  retryAfterMs: number | null,
): number | null {
  const delay = schedule[attemptsMade];
  if (delay === undefined || attemptsMade >= ATTEMPTS_MAX) return null;
  const jittered = Math.round(delay * (1 - JITTER_FRACTION + 2 * JITTER_FRACTION * random));
  const asked = retryAfterMs === null ? 0 : Math.min(Math.max(0, retryAfterMs), RETRY_AFTER_MAX_MS);
  return failedAtMs + Math.max(jittered, asked);
}

/**
 * A `Retry-After` header in milliseconds from `nowMs`: delta-seconds or an HTTP date. Null when
 * absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its day and month (RFC 9110 §5.6.7); anything else is not one.
  if (!/^[A-Za-z]{3},? /.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** Parses `WEBHOOK_RETRY_SCHEDULE_MS` (comma-separated delays, 1 to 8 entries, the first usually 0). */
export function parseSchedule(text: string): number[] {
  const delays = text.trim() === "" ? [] : text.split(",").map((part) => Number(part.trim()));
  if (
    delays.length < 1 ||
    delays.length > ATTEMPTS_MAX ||
    delays.some((d) => !Number.isInteger(d) || d < 0)
  ) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE_MS must list 1 to ${ATTEMPTS_MAX} non-negative integers`);
  }
  return delays;
}
