import assert from "node:assert/strict";
import { test } from "node:test";
import { ServiceError } from "../errors/service-error.ts";
import { newId } from "../platform/ids.ts";
import { findRequestById, insertRequest } from "../store/requests.ts";
import { createEndUser } from "../tenancy/end-users.ts";
import { buildTestApp } from "../testing/harness.ts";
import { errorBodyOf, transition } from "./engine.ts";
import { newRequestRow } from "./new-request.ts";

/**
 * Decision 0045's write rule holds for the error a Request stores, not only for the answer its
 * caller got: a write that may have been applied (`outcome` unknown or pending) is never
 * `retryable`, whatever its code's own rule (LEDGER_RESPONSE_UNREADABLE retries); a read keeps it.
 */
test("a stored error of a write that may have been applied is never retryable", async (t) => {
  const h = await buildTestApp(t);
  const endUser = await createEndUser(
    h.deps,
    { projectId: h.project.project.id, mode: "live" },
    { companyName: "Retry Rule", sourceId: "retry-rule" },
  );
  const sent = async (isWrite: boolean) =>
    insertRequest(h.deps.db, {
      ...newRequestRow(
        {
          id: newId("request"),
          project_id: h.project.project.id,
          is_test: false,
          end_user_id: endUser.id,
          connection_id: null,
          operation_id: "endUsers.passthrough",
          method: "POST",
          path: "/v1/end-users/x/passthrough/ledger_desktop",
          mode: "sync",
          status: "queued",
          is_write: isWrite,
          request_xml: "<QBXML/>",
          queue_ttl_expires_at: null,
          idempotency_key_present: false,
          previous_request_id: null,
        },
        h.clock.now(),
      ),
      status: "sent",
    });
  const unreadable = (outcome: "unknown" | "not_applicable") =>
    new ServiceError("LEDGER_RESPONSE_UNREADABLE", { outcome });
  assert.equal(unreadable("unknown").retryable, true, "the code's own rule retries");

  const write = await sent(true);
  const error = errorBodyOf(h.deps, unreadable("unknown"), write.id);
  await transition(h.deps, write, "result_lost", { outcome: "unknown", error }, "unreadable");
  const stored = (await findRequestById(h.deps.db, write.id))?.error as {
    retryable: boolean;
    outcome: string;
  };
  assert.equal(stored.outcome, "unknown");
  assert.equal(stored.retryable, false, "a write that may have been applied is not resent");

  const read = await sent(false);
  const readError = errorBodyOf(h.deps, unreadable("not_applicable"), read.id);
  await transition(h.deps, read, "refused", { outcome: "not_applicable", error: readError }, "unreadable");
  const readStored = (await findRequestById(h.deps.db, read.id))?.error as { retryable: boolean };
  assert.equal(readStored.retryable, true, "a read may be sent again");
});
