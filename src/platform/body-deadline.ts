import type { Clock } from "./clock.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The receive deadline of this call's body; null for a call without one (decision 0031). */
    bodyDeadline: BodyDeadline | null;
  }
}

/** Why a call's body was cut: it had not arrived by its deadline. */
export class BodyTimeoutError extends Error {
  override name = "BodyTimeoutError";
  readonly statusCode = 408;
  constructor(readonly allowedMs: number) {
    super(`The request body was not received within ${Math.round(allowedMs / 1000)} s.`);
  }
}

/** The reason every settled deadline's wait ends with: shared, so no DOMException is built per call. */
const ARRIVED = new Error("the body arrived");

/**
 * The time a body may take to arrive, counted from when its reading starts. The connector endpoint
 * grants a live session's call more ({@link BodyDeadline.allow}); the wait re-arms itself on the
 * transport clock, so one timer serves however often it is moved.
 */
export class BodyDeadline {
  private readonly arrived = new AbortController();
  private allowedMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly startedAt: number,
    allowedMs: number,
  ) {
    this.allowedMs = allowedMs;
  }

  /** Lets the body take up to `ms` from its start, when that is more than it had. */
  allow(ms: number): void {
    this.allowedMs = Math.max(this.allowedMs, ms);
  }

  /** The body has arrived (or its call ended some other way): the deadline no longer applies. */
  settle(): void {
    this.arrived.abort(ARRIVED);
  }

  get settled(): boolean {
    return this.arrived.signal.aborted;
  }

  /** Resolves with true when the deadline passed first, false once the body arrived. */
  async expired(): Promise<boolean> {
    for (;;) {
      const left = this.startedAt + this.allowedMs - this.clock.now();
      if (left > 0) await this.clock.sleep(left, this.arrived.signal);
      if (this.settled) return false;
      if (this.startedAt + this.allowedMs <= this.clock.now()) return true;
    }
  }

  get limitMs(): number {
    return this.allowedMs;
  }
}
