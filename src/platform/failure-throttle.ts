import type { Clock } from "./clock.ts";

/**
 * Failed attempts per client address in a fixed window (issue 23, decision 0031): once an address
 * has failed `limit` times within `windowMs` of its first failure, it is turned away until that
 * window ends, before any of its calls is read. Used for the connector's logins and tickets and
 * for guessed setup links: the secrets are long and random, so the point is not guessing odds but
 * the cost each try has (a body read, a store read).
 *
 * On the injected clock, so the window is tested by moving time, not by sleeping (which the
 * libraries that count by `Date.now()` would need). Per instance: N instances admit N × `limit`.
 * At most `maxTracked` addresses are remembered; past that the oldest window is forgotten, so a
 * flood of addresses costs bounded memory (about 100 bytes each) and gains each only its own window.
 */
export class FailureThrottle {
  private readonly windows = new Map<string, { startedAt: number; failures: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxTracked = 100_000,
  ) {}

  /** Milliseconds until `address` may try again; 0 when it may now. */
  blockedForMs(address: string): number {
    const window = this.windows.get(address);
    if (!window) return 0;
    const left = window.startedAt + this.windowMs - this.clock.now();
    if (left <= 0) {
      this.windows.delete(address);
      return 0;
    }
    return window.failures >= this.limit ? left : 0;
  }

  /** Counts one failure of `address`. */
  failed(address: string): void {
    const now = this.clock.now();
    const window = this.windows.get(address);
    if (window && now - window.startedAt < this.windowMs) {
      window.failures += 1;
      return;
    }
    // A new window goes to the end of the map's order, so the first entry is the oldest window.
    this.windows.delete(address);
    this.windows.set(address, { startedAt: now, failures: 1 });
    if (this.windows.size > this.maxTracked) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
  }

  /** Addresses remembered now (for tests and metrics). */
  get tracked(): number {
    return this.windows.size;
  }
}
