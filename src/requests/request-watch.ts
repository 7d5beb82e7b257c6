import type { Deps } from "../deps.ts";
import { findRequestById, requestStatuses, type RequestRow } from "../store/requests.ts";
import { requestChannel } from "./engine.ts";
import { isSettled } from "./lifecycle.ts";
import { isStoreUnavailable } from "../store/unavailable.ts";
import { systemClock } from "../platform/clock.ts";

/**
 * A caller's watch on the Request it waits for (a sync call, a long poll). It listens from the moment
 * `watch` is called, so a request that settles between the caller's read of the row and its wait is
 * never missed: a missed wake-up would keep the caller waiting out its whole deadline for an answer
 * that already came. Watch first, then read (or insert) the row, then `until`; `close` when done.
 */
export class CallerWatch {
  private requestId: string | null = null;
  private stopListening: (() => void) | null = null;
  /** Wake-ups since the last look: in this process one carries the settled row; from another instance, nothing. */
  private settled: RequestRow | null = null;
  private poked = false;
  private wake: (() => void) | null = null;

  constructor(private readonly deps: Deps) {}

  /** Watches `requestId` from now on (a caller attached to an earlier request moves its watch there). */
  watch(requestId: string): void {
    this.close();
    this.requestId = requestId;
    this.stopListening = this.deps.store.notifier.listen(requestChannel(requestId), (payload) => {
      if (isSettledRow(payload, requestId)) this.settled = payload;
      this.poked = true;
      this.wake?.();
    });
  }

  /** The row once it settles, or the latest row read when `deadlineMs` (clock time) passes. */
  async until(initial: RequestRow, deadlineMs: number): Promise<RequestRow> {
    if (initial.id !== this.requestId) throw new Error(`watching ${this.requestId}, not ${initial.id}`);
    const { deps } = this;
    let row = initial;
    for (;;) {
      if (this.settled) return this.settled;
      if (isSettled(row.status)) return row;
      if (this.poked) {
        this.poked = false;
        // A look that fails because the store does not answer changes nothing: the caller keeps
        // waiting for the next wake-up or its deadline (decision 0019).
        row = (await findRequestById(deps.db, row.id).catch(storeSilent)) ?? row;
        continue;
      }
      const remaining = deadlineMs - deps.clock.now();
      if (remaining <= 0) return row;
      const stop = new AbortController();
      const woken = new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      await Promise.race([woken, deps.clock.sleep(remaining, stop.signal)]);
      stop.abort();
      this.wake = null;
    }
  }

  close(): void {
    this.stopListening?.();
    this.stopListening = null;
    this.requestId = null;
    this.settled = null;
    this.poked = false;
  }
}

function storeSilent(error: unknown): null {
  if (isStoreUnavailable(error)) return null;
  throw error;
}

function isSettledRow(payload: unknown, id: string): payload is RequestRow {
  if (typeof payload !== "object" || payload === null) return false;
  const candidate = payload as Partial<RequestRow>;
  return candidate.id === id && typeof candidate.status === "string" && isSettled(candidate.status);
}

/** How often the service's own waits read their Requests again (a wake-up from another instance). */
const RECHECK_MS = 1000;

/**
 * Waits (real time, woken by the Requests settling) until every one of `ids` has settled, and
 * returns their rows in order (null for one that is gone); null when `signal` ends the wait first.
 * The service's own background work (the change feed's polls, the mirror's pages) waits this way.
 *
 * A Request that settles in this process hands its row over with the wake-up (result included), so
 * its result is not read back from the store; while Requests are unsettled only their statuses are
 * read; a row settled elsewhere (another instance) is read whole once.
 */
export async function settledRows(
  deps: Deps,
  ids: readonly string[],
  signal: AbortSignal,
): Promise<Array<RequestRow | null> | null> {
  const handedOver = new Map<string, RequestRow>();
  let woken: (() => void) | null = null;
  let poked = false;
  // Listening before the first read: a Request that settles in between is not missed.
  const stopListening = ids.map((id) =>
    deps.store.notifier.listen(requestChannel(id), (payload) => {
      if (isSettledRow(payload, id)) handedOver.set(id, payload);
      poked = true;
      woken?.();
    }),
  );
  try {
    while (!signal.aborted) {
      poked = false;
      const unknown = ids.filter((id) => !handedOver.has(id));
      const statuses =
        unknown.length > 0 ? await requestStatuses(deps.db, unknown) : new Map<string, string>();
      if (unknown.every((id) => !statuses.has(id) || isSettled(statuses.get(id) ?? ""))) {
        return Promise.all(
          ids.map(
            async (id) =>
              handedOver.get(id) ?? (statuses.has(id) ? await findRequestById(deps.db, id) : null),
          ),
        );
      }
      // Woken while reading: look again at once.
      if (poked) continue;
      const stop = new AbortController();
      const onAbort = (): void => stop.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      await Promise.race([
        new Promise<void>((resolve) => {
          woken = resolve;
        }),
        systemClock.sleep(RECHECK_MS, stop.signal),
      ]);
      woken = null;
      stop.abort();
      signal.removeEventListener("abort", onAbort);
    }
    return null;
  } finally {
    for (const stop of stopListening) stop();
  }
}
