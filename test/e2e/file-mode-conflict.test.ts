import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  advanceUntil,
  bringOnline,
  connectionOf,
  eventually,
  json,
  newestRequestIs,
  passthroughPath,
  requestById,
  stopConnector,
  type RequestResource,
} from "./helpers.ts";

/**
 * A company file open in a conflicting mode (spec: `waitingReason` `file_mode_conflict`): the
 * connection reopens the application at `retryAt`, and a request runs then unless its deadline or
 * queue TTL comes first. Nothing fails at once, sync or async; the simulated application counts
 * what it processed, so a request that ended before `retryAt` is shown never to have been sent.
 */

/** A read the simulated application's log can tell apart from every other. */
const probe = (name: string): string => `<CustomerQueryRq><FullName>${name}</FullName></CustomerQueryRq>`;

/** How many documents containing `marker` the simulated application processed. */
function processed(eu: ConnectedEndUser, marker: string): number {
  return eu.connector.events.filter((e) => e.type === "request_processed" && e.requestXml.includes(marker))
    .length;
}

/** The diagnosis cause that carries `retryAt`. */
function retryAtOf(request: RequestResource): string | undefined {
  const diagnosis = (
    request as unknown as { diagnosis: { probableCauses: { code: string; retryAt?: string }[] } }
  ).diagnosis;
  return diagnosis?.probableCauses.find((c) => c.code === "file_mode_conflict")?.retryAt;
}

/** The connector meets the conflict: its session ends with the file still held elsewhere. */
async function meetConflict(sys: System, eu: ConnectedEndUser): Promise<void> {
  sys.ledger.setFault({ kind: "file_mode_conflict" });
  const report = await eu.connector.runSession();
  assert.equal(report.outcome, "connection_failed", report.message);
  assert.equal((await connectionOf(sys, eu.endUserId)).statusReason, "LEDGER_FILE_MODE_CONFLICT");
}

/**
 * The connector checks in again and a sync call queued after everything else runs: the queue is
 * FIFO, so whatever came before was claimed or skipped by then.
 */
async function connectorReturns(sys: System, eu: ConnectedEndUser, marker: string): Promise<void> {
  void eu.connector.runSession();
  const res = await sys.call("POST", passthroughPath(eu.endUserId), { body: probe(marker) });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(processed(eu, marker), 1);
}

test("file mode conflict: requests wait and run at retryAt, unless their deadline or queue TTL comes first", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Single User Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);

  await t.test("a sync call waits through the conflict and runs when the connector returns", async () => {
    let settled = false;
    const first = sys
      .call("POST", passthroughPath(eu.endUserId), { body: probe("Waits-1") })
      .finally(() => (settled = true));
    await newestRequestIs(sys, "queued");
    await meetConflict(sys, eu);
    assert.equal(settled, false, "the sync caller is not failed at once");
    const list = await json<{ data: RequestResource[] }>(await sys.call("GET", "/v1/requests?limit=1"));
    const waiting = await requestById(sys, list.data[0]?.id ?? "");
    assert.equal(waiting.status, "queued");
    assert.equal(waiting.waitingReason, "file_mode_conflict");
    const retryAt = retryAtOf(waiting);
    assert.ok(retryAt, "the file_mode_conflict cause carries retryAt");

    // A sync call made while the conflict is known is queued too, not refused at admission.
    const second = sys.call("POST", passthroughPath(eu.endUserId), { body: probe("Waits-2") });
    await eventually("both sync calls queued", async () => {
      const queued = await json<{ data: RequestResource[] }>(
        await sys.call("GET", "/v1/requests?status=queued"),
      );
      return queued.data.length === 2;
    });

    // The end user switches to multi-user mode; the connector checks in at retryAt.
    sys.ledger.setFault(null);
    await sys.fakeClock?.advance(Math.max(0, Date.parse(retryAt) - sys.clock.now()));
    void eu.connector.runSession();
    for (const res of [await first, await second]) assert.equal(res.status, 200, await res.clone().text());
    assert.equal(processed(eu, "Waits-1"), 1);
    assert.equal(processed(eu, "Waits-2"), 1);
    assert.equal((await connectionOf(sys, eu.endUserId)).status, "online");
  });

  await t.test("a sync caller's deadline first: 504 REQUEST_TIMEOUT_NOT_SENT, never sent", async () => {
    await stopConnector(sys, eu);
    const pending = sys.call("POST", passthroughPath(eu.endUserId), {
      body: probe("Deadline"),
      headers: { "svc-timeout-seconds": "5" },
    });
    await newestRequestIs(sys, "queued");
    await meetConflict(sys, eu);
    const res = await advanceUntil(sys, pending);
    assert.equal(res.status, 504, await res.clone().text());
    const body = await json<{ error: { code: string; requestId: string } }>(res);
    assert.equal(body.error.code, "REQUEST_TIMEOUT_NOT_SENT");
    sys.ledger.setFault(null);
    await connectorReturns(sys, eu, "Runs-After-Timeout");
    assert.equal((await requestById(sys, body.error.requestId)).status, "canceled");
    assert.equal(processed(eu, "Deadline"), 0, "the connector's return does not send it");
  });

  await t.test(
    "an async request's queue TTL first: REQUEST_EXPIRED, never sent when the connector returns",
    async () => {
      await stopConnector(sys, eu);
      const accepted = await json<RequestResource>(
        await sys.call("POST", passthroughPath(eu.endUserId), {
          body: probe("Expires"),
          headers: { prefer: "respond-async", "svc-queue-ttl-seconds": "10" },
        }),
      );
      await meetConflict(sys, eu);
      assert.equal((await requestById(sys, accepted.id)).waitingReason, "file_mode_conflict");
      await sys.fakeClock?.advance(11_000);
      // Nobody reads it before the connector returns: the claim itself must refuse to send it.
      sys.ledger.setFault(null);
      await connectorReturns(sys, eu, "Runs-After-Ttl");
      assert.equal(processed(eu, "Expires"), 0, "an expired request is never sent");
      const expired = await requestById(sys, accepted.id);
      assert.equal(expired.status, "canceled");
      assert.equal(expired.error?.code, "REQUEST_EXPIRED");
      assert.equal(expired.sentAt, null);
    },
  );
});
