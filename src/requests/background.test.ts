import assert from "node:assert/strict";
import { test } from "node:test";
import { newId } from "../platform/ids.ts";
import { insertRequest } from "../store/requests.ts";
import { buildTestApp, type TestApp } from "../testing/harness.ts";
import { nextWork } from "./engine.ts";
import { newRequestRow } from "./new-request.ts";

/**
 * Background requests (the change feed's polls) run at low priority in their connection's queue:
 * a developer's request queued after them is handed to the connector first (issue 9 item 5).
 */
async function connectionOf(h: TestApp): Promise<{ endUserId: string; connectionId: string }> {
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
  return { endUserId, connectionId: connection.id };
}

async function queued(
  h: TestApp,
  target: { endUserId: string; connectionId: string },
  background: boolean,
): Promise<string> {
  const id = newId("request");
  await insertRequest(
    h.deps.db,
    newRequestRow(
      {
        id,
        project_id: h.project.project.id,
        is_test: false,
        end_user_id: target.endUserId,
        connection_id: target.connectionId,
        operation_id: "ledger.healthCheck",
        method: "GET",
        path: "/v1/ledger-desktop/health-check",
        mode: "async",
        status: "queued",
        is_write: false,
        request_xml: "<QBXML/>",
        queue_ttl_expires_at: null,
        idempotency_key_present: false,
        previous_request_id: null,
        background,
      },
      h.clock.now(),
    ),
  );
  return id;
}

test("a developer's request is handed out before background requests queued earlier", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  const poll1 = await queued(h, target, true);
  await queued(h, target, true);
  const developer = await queued(h, target, false);
  const first = await nextWork(h.deps, target.connectionId, "ticket-hash", "16.0");
  assert.equal(first?.kind === "request" ? first.row.id : null, developer, "the developer's call goes first");
  // Once it is answered the background requests follow, oldest first.
  await h.deps.db.updateTable("requests").set({ status: "succeeded" }).where("id", "=", developer).execute();
  const second = await nextWork(h.deps, target.connectionId, "ticket-hash", "16.0");
  assert.equal(second?.kind === "request" ? second.row.id : null, poll1);
});
