import { ServiceError } from "../errors/service-error.ts";
import type { Clock } from "../platform/clock.ts";
import { randomToken } from "../platform/random.ts";
import type { ServiceCall } from "./service.ts";

/**
 * Pending writes of the MCP server (decisions 0022, 0033): a preview stores the exact HTTP call it
 * would make — route, end user, body and an `Idempotency-Key` fixed at preview time — frozen, under
 * a random confirmation token. The preview shows that stored object and confirming sends that same
 * object; confirming again sends it again with the same key, so the service replays the first
 * Request instead of writing twice. A token lives `ttlMs` on the injected clock (unused or used),
 * then it is gone.
 *
 *   preview ─▶ pending ─confirm─▶ confirmed ─confirm─▶ confirmed (replay)
 *                 │ (--confirm-by-person: the person accepts first; once accepted, a later
 *                 │  confirmation replays without asking again)
 *                 ├── the person declines ───────────────▶ forgotten
 *                 └── ttl passes (any state) ─────────────▶ expired (forgotten)
 */
export interface PendingWrite {
  readonly token: string;
  readonly operationId: string;
  readonly call: ServiceCall & { readonly idempotencyKey: string };
  /** What the preview showed besides the call: the summary and the messages, secrets masked. */
  readonly shown: { readonly summary: string; readonly messages: string };
  readonly expiresAtMs: number;
  /** How often it was confirmed (the first sends the write, later ones replay it). */
  confirmations: number;
  /** `--confirm-by-person`: the person accepted this write in the client. */
  acceptedByPerson: boolean;
}

/** A deep copy nothing can change any more: the call as previewed is the call sent. */
function frozen<T>(value: T): T {
  const copy = structuredClone(value);
  const freeze = (node: unknown): void => {
    if (typeof node !== "object" || node === null || Object.isFrozen(node)) return;
    Object.freeze(node);
    for (const child of Object.values(node)) freeze(child);
  };
  freeze(copy);
  return copy;
}

export class Confirmations {
  private readonly pending = new Map<string, PendingWrite>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** Keeps a (frozen copy of the) write to confirm and returns it with its token. */
  add(
    operationId: string,
    call: ServiceCall & { idempotencyKey: string },
    shown: PendingWrite["shown"],
  ): PendingWrite {
    this.sweep();
    const write: PendingWrite = {
      token: `wc_${randomToken(24)}`,
      operationId,
      call: frozen(call),
      shown,
      expiresAtMs: this.clock.now() + this.ttlMs,
      confirmations: 0,
      acceptedByPerson: false,
    };
    this.pending.set(write.token, write);
    return write;
  }

  /** The write a token names, or INVALID_PARAMETER (`token`) when it is unknown or expired. */
  find(token: string): PendingWrite {
    this.sweep();
    const write = this.pending.get(token);
    if (!write) {
      throw new ServiceError("INVALID_PARAMETER", {
        param: "token",
        message:
          "Unknown or expired confirmation token: nothing was sent. Call call_operation again for a new preview.",
      });
    }
    return write;
  }

  /** Forgets a write (the person declined it): its token confirms nothing any more. */
  forget(write: PendingWrite): void {
    this.pending.delete(write.token);
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [token, write] of this.pending) if (write.expiresAtMs <= now) this.pending.delete(token);
  }
}
