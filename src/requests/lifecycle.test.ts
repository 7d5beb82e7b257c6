import assert from "node:assert/strict";
import { test } from "node:test";
import { newId } from "../platform/ids.ts";
import { claimNextRequest, findRequestById, insertRequest, type RequestRow } from "../store/requests.ts";
import { findConnectionForEndUser } from "../store/connections.ts";
import { createEndUser } from "../tenancy/end-users.ts";
import { readySession } from "../testing/queue.ts";
import { buildTestApp } from "../testing/harness.ts";
import { transition } from "./engine.ts";
import {
  REQUEST_STATUSES,
  TRANSITIONS,
  TRANSITION_NAMES,
  type TransitionRule,
  applies,
  isAllowed,
  isFinal,
  type RequestStatus,
} from "./lifecycle.ts";
import { newRequestRow } from "./new-request.ts";
import { timelineEntry } from "./timeline.ts";

/**
 * The lifecycle table is what runs: every named transition is tried through the engine on a stored
 * request in every status, of both modes and both kinds, and must move it exactly when the table
 * says so. The (from, to) pairs that can happen are then compared with the list below, written
 * out by hand from the spec's table plus the additions the Request reference documents; a change
 * to the table that adds, drops or widens a transition fails here.
 */
const EXPECTED_PAIRS = [
  // The spec's table.
  "queued→sent",
  "queued→canceled",
  "waiting_for_connection→canceled",
  "sent→succeeded",
  "sent→failed",
  "sent→outcome_unknown",
  // Required by the spec's rules, documented in README "Request lifecycle".
  "queued→failed",
  "queued→waiting_for_connection",
  "waiting_for_connection→queued",
  "outcome_unknown→succeeded",
  "outcome_unknown→failed",
  // Decision 0036: a shared message set refused unprocessed as a whole; its members go again alone.
  "sent→queued",
  // Decision 0046: a Request of several message sets goes back to the queue for its next set, also
  // after its previous set's answer was recovered.
  "outcome_unknown→queued",
].sort();

test("the lifecycle table runs", async (t) => {
  const h = await buildTestApp(t);

  await t.test(
    "every (from, to) pair: the engine moves a request exactly along the table, refusals included",
    async () => {
      const endUser = await createEndUser(
        h.deps,
        { projectId: h.project.project.id, mode: "live" },
        { companyName: "Lifecycle", sourceId: "lifecycle" },
      );
      const insert = async (
        status: RequestStatus,
        mode: "sync" | "async",
        isWrite: boolean,
        step: number,
      ) => {
        const now = h.clock.now();
        const row = newRequestRow(
          {
            id: newId("request"),
            project_id: h.project.project.id,
            is_test: false,
            end_user_id: endUser.id,
            connection_id: null,
            operation_id: "endUsers.passthrough",
            method: "POST",
            path: "/v1/end-users/x/passthrough/ledger_desktop",
            mode,
            status: "queued",
            is_write: isWrite,
            request_xml: "<QBXML/>",
            queue_ttl_expires_at: null,
            idempotency_key_present: false,
            previous_request_id: null,
          },
          now,
        );
        const inserted = await insertRequest(h.deps.db, { ...row, status });
        if (step === 0) return inserted;
        // Past the first step of a Request of several message sets (decision 0046).
        await h.deps.db.updateTable("requests").set({ step }).where("id", "=", inserted.id).execute();
        return { ...inserted, step };
      };

      const happened = new Set<string>();
      for (const name of TRANSITION_NAMES) {
        for (const from of REQUEST_STATUSES) {
          for (const mode of ["sync", "async"] as const) {
            for (const [isWrite, step] of [
              [true, 0],
              [false, 0],
              [true, 1],
              [false, 1],
            ] as const) {
              const row = await insert(from, mode, isWrite, step);
              const moved = await transition(h.deps, row, name, {}, `test ${name}`);
              const after = (await findRequestById(h.deps.db, row.id)) as RequestRow;
              const label = `${name} on a ${mode} ${isWrite ? "write" : "read"} in ${from} at step ${step}`;
              if (applies(name, row)) {
                assert.ok(moved, `${label} moves it`);
                assert.equal(after.status, TRANSITIONS[name].to, label);
                assert.equal(after.timeline.at(-1)?.status, TRANSITIONS[name].to, `${label}: timeline`);
                happened.add(`${from}→${after.status}`);
              } else {
                assert.equal(moved, null, `${label} is refused`);
                assert.equal(after.status, from, `${label} leaves it`);
                assert.equal(after.timeline.length, 1, `${label} writes no timeline entry`);
              }
            }
          }
        }
      }
      assert.deepEqual([...happened].sort(), EXPECTED_PAIRS);
      for (const from of REQUEST_STATUSES)
        for (const to of REQUEST_STATUSES)
          assert.equal(isAllowed(from, to), EXPECTED_PAIRS.includes(`${from}→${to}`), `${from}→${to}`);
    },
  );

  await t.test("the connector's claim takes its statuses from the hand-over it is given", async () => {
    const endUser = await createEndUser(
      h.deps,
      { projectId: h.project.project.id, mode: "live" },
      { companyName: "Claim", sourceId: "claim" },
    );
    // An auth session creates the end user's connection.
    const session = await h.app.inject({
      method: "POST",
      url: "/v1/auth-sessions",
      headers: { authorization: `Bearer ${h.project.keys.secretLive}` },
      payload: { publishableKey: h.project.keys.publishableLive, endUserId: endUser.id },
    });
    assert.equal(session.statusCode, 201, session.body);
    const connectionId = (await findConnectionForEndUser(h.deps.db, h.project.project.id, endUser.id))?.id;
    assert.ok(connectionId);
    const now = new Date(h.clock.now());
    const row = newRequestRow(
      {
        id: newId("request"),
        project_id: h.project.project.id,
        is_test: false,
        end_user_id: endUser.id,
        connection_id: connectionId,
        operation_id: "endUsers.passthrough",
        method: "POST",
        path: "/x",
        mode: "async",
        status: "waiting_for_connection",
        is_write: false,
        request_xml: "<QBXML/>",
        queue_ttl_expires_at: null,
        idempotency_key_present: false,
        previous_request_id: null,
      },
      now.getTime(),
    );
    await insertRequest(h.deps.db, row);
    await readySession(h, connectionId, "t");
    const claim = (from: readonly string[]) =>
      claimNextRequest(h.deps.db, {
        connectionId,
        ticketHash: "t",
        xmlVersion: "13.0",
        now,
        messageSetId: "m",
        setMaxRequests: 10,
        setMaxBytes: 1024 * 1024,
        handOver: { from, to: TRANSITIONS.hand_over.to },
        expirable: TRANSITIONS.queue_ttl.from,
        entry: timelineEntry("sent", "test", now.getTime(), now),
        spacingMs: 1000,
        unsettled: ["queued", "waiting_for_connection", "sent", "outcome_unknown"],
      });
    assert.deepEqual(
      (await claim(TRANSITIONS.hand_over.from)).claimed,
      [],
      "the table hands over only queued",
    );
    assert.equal(
      (await claim(["waiting_for_connection"])).claimed[0]?.id,
      row.id,
      "the SQL reads the given from",
    );
    assert.equal((await findRequestById(h.deps.db, row.id))?.status, "sent");
  });
});

