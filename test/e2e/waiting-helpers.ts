import assert from "node:assert/strict";
import type { Diagnosis } from "../../src/requests/diagnosis.ts";
import { openSessions } from "../../src/store/connector-sessions.ts";
import { SoapByHand } from "../../src/testing/soap-by-hand.ts";
import type { ConnectedEndUser, System } from "../../src/testing/system.ts";
import { E2E_CONFIG, eventually, json, queueAsync, type RequestResource } from "./helpers.ts";

/** A Request as read while it waits: its waiting fields and diagnosis. */
export interface WaitingRequest extends RequestResource {
  diagnosis: Diagnosis | null;
}

/**
 * Loopback webhook URLs are allowed, so an endpoint can subscribe (nothing is delivered: no
 * dispatcher). Holds are long: a stopped connector then almost always hangs up a held call, which
 * the service notices, rather than one the service has just answered (its session would stay open
 * and read as `sessionOpen`). Work is handed over by wake-ups, never by the end of a hold.
 */
export const WAITING_CONFIG = {
  config: { ...E2E_CONFIG.config, CONNECTOR_HOLD_MS: "5000", WEBHOOK_ALLOW_LOOPBACK: "on" },
};

export async function readRequest(sys: System, id: string): Promise<WaitingRequest> {
  return json<WaitingRequest>(await sys.call("GET", `/v1/requests/${id}`));
}

/** The probable cause codes of a request, most likely first. */
export async function causesOf(sys: System, id: string): Promise<string[]> {
  return (await readRequest(sys, id)).diagnosis?.probableCauses.map((c) => c.code) ?? [];
}

/** Queues an async read and returns its Request ID. */
export async function queueRead(sys: System, eu: ConnectedEndUser): Promise<string> {
  return queueAsync(sys, eu.endUserId, "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>");
}

/** Waits until the request is in `status` (real time, bounded). */
export async function untilStatus(sys: System, id: string, status: string): Promise<WaitingRequest> {
  return eventually(
    `request ${id} ${status}`,
    async () => {
      const row = await readRequest(sys, id);
      return row.status === status ? row : null;
    },
    30_000,
  );
}

/** Waits until the connection's status (as the end user shows it) is `status`. */
export async function untilConnection(
  sys: System,
  eu: ConnectedEndUser,
  status: string,
): Promise<{ status: string; statusReason: string | null }> {
  return eventually(
    `connection ${status}`,
    async () => {
      const body = await json<{ integrationConnections: { status: string; statusReason: string | null }[] }>(
        await sys.call("GET", `/v1/end-users/${eu.endUserId}`, { key: eu.key }),
      );
      const connection = body.integrationConnections[0];
      return connection?.status === status ? connection : null;
    },
    30_000,
  );
}

/** Waits until the service holds an open session for the end user's connection. */
export async function untilSessionOpen(sys: System, eu: ConnectedEndUser): Promise<void> {
  await eventually(
    "a connector session is open",
    async () => (await openSessions(sys.deps.db, eu.connectionId)).length > 0,
    30_000,
  );
}

/** The `connection.status_changed` events of a connection written to the outbox, in order. */
export async function statusEvents(sys: System, connectionId: string): Promise<string[]> {
  const rows = await sys.deps.db
    .selectFrom("events")
    .select("data")
    .where("type", "=", "connection.status_changed")
    .orderBy("seq")
    .execute();
  return rows
    .map((r) => JSON.parse(r.data) as { id: string; previousStatus: string; status: string })
    .filter((d) => d.id === connectionId)
    .map((d) => `${d.previousStatus}→${d.status}`);
}

/** Subscribes an endpoint of the system's project to every connection event. */
export async function subscribeConnectionEvents(sys: System): Promise<void> {
  const res = await sys.call("POST", "/v1/webhook-endpoints", {
    body: { url: "http://127.0.0.1:9/hooks", eventTypes: ["connection.*"] },
  });
  assert.equal(res.status, 201, await res.clone().text());
}

/**
 * Until the connector's open session has reported its company file. A connection is `online` from
 * its connector's `authenticate` on; stopping the connector before its first `sendRequestXML`
 * reached the service would leave a session that reads as `opening_company_file`.
 */
export async function untilCompanyFileReported(sys: System, eu: ConnectedEndUser): Promise<void> {
  await eventually("the company file was reported", async () => {
    const open = await openSessions(sys.deps.db, eu.connectionId);
    return open.length > 0 && open.every((s) => s.phase !== "opened");
  });
}

/**
 * One check-in by hand that finds nothing to do: `authenticate` over SOAP, then the session it may
 * open is closed at once. "none" (nothing to do: no session, no ticket) is a check-in too.
 */
export async function checkInByHand(sys: System, eu: ConnectedEndUser): Promise<void> {
  const hand = SoapByHand.for(sys, eu);
  const [ticket, answer] = await hand.authenticate();
  assert.notEqual(answer, "nvu", "the connector is known");
  if (ticket && answer !== "none") await hand.close(ticket);
}

/** A schedule of its own: `times` check-ins by hand, `everyMs` apart on the service's fake clock. */
export async function checkInsEvery(
  sys: System,
  eu: ConnectedEndUser,
  everyMs: number,
  times: number,
): Promise<void> {
  const clock = sys.fakeClock;
  assert.ok(clock, "a schedule is kept on the fake clock");
  for (let i = 0; i < times; i += 1) {
    await clock.advance(everyMs);
    await checkInByHand(sys, eu);
  }
}
