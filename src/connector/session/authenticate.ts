import type { Deps } from "../../deps.ts";
import { withCheckIn } from "../../connections/check-in-estimate.ts";
import { checkInGapMs } from "../../connections/seen.ts";
import { moveConnection } from "../../connections/status.ts";
import { randomToken } from "../../platform/random.ts";
import { hashSecret, secretMatches } from "../../platform/secrets.ts";
import { interruptSent, transition } from "../../requests/engine.ts";
import {
  findConnectionByUsername,
  touchConnection,
  updateConnection,
  type ConnectionRow,
} from "../../store/connections.ts";
import { insertSession, openSessions } from "../../store/connector-sessions.ts";
import { pendingRecoveries, sentRequests, waitingRequests } from "../../store/requests.ts";
import { TEXTS, type ConnectorContext } from "./context.ts";
import { closeSession } from "./live.ts";

/**
 * `authenticate` (ledger-protocol §1.2): the connector's check-in. A wrong login or a disabled
 * connection gets `nvu`. Otherwise the check-in is stamped (the observed schedule), an offline
 * connection comes back, and the connection's older session ends (a newer check-in replaces it,
 * PG p.42; what it had in flight was not answered). A session opens (`opened`, a fresh ticket and
 * the remembered company file path) when there is a reason to; else `none`.
 */
export async function authenticate(
  ctx: ConnectorContext,
  userName: string,
  password: string,
): Promise<string[]> {
  const { deps } = ctx;
  const found = await findConnectionByUsername(deps.db, userName);
  if (!found || !secretMatches(password, found.password_hash) || found.status === "disabled") {
    // The connector holds this connection's user name with another password: an older registration
    // (the setup was done again). Evidence for `web_connector_registration_lost`.
    if (found && found.status !== "disabled")
      await touchConnection(deps.db, found.id, { login_refused_at: new Date(deps.clock.now()) });
    deps.metrics.connectorCheckIns.inc({ result: "nvu" });
    return ["", "nvu"];
  }
  const now = new Date(deps.clock.now());
  // The gap since the connector was last seen counts its calls not yet written (activity stamps).
  const connection = deps.activity.connection(found);
  const seen = {
    last_seen_at: now,
    last_check_in_at: now,
    check_in_gap_ms: checkInGapMs(connection, now.getTime()),
    recent_check_ins: withCheckIn(connection.recent_check_ins, now.getTime()),
    updated_at: now,
  };
  const updated = (await updateConnection(deps.db, connection.id, seen)) ?? connection;
  // An offline connector that checks in is back; the session it opens (always, for a status other
  // than online) confirms or refutes the application. After the stamp: a sweep that stored offline
  // before it is undone here, and one after it sees the connector was just seen.
  if (updated.status === "offline")
    await moveConnection(deps, connection.id, "online", {}, (current) => current.status === "offline");
  // A newer check-in ends the older session (PG p.42); what it had in flight was not answered.
  for (const session of await openSessions(deps.db, connection.id)) {
    ctx.memory.forget(session.ticket_hash);
    await closeSession(
      deps,
      session,
      "A new connector session started before the answer arrived",
      TEXTS.replaced,
    );
  }
  for (const row of await sentRequests(deps.db, connection.id))
    await interruptSent(deps, row, "A new connector session started before the answer arrived");
  for (const row of await waitingRequests(deps.db, connection.id, ["waiting_for_connection"])) {
    await transition(deps, row, "connector_back", {}, "The connector checked in");
  }
  if (!(await hasReasonToOpen(deps, updated, now.getTime()))) {
    deps.metrics.connectorCheckIns.inc({ result: "none" });
    return ["", "none"];
  }
  const ticket = randomToken(24);
  await insertSession(deps.db, {
    ticket_hash: hashSecret(ticket),
    connection_id: connection.id,
    phase: "opened",
    last_error: null,
    recovery_message_set_id: null,
    connection_errors: 0,
    company_file_path: null,
    xml_version: null,
    created_at: now,
    last_activity_at: now,
    last_work_at: now,
    closed_at: null,
    instance_id: deps.instanceId,
    ledger_answered_at: null,
  });
  deps.metrics.connectorCheckIns.inc({ result: "session" });
  deps.logger.debug(
    { connectionId: connection.id, endUserId: connection.end_user_id },
    "connector session opened",
  );
  return [ticket, connection.company_file_path ?? ""];
}

/** Open a session when work waits, a write needs recovery, the status needs refreshing, or traffic is recent. */
async function hasReasonToOpen(deps: Deps, connection: ConnectionRow, nowMs: number): Promise<boolean> {
  if (connection.status !== "online") return true;
  if ((await waitingRequests(deps.db, connection.id, ["queued"])).length > 0) return true;
  if ((await pendingRecoveries(deps.db, connection.id)).length > 0) return true;
  const lastRequest = connection.last_request_at?.getTime() ?? 0;
  return nowMs - lastRequest < deps.config.CONNECTOR_IDLE_CLOSE_MS;
}