test("final statuses have no way out; a sent request is never canceled, and re-queued only when nothing of it ran", () => {
  assert.deepEqual(
    REQUEST_STATUSES.filter((s) => isFinal(s)),
    ["succeeded", "failed", "canceled"],
  );
  for (const to of ["canceled", "waiting_for_connection", "sent"] as const)
    assert.equal(isAllowed("sent", to), false, `sent→${to}`);
  assert.equal(isAllowed("outcome_unknown", "sent"), false);
  // The ways back to the queue: the message set it shared was refused unprocessed (decision 0036),
  // or a Request of several message sets was answered one set and goes on with the next (decision
  // 0046; from outcome_unknown only with the set's answer recovered). The same set is never sent again.
  const back = TRANSITION_NAMES.filter((name) => {
    const rule: TransitionRule = TRANSITIONS[name];
    return rule.to === "queued" && rule.from.some((from) => from === "sent" || from === "outcome_unknown");
  });
  assert.deepEqual(back, ["set_refused", "next_step"]);
  assert.deepEqual(TRANSITIONS.set_refused.from, ["sent"]);
});

test("guards: outcome_unknown only for writes, read_interrupted only for reads, timeouts by mode", () => {
  const req = (status: string, mode: string, is_write: boolean) => ({ status, mode, is_write });
  assert.equal(applies("result_lost", req("sent", "sync", false)), false);
  assert.equal(applies("read_interrupted", req("sent", "sync", true)), false);
  assert.equal(applies("sync_timeout", req("queued", "async", false)), false);
  assert.equal(applies("queue_ttl", req("queued", "sync", false)), false);
  assert.equal(applies("ledger_unreachable", req("queued", "async", false)), false);
  assert.equal(applies("connector_lost", req("queued", "sync", false)), false);
  // Past its first answered message set, a Request is never ended unsent (decision 0046).
  for (const name of ["cancel", "sync_timeout", "queue_ttl", "ledger_unreachable"] as const) {
    const mode = name === "queue_ttl" ? "async" : "sync";
    assert.equal(applies(name, { ...req("queued", mode, true), step: 0 }), true, `${name} at step 0`);
    assert.equal(applies(name, { ...req("queued", mode, true), step: 1 }), false, `${name} at step 1`);
  }
  assert.equal(applies("connector_lost", { ...req("queued", "async", true), step: 1 }), true);
});
