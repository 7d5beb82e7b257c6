import type { Deps } from "../deps.ts";
import { findConnectionById } from "../store/connections.ts";
import { openSessions } from "../store/connector-sessions.ts";
import { findRequestById, type RequestRow } from "../store/requests.ts";
import { effectiveStatus } from "../connections/seen.ts";
import { expireUnsent, transition } from "./engine.ts";
import { applies } from "./lifecycle.ts";

/**
 * Time-driven transitions applied when a request is read, so that what a caller reads never
 * depends on a background timer having run (expiry is also applied by the sweep and the claim):
 *
 * - an unsent request past its queue TTL ends `canceled` with REQUEST_EXPIRED (`queue_ttl`);
 * - an async request queued on a connection whose connector went silent past the offline window,
 *   with no session open, is `waiting_for_connection` (`connector_lost`; the connector's next
 *   check-in puts it back).
 *
 * Another actor may have moved the request meanwhile (the compare-and-set refuses): the stored row
 * is read again rather than returning the stale one.
 */
export async function asOfNow(deps: Deps, row: RequestRow): Promise<RequestRow> {
  const now = deps.clock.now();
  if (
    applies("queue_ttl", row) &&
    row.queue_ttl_expires_at !== null &&
    row.queue_ttl_expires_at.getTime() <= now
  ) {
    return (await expireUnsent(deps, row)) ?? (await findRequestById(deps.db, row.id)) ?? row;
  }
  if (applies("connector_lost", row) && row.connection_id !== null) {
    const connection = await findConnectionById(deps.db, row.connection_id);
    if (
      connection &&
      effectiveStatus(deps.activity.connection(connection), now, deps.config.CONNECTION_OFFLINE_AFTER_MS) ===
        "offline" &&
      // A session still open would hand it over; only a connector that is away parks it.
      (await openSessions(deps.db, connection.id)).length === 0
    ) {
      const moved = await transition(
        deps,
        row,
        "connector_lost",
        {},
        `The connector has not been seen for more than ${Math.round(deps.config.CONNECTION_OFFLINE_AFTER_MS / 1000)} s`,
      );
      return moved ?? (await findRequestById(deps.db, row.id)) ?? row;
    }
  }
  return row;
}
