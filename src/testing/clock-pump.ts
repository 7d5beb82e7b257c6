import type { FakeClock } from "../platform/clock.ts";

/**
 * Runs `work` on a {@link FakeClock} that only its sleepers use (a simulated end user's latency
 * clock): whenever a sleeper is pending, the clock moves to the earliest one's due time, exactly,
 * so the time that passes is the sum of the delays the code under test took, never more; while
 * none is pending (real I/O in flight), it waits for the next sleeper or the end of `work`.
 */
export async function pumpClock<T>(clock: FakeClock, work: Promise<T>): Promise<T> {
  let settled = false;
  const done = work.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  while (!settled) {
    const dueAt = clock.nextDueAt;
    if (dueAt === undefined) await Promise.race([done, clock.untilSleepers(1)]);
    else await clock.advance(Math.max(0, dueAt - clock.now()));
  }
  return work;
}
