import type { Selectable } from "kysely";
import { newId } from "../platform/ids.ts";
import type { Db } from "./database.ts";
import { EVENTS_CHANNEL, insertEventIfSubscribed } from "./events.ts";
import type { Notifier } from "./notifier.ts";
import type { AuthSessionsTable, ConnectionsTable } from "./schema.ts";

/**
 * The connection events' outbox hooks (data shapes: webhooks/event-types.ts):
 *
 * - `connection.status_changed`: written in the transaction that changes a connection's stored
 *   `status`: {@link changeConnectionStatus} is the only writer of `status`, and is called only by
 *   the connection status machine (connections/status.ts).
 * - `connection.setup_completed`: written in the transaction that moves an auth session to
 *   `completed` (store/auth-sessions.ts), once per session.
 *
 * The dispatcher is woken through `wakeDispatcher` after commit. These store functions are called
 * with a `Db` only, so `openStore` registers each store's notifier here (keyed by its `Db`).
 */
type ConnectionRow = Selectable<ConnectionsTable>;
type AuthSessionRow = Selectable<AuthSessionsTable>;

const notifiers = new WeakMap<Db, Notifier>();

/** Lets the connection hooks wake the webhook dispatcher of this store after an event commits. */
export function registerEventNotifier(db: Db, notifier: Notifier): void {
  notifiers.set(db, notifier);
}

/** Wakes the dispatcher after a transaction that wrote an event has committed. */
export async function wakeDispatcher(db: Db): Promise<void> {
  await notifiers.get(db)?.notify(EVENTS_CHANNEL);
}

/** What {@link changeConnectionStatus} did. */
export interface StatusChange {
  /** The connection after the call (unchanged when refused); null when it does not exist. */
  row: ConnectionRow | null;
  /** The status before the call (null when the connection does not exist). */
  previousStatus: string | null;
  /** The current status was neither `to` nor one of `from`, or `onlyIf` failed: nothing was written. */
  refused: boolean;
}

/**
 * Moves a connection to `changes.status` if its current status is one of `from` (the transitions
 * the status machine allows into it, connections/status.ts) or already that status (then
 * only the other fields change), and `onlyIf` holds for the locked row (evidence that must still
 * be true, such as a silence). The row is locked for the check, so the compare-and-set holds
 * across instances; a real change writes `connection.status_changed` (when subscribed) and its row of the status
 * history in the same transaction.
 */
export async function changeConnectionStatus(
  db: Db,
  connectionId: string,
  from: readonly string[],
  changes: Partial<Omit<ConnectionRow, "id" | "project_id" | "end_user_id" | "created_at">> & {
    status: string;
  },
  onlyIf: (current: ConnectionRow) => boolean = () => true,
  /** When the evidence says the new status began (the history's time; default: now, `updated_at`). */
  beganAt?: (current: ConnectionRow) => Date,
): Promise<StatusChange> {
  const result = await db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom("connections")
      .selectAll()
      .where("id", "=", connectionId)
      .forUpdate()
      .executeTakeFirst();
    if (!before) return { row: null, previousStatus: null, refused: false, written: false };
    if ((before.status !== changes.status && !from.includes(before.status)) || !onlyIf(before))
      return { row: before, previousStatus: before.status, refused: true, written: false };
    const after = await trx
      .updateTable("connections")
      .set(changes)
      .where("id", "=", connectionId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (before.status === after.status)
      return { row: after, previousStatus: before.status, refused: false, written: false };
    const at = after.updated_at;
    // The status history is kept whether or not anyone subscribes to the event (decision 0028).
    await trx
      .insertInto("connection_status_changes")
      .values({
        id: newId("statusChange"),
        connection_id: after.id,
        previous_status: before.status,
        status: after.status,
        status_reason: after.status_reason,
        changed_at: beganAt?.(before) ?? at,
      })
      .execute();
    const written = await insertEventIfSubscribed(trx, {
      id: newId("event"),
      projectId: after.project_id,
      isTest: after.is_test,
      type: "connection.status_changed",
      data: JSON.stringify({
        id: after.id,
        objectType: "integration_connection",
        endUserId: after.end_user_id,
        isTest: after.is_test,
        previousStatus: before.status,
        status: after.status,
        statusReason: after.status_reason,
        changedAt: at.toISOString(),
      }),
      at,
    });
    return { row: after, previousStatus: before.status, refused: false, written };
  });
  if (result.written) await wakeDispatcher(db);
  const { written: _written, ...change } = result;
  return change;
}

/**
 * Writes `connection.setup_completed` for each auth session just completed (call inside the
 * transaction that completed them). Returns whether any event was written.
 */
export async function recordSetupCompleted(
  trx: Parameters<typeof insertEventIfSubscribed>[0],
  sessions: readonly AuthSessionRow[],
): Promise<boolean> {
  let written = false;
  for (const session of sessions) {
    const connection = await trx
      .selectFrom("connections")
      .selectAll()
      .where("id", "=", session.connection_id)
      .executeTakeFirst();
    if (!connection) continue;
    const at = session.completed_at ?? connection.updated_at;
    const hasFile = connection.company_name !== null || connection.product !== null;
    written =
      (await insertEventIfSubscribed(trx, {
        id: newId("event"),
        projectId: session.project_id,
        isTest: connection.is_test,
        type: "connection.setup_completed",
        data: JSON.stringify({
          id: connection.id,
          objectType: "integration_connection",
          endUserId: connection.end_user_id,
          authSessionId: session.id,
          isTest: connection.is_test,
          status: connection.status,
          companyFile: hasFile
            ? {
                companyName: connection.company_name,
                product: connection.product,
                xmlVersion: connection.xml_version,
                country: connection.country,
              }
            : null,
          completedAt: at.toISOString(),
        }),
        at,
      })) || written;
  }
  return written;
}
