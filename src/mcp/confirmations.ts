import { ServiceError } from "../errors/service-error.ts";
import type { Clock } from "../platform/clock.ts";
import { randomToken } from "../platform/random.ts";
import type { ServiceCall } from "./service.ts";

/**
 * Pending writes of the MCP server (decision 0022): a preview stores the exact HTTP call it would
 * make — route, end user, body and an `Idempotency-Key` fixed at preview time — under a random
 * confirmation token. Confirming sends that call; confirming again sends it again with the same
 * key, so the service replays the first Request instead of writing twice. A token lives
 * `ttlMs` on the injected clock (unused or used), then it is gone.
 *
 *   preview ─▶ pending(token, call, key) ─confirm─▶ confirmed ─confirm─▶ confirmed (replay)
 *                    └──────────── ttl passes (either state) ───────────▶ expired (forgotten)
 */
export interface PendingWrite {
  readonly token: string;
  readonly operationId: string;
  readonly call: ServiceCall & { readonly idempotencyKey: string };
  readonly expiresAtMs: number;
  /** How often it was confirmed (the first sends the write, later ones replay it). */
  confirmations: number;
}

export class Confirmations {
  private readonly pending = new Map<string, PendingWrite>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** Keeps a write to confirm and returns it with its token. */
  add(operationId: string, call: ServiceCall & { idempotencyKey: string }): PendingWrite {
    this.sweep();
    const write: PendingWrite = {
      token: `wc_${randomToken(24)}`,
      operationId,
      call,
      expiresAtMs: this.clock.now() + this.ttlMs,
      confirmations: 0,
    };
    this.pending.set(write.token, write);
    return write;
  }

  /** The write a token confirms, or INVALID_PARAMETER (`token`) when it is unknown or expired. */
  take(token: string): PendingWrite {
    this.sweep();
    const write = this.pending.get(token);
    if (!write) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: "token",
        message:
          "Unknown or expired confirmation token: nothing was sent. Call call_operation again for a new preview.",
      });
    }
    write.confirmations++;
    return write;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [token, write] of this.pending) if (write.expiresAtMs <= now) this.pending.delete(token);
  }
}
