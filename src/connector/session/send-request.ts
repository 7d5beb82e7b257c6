import { recoveryQueryDocument } from "../../ledger/xml/message-set.ts";
import { hashSecret } from "../../platform/secrets.ts";
import { nextWork } from "../../requests/engine.ts";
import { findConnectionById, touchConnection } from "../../store/connections.ts";
import { findSession } from "../../store/connector-sessions.ts";
import { acceptCompanyFile } from "../company-file.ts";
import type { ConnectorContext } from "./context.ts";
import { hold } from "./hold.ts";
import { liveSession, quietSession, ticketExpired } from "./live.ts";
import { markQuiet } from "./memory.ts";
import { moveSession } from "./phases.ts";

export interface SendRequestInput {
  ticket: string;
  hcp: string;
  companyFileName: string;
  /** `qbXMLCountry`: the regional edition of the application (`US`, `CA`, `UK`). */
  country: string;
  major: string;
  minor: string;
}

/**
 * `sendRequestXML` (ledger-protocol §1.3): the connector asks for work. The first call of a session
 * reports the company file (`opened` → `ready`, or refused: "" and `getLastError` says why); a call
 * while the closing query or a recovery query is in flight says its answer was lost (back to
 * `ready`; a lost recovery query is handed over again). Then the hold (session/hold.ts) hands work
 * over or ends with "". A dead ticket gets "": the connector then asks `getLastError`, which
 * explains, and stops.
 */
export async function sendRequestXML(
  ctx: ConnectorContext,
  input: SendRequestInput,
  callerGone: AbortSignal,
): Promise<string> {
  const { deps } = ctx;
  const ticketHash = hashSecret(input.ticket);
  // The connector asks again after an empty hold and nothing changed since: no store call.
  const quiet = quietSession(ctx, ticketHash);
  if (quiet) return hold(ctx, quiet.session, false, callerGone);
  // Right after an answer this instance took: the next request is claimed at once.
  const next = await nextAfterAnswer(ctx, ticketHash, callerGone);
  if (next !== null) return next;
  let session = await liveSession(deps, ticketHash);
  if (!session) {
    ctx.memory.forget(ticketHash);
    return "";
  }
  if (session.phase === "opened") {
    const connection = await findConnectionById(deps.db, session.connection_id);
    if (!connection) return "";
    await touchConnection(deps.db, connection.id, { last_seen_at: new Date(deps.clock.now()) });
    const refused = await acceptCompanyFile(deps, connection, session, input);
    if (refused !== null) {
      // The application answered (with a company file this connection refuses): not a silent session.
      await moveSession(deps, session.ticket_hash, "refuse_file", {
        last_error: refused,
        ledger_answered_at: new Date(deps.clock.now()),
      });
      return "";
    }
    session = (await findSession(deps.db, session.ticket_hash)) ?? session;
  }
  if (session.phase === "closing") {
    // The closing query's answer never came (it was a read: nothing to recover); the session goes on.
    session = (await moveSession(deps, session.ticket_hash, "keep_open", {})) ?? session;
  } else if (session.phase === "recovering") {
    // The recovery query's answer never came: the claim hands the query over again.
    session =
      (await moveSession(deps, session.ticket_hash, "recovery_lost", { recovery_message_set_id: null })) ??
      session;
  }
  return hold(ctx, session, true, callerGone);
}

/**
 * The connector asks for more right after this instance took its answer (receiveResponseXML said
 * more may come): the session was read then, so the next request is claimed without reading it
 * again (decision 0027). The claim itself hands over nothing unless the session is still ready and
 * held by this instance when it runs. Null when there is nothing to hand over at once, or anything
 * is unusual (a hang-up, an expired ticket, the session changed): the call goes the usual way.
 */
async function nextAfterAnswer(
  ctx: ConnectorContext,
  ticketHash: string,
  callerGone: AbortSignal,
): Promise<string | null> {
  const session = ctx.memory.takeAnswered(ticketHash);
  const { deps } = ctx;
  const now = deps.clock.now();
  if (
    session === null ||
    callerGone.aborted ||
    ctx.shutdown.aborted ||
    session.phase !== "ready" ||
    session.instance_id !== deps.instanceId ||
    ticketExpired(deps, session, now)
  ) {
    return null;
  }
  const version = session.xml_version ?? "13.0";
  // Remembered from before the look, so a wake-up during it is counted (as the hold does).
  const remembered = ctx.memory.track(session);
  const changes = remembered.changes;
  const work = await nextWork(deps, session.connection_id, ticketHash, version, false, deps.instanceId);
  if (work === null || work.kind === "spaced") return null;
  deps.activity.note(ticketHash, session.connection_id, now);
  if (work.kind === "request") {
    ctx.memory.forget(ticketHash);
    return work.xml;
  }
  if (work.kind === "recovery") {
    ctx.memory.forget(ticketHash);
    return recoveryQueryDocument(work.messageSetId, version);
  }
  // Nothing to do and nothing unsettled: held as a quiet re-ask is (no second look).
  markQuiet(remembered, changes);
  return hold(ctx, session, false, callerGone);
}
