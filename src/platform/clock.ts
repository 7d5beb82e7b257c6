/**
 * The injectable clock: the only place where wall time and timers are read. Every time rule in the
 * service (sync timeouts, queue TTL, idle windows, ticket expiry, retention) goes through a Clock so
 * that tests can drive time with {@link FakeClock} instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` of clock time, or early (without error) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
    }),
};

interface FakeTimer {
  dueAt: number;
  resolve: () => void;
}

/**
 * A clock that only moves when told to. `advance` fires every sleeper that falls due, in order.
 * `untilSleepers(n)` lets a test wait until the code under test has started waiting.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers = new Set<FakeTimer>();
  private sleeperWatchers: Array<() => void> = [];

  constructor(startMs = Date.UTC(2026, 0, 15, 12, 0, 0)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer: FakeTimer = {
        dueAt: this.current + Math.max(0, ms),
        resolve: () => {
          this.timers.delete(timer);
          signal?.removeEventListener("abort", timer.resolve);
          resolve();
        },
      };
      this.timers.add(timer);
      signal?.addEventListener("abort", timer.resolve, { once: true });
      for (const watcher of this.sleeperWatchers.splice(0)) watcher();
    });
  }

  /** Number of pending sleepers. */
  get sleeperCount(): number {
    return this.timers.size;
  }

  /** When the earliest pending sleeper falls due (clock time), or undefined with none pending. */
  get nextDueAt(): number | undefined {
    let earliest: number | undefined;
    for (const timer of this.timers)
      if (earliest === undefined || timer.dueAt < earliest) earliest = timer.dueAt;
    return earliest;
  }

  /** Resolves once at least `count` sleepers are pending (checks on each new sleeper). */
  async untilSleepers(count = 1): Promise<void> {
    while (this.timers.size < count) {
      await new Promise<void>((resolve) => this.sleeperWatchers.push(resolve));
    }
  }

  /** Moves time forward by `ms` and wakes every sleeper that is due. */
  async advance(ms: number): Promise<void> {
    this.current += ms;
    const due = [...this.timers].filter((t) => t.dueAt <= this.current).sort((a, b) => a.dueAt - b.dueAt);
    for (const timer of due) timer.resolve();
    // Let the woken code run its continuations before the test goes on.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
