import type { Deps } from "../../deps.ts";
import { hashSecret } from "../../platform/secrets.ts";
import { connectionChannel, interruptSent } from "../../requests/engine.ts";
import { touchConnection } from "../../store/connections.ts";
import { findSession, type ConnectorSessionRow } from "../../store/connector-sessions.ts";
import { sentRequests } from "../../store/requests.ts";
import { TEXTS, type ConnectorContext } from "./context.ts";
import type { RememberedSession } from "./memory.ts";
import { isOpen, moveSession } from "./phases.ts";

/**
 * Finding the session a call's ticket names, and ending sessions: shared by every protocol step.
 */

/**
 * Ends a session (the machine's `close`): what it had in flight is interrupted (never re-sent), a
 * held call returns, and `userText` (kept if null) is what getLastError and closeConnection answer
 * from now on.
 */
export async function closeSession(
  deps: Deps,
  session: ConnectorSessionRow,
  detail: string,
  userText: string | null,
): Promise<void> {
  await moveSession(deps, session.ticket_hash, "close", {
    closed_at: new Date(deps.clock.now()),
    last_error: userText ?? session.last_error,
  });
  for (const row of await sentRequests(deps.db, session.connection_id)) {
    if (row.ticket_hash === session.ticket_hash) await interruptSent(deps, row, detail);
  }
  await deps.store.notifier.notify(connectionChannel(session.connection_id));
}

/**
 * A call with the ticket of a session that a newer `authenticate` replaced. One connector never
 * does that (it checks in again only after its session ended on its side), so the older session's
 * connector is still running: a second computer uses the same registration. Kept as evidence for
 * diagnosis (`same_connector_two_computers`).
 */
export async function noteReplacedTicket(deps: Deps, session: ConnectorSessionRow | null): Promise<void> {
  if (session?.phase !== "closed" || session.last_error !== TEXTS.replaced) return;
  await touchConnection(deps.db, session.connection_id, { shared_connector_at: new Date(deps.clock.now()) });
}

/** A live session for a ticket, its activity noted; null for unknown, closed or expired tickets. */
export async function liveSession(deps: Deps, ticketHash: string): Promise<ConnectorSessionRow | null> {
  return keepAlive(deps, await findSession(deps.db, ticketHash));
}

/**
 * The session if it is open and its ticket has not expired, its activity noted (the stamps are
 * written in batches: store/activity-stamps.ts); an expired one is closed here, on the
 * injected clock.
 */
export async function keepAlive(
  deps: Deps,
  found: ConnectorSessionRow | null,
): Promise<ConnectorSessionRow | null> {
  let session = found;
  if (!session || !isOpen(session)) {
    await noteReplacedTicket(deps, session);
    return null;
  }
  // The connector's call reached another instance (behind a load balancer, or after a restart of
  // the one it used): this instance holds the session now. A session a recovery closed meanwhile is over.
  if (session.instance_id !== deps.instanceId) {
    const taken = await moveSession(deps, session.ticket_hash, "take_over", { instance_id: deps.instanceId });
    if (!taken) return null;
    session = taken;
    // The instance that served it before forgets what it knew of it from memory (session/memory.ts).
    await deps.store.notifier.notify(connectionChannel(session.connection_id));
  }
  const now = deps.clock.now();
  if (ticketExpired(deps, session, now)) {
    await closeSession(deps, session, "The session ticket expired", TEXTS.expired);
    return null;
  }
  deps.activity.note(session.ticket_hash, session.connection_id, now);
  return session;
}

/**
 * Whether `ticket` names an open session whose ticket has not expired, noting nothing (decision
 * 0031): the endpoint asks once per call that grows past the limit of unauthenticated bodies.
 */
export async function ticketIsLive(ctx: ConnectorContext, ticket: string): Promise<boolean> {
  if (ticket === "") return false;
  const session = await findSession(ctx.deps.db, hashSecret(ticket));
  return session !== null && isOpen(session) && !ticketExpired(ctx.deps, session, ctx.deps.clock.now());
}

/** Whether the session's ticket expired at `nowMs`, counting its activity not yet written. */
export function ticketExpired(deps: Deps, session: ConnectorSessionRow, nowMs: number): boolean {
  const noted = deps.activity.sessionSeenAt(session.ticket_hash)?.getTime() ?? 0;
  const last = Math.max(session.last_activity_at.getTime(), noted);
  return nowMs - last > deps.config.CONNECTOR_TICKET_TTL_MS;
}

/**
 * A re-ask answered from memory (decision 0023): the session this instance holds and found with
 * nothing to do, if nothing woke its connection since and its ticket is still good; its activity
 * noted. Null sends the call the long way, through the store.
 */
export function quietSession(
  ctx: ConnectorContext,
  ticketHash: string,
  usable: (session: ConnectorSessionRow) => boolean = () => true,
): RememberedSession | null {
  const entry = ctx.memory.quiet(ticketHash);
  if (!entry || !usable(entry.session)) return null;
  const { deps } = ctx;
  const { session } = entry;
  const now = deps.clock.now();
  if (!isOpen(session) || session.instance_id !== deps.instanceId || ticketExpired(deps, session, now)) {
    ctx.memory.forget(ticketHash);
    return null;
  }
  deps.activity.note(ticketHash, session.connection_id, now);
  deps.metrics.connectorQuietCalls.inc();
  return entry;
}
