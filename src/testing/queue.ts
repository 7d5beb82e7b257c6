import assert from "node:assert/strict";
import { newId } from "../platform/ids.ts";
import { connectionChannel } from "../requests/engine.ts";
import { newRequestRow } from "../requests/new-request.ts";
import { insertSession } from "../store/connector-sessions.ts";
import { insertRequest } from "../store/requests.ts";
import type { TestApp } from "./harness.ts";

/**
 * An end user with a connection (set up through the API) and a connector session in the `ready`
 * phase (the claim hands work only to one), for tests that drive the queue directly.
 */
export interface QueueTarget {
  endUserId: string;
  connectionId: string;
  /** The session's ticket digest, for `nextWork`. */
  ticketHash: string;
}

export async function connectionOf(h: TestApp): Promise<QueueTarget> {
  const headers = { authorization: `Bearer ${h.project.keys.secretLive}` };
  const created = await h.app.inject({
    method: "POST",
    url: "/v1/end-users",
    headers,
    payload: { companyName: "Queue Co", sourceId: "queue" },
  });
  const endUserId = created.json<{ id: string }>().id;
  const session = await h.app.inject({
    method: "POST",
    url: "/v1/auth-sessions",
    headers,
    payload: { publishableKey: h.project.keys.publishableLive, endUserId },
  });
  assert.equal(session.statusCode, 201, session.body);
  const connection = await h.deps.db
    .selectFrom("connections")
    .select("id")
    .where("end_user_id", "=", endUserId)
    .executeTakeFirstOrThrow();
  const ticketHash = `ticket-of-${connection.id}`;
  await readySession(h, connection.id, ticketHash);
  return { endUserId, connectionId: connection.id, ticketHash };
}

/** A connector session of `connectionId` in the `ready` phase, held by this instance. */
export async function readySession(
  h: Pick<TestApp, "deps" | "clock">,
  connectionId: string,
  ticketHash: string,
): Promise<void> {
  const now = new Date(h.clock.now());
  await insertSession(h.deps.db, {
    ticket_hash: ticketHash,
    connection_id: connectionId,
    phase: "ready",
    last_error: null,
    recovery_message_set_id: null,
    connection_errors: 0,
    company_file_path: null,
    xml_version: "16.0",
    created_at: now,
    last_activity_at: now,
    last_work_at: now,
    closed_at: null,
    instance_id: h.deps.instanceId,
    ledger_answered_at: now,
  });
}

export interface QueuedRequest {
  background?: boolean;
  /** A write's document and the records it changes (health check read when absent). */
  write?: { xml: string; targets: string[] };
}

/** Queues an async request on the target's connection, as admission would; returns its ID. */
export async function queueRequest(
  h: TestApp,
  target: QueueTarget,
  request: QueuedRequest = {},
): Promise<string> {
  const id = newId("request");
  const write = request.write;
  await insertRequest(
    h.deps.db,
    newRequestRow(
      {
        id,
        project_id: h.project.project.id,
        is_test: false,
        end_user_id: target.endUserId,
        connection_id: target.connectionId,
        operation_id: write ? "endUsers.passthrough" : "ledger.healthCheck",
        method: write ? "POST" : "GET",
        path: write ? "/v1/end-users/passthrough" : "/v1/ledger-desktop/health-check",
        mode: "async",
        status: "queued",
        is_write: write !== undefined,
        request_xml: write?.xml ?? "<QBXML/>",
        queue_ttl_expires_at: null,
        idempotency_key_present: false,
        previous_request_id: null,
        background: request.background ?? false,
        ...(write && write.targets.length > 0 ? { write_targets: write.targets } : {}),
      },
      h.clock.now(),
    ),
  );
  // As admission does: the connection's held connector call (or its next re-ask) looks again.
  await h.deps.store.notifier.notify(connectionChannel(target.connectionId));
  return id;
}
