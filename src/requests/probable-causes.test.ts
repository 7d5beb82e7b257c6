import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConnectorSessionRow } from "../store/connector-sessions.ts";
import { countSilent } from "./diagnosis.ts";
import {
  SHARED_CONNECTOR_EVIDENCE_MS,
  probableCausesOf,
  scheduleDrifted,
  waitingReasonOf,
  type Evidence,
} from "./probable-causes.ts";

/**
 * The reasoning of diagnosis as a pure function: each waiting reason and each probable cause code
 * from the evidence that produces it, and the ranking between competing evidence. End-to-end
 * tests (test/e2e/waiting-*.test.ts) produce the same evidence through the simulated connector.
 */
const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const MINUTE = 60_000;

/** A connection online, seen just now, no session, a request first in the queue. */
function evidence(overrides: Partial<Evidence> = {}): Evidence {
  return {
    nowMs: NOW,
    request: { waiting: true, queuePosition: 1, sentAtMs: null },
    status: "online",
    storedStatus: "online",
    statusReason: null,
    retryAtMs: null,
    lastSeenAtMs: NOW - 1000,
    checkInGapMs: MINUTE,
    sharedConnectorAtMs: null,
    loginRefusedAtMs: null,
    sessionInterruptedAtMs: null,
    lastConnectionErrorCode: null,
    session: null,
    silentSessions: 0,
    inFlightSentAtMs: null,
    recoveriesPending: 0,
    checkInIntervalMs: MINUTE,
    answerWaitMs: 30_000,
    ...overrides,
  };
}

const codes = (e: Evidence): string[] => probableCausesOf(e).map((c) => c.code);
const unavailable = (statusReason: string): Partial<Evidence> => ({
  status: "ledger_unavailable",
  storedStatus: "ledger_unavailable",
  statusReason,
});

test("waiting reasons, in order of precedence", () => {
  assert.equal(waitingReasonOf(evidence()), "awaiting_check_in");
  assert.equal(
    waitingReasonOf(evidence({ request: { waiting: false, queuePosition: null, sentAtMs: NOW } })),
    null,
  );
  const opening = { session: { openedAtMs: NOW - 5000, ledgerAnswered: false } };
  assert.equal(waitingReasonOf(evidence(opening)), "opening_company_file");
  const stuck = { session: { openedAtMs: NOW - 31_000, ledgerAnswered: false } };
  assert.equal(waitingReasonOf(evidence(stuck)), "ledger_not_responding");
  assert.equal(waitingReasonOf(evidence({ inFlightSentAtMs: NOW - 1000 })), "behind_other_requests");
  assert.equal(waitingReasonOf(evidence({ inFlightSentAtMs: NOW - 31_000 })), "ledger_not_responding");
  assert.equal(
    waitingReasonOf(evidence({ request: { waiting: true, queuePosition: 2, sentAtMs: null }, ...opening })),
    "behind_other_requests",
  );
  assert.equal(waitingReasonOf(evidence(unavailable("LEDGER_CANNOT_START"))), "ledger_unavailable");
  assert.equal(waitingReasonOf(evidence(unavailable("LEDGER_STARTING"))), "ledger_starting");
  assert.equal(waitingReasonOf(evidence(unavailable("LEDGER_MODAL_DIALOG_OPEN"))), "ledger_not_responding");
  assert.equal(waitingReasonOf(evidence(unavailable("LEDGER_FILE_MODE_CONFLICT"))), "file_mode_conflict");
  assert.equal(
    waitingReasonOf(evidence({ storedStatus: "company_file_mismatch", status: "company_file_mismatch" })),
    "ledger_unavailable",
  );
  assert.equal(waitingReasonOf(evidence({ status: "offline", ...opening })), "connector_offline");
  assert.equal(
    waitingReasonOf(evidence({ status: "offline", recoveriesPending: 1 })),
    "write_recovery_pending",
    "recovery blocks the queue before anything else",
  );
});

test("each probable cause code from its evidence", () => {
  assert.deepEqual(codes(evidence()), ["awaiting_check_in"]);
  assert.equal(codes(evidence({ recoveriesPending: 1 }))[0], "write_recovery_pending");
  assert.equal(codes(evidence(unavailable("LEDGER_MODAL_DIALOG_OPEN")))[0], "ledger_modal_dialog");
  assert.equal(codes(evidence(unavailable("LEDGER_CANNOT_START")))[0], "ledger_closed_no_unattended_access");
  assert.equal(codes(evidence(unavailable("LEDGER_STARTING")))[0], "ledger_starting");
  assert.equal(codes(evidence(unavailable("LEDGER_WRONG_COMPANY_FILE_OPEN")))[0], "wrong_company_file");
  assert.equal(codes(evidence(unavailable("LEDGER_CONNECTION_ERROR")))[0], "ledger_unavailable");
  const conflict = probableCausesOf(
    evidence({ ...unavailable("LEDGER_FILE_MODE_CONFLICT"), retryAtMs: NOW + MINUTE }),
  );
  assert.deepEqual(conflict[0], {
    code: "file_mode_conflict",
    retryAt: new Date(NOW + MINUTE).toISOString(),
  });
  assert.equal(codes(evidence({ silentSessions: 2 }))[0], "ledger_modal_dialog");
  assert.equal(codes(evidence({ sharedConnectorAtMs: NOW - MINUTE }))[0], "same_connector_two_computers");
  assert.deepEqual(codes(evidence({ status: "offline" })), ["computer_offline", "web_connector_closed"]);
  assert.deepEqual(codes(evidence({ status: "offline", checkInGapMs: 30 * MINUTE })), [
    "web_connector_schedule_changed",
    "computer_offline",
    "web_connector_closed",
  ]);
  assert.equal(
    codes(evidence({ request: { waiting: true, queuePosition: 3, sentAtMs: null } }))[0],
    "behind_other_requests",
  );
  assert.equal(
    codes(evidence({ request: { waiting: false, queuePosition: null, sentAtMs: NOW - MINUTE } }))[0],
    "ledger_processing",
  );
});

test("ranking: direct evidence beats inference, and old evidence fades", () => {
  // A dialog reported by the application outranks the inference from silent sessions' count.
  assert.deepEqual(
    codes(evidence({ ...unavailable("LEDGER_CANNOT_START"), silentSessions: 3 })).slice(0, 2),
    ["ledger_closed_no_unattended_access", "ledger_modal_dialog"],
  );
  // Two computers replacing each other explain a wrong company file and silence.
  assert.deepEqual(
    codes(evidence({ ...unavailable("LEDGER_WRONG_COMPANY_FILE_OPEN"), sharedConnectorAtMs: NOW })).slice(
      0,
      2,
    ),
    ["same_connector_two_computers", "wrong_company_file"],
  );
  // Once offline, the application's last report is older than the silence.
  assert.deepEqual(codes(evidence({ ...unavailable("LEDGER_CANNOT_START"), status: "offline" })), [
    "computer_offline",
    "web_connector_closed",
    "ledger_closed_no_unattended_access",
  ]);
  // A second computer seen long ago is no longer evidence.
  assert.ok(
    !codes(evidence({ sharedConnectorAtMs: NOW - SHARED_CONNECTOR_EVIDENCE_MS - 1 })).includes(
      "same_connector_two_computers",
    ),
  );
  // A drifted schedule also explains a check-in that is late but not yet offline.
  assert.deepEqual(codes(evidence({ checkInGapMs: 30 * MINUTE })), [
    "web_connector_schedule_changed",
    "awaiting_check_in",
  ]);
});

test("schedule drift: far beyond the configured interval only", () => {
  assert.equal(scheduleDrifted(evidence({ checkInGapMs: null })), false);
  assert.equal(scheduleDrifted(evidence({ checkInGapMs: 2 * MINUTE })), false);
  assert.equal(scheduleDrifted(evidence({ checkInGapMs: 2 * MINUTE + 1 })), true);
  assert.equal(
    scheduleDrifted(evidence({ checkInIntervalMs: 10_000, checkInGapMs: 70_000 })),
    false,
    "one minute of slack",
  );
  assert.equal(scheduleDrifted(evidence({ checkInIntervalMs: 10_000, checkInGapMs: 70_001 })), true);
});

function session(overrides: Partial<ConnectorSessionRow>): ConnectorSessionRow {
  return {
    ticket_hash: "t",
    connection_id: "conn",
    phase: "closed",
    state: "closed",
    last_error: null,
    recovery_message_set_id: null,
    connection_errors: 0,
    company_file_path: null,
    xml_version: null,
    created_at: new Date(NOW - 10 * MINUTE),
    last_activity_at: new Date(NOW - 10 * MINUTE),
    last_work_at: new Date(NOW - 10 * MINUTE),
    closed_at: new Date(NOW - 9 * MINUTE),
    instance_id: null,
    ledger_answered_at: null,
    personal_data_allowed: null,
    ...overrides,
  };
}

test("silentSessions: consecutive newest sessions that never heard the application", () => {
  const silent = session({});
  const answered = session({ ledger_answered_at: new Date(NOW - 10 * MINUTE) });
  const refused = session({ ledger_answered_at: new Date(NOW - 10 * MINUTE) });
  const failedOpen = session({ connection_errors: 1 });
  const young = session({
    phase: "opened",
    state: "open",
    created_at: new Date(NOW - 1000),
    closed_at: null,
  });
  const old = session({
    phase: "opened",
    state: "open",
    created_at: new Date(NOW - 31_000),
    closed_at: null,
  });
  assert.equal(countSilent([], NOW, 30_000), 0);
  assert.equal(countSilent([silent, silent, answered, silent], NOW, 30_000), 2);
  assert.equal(countSilent([young, silent], NOW, 30_000), 1, "a young open session is skipped");
  assert.equal(countSilent([old, silent], NOW, 30_000), 2);
  assert.equal(countSilent([refused, silent], NOW, 30_000), 0, "a refused company file is an answer");
  assert.equal(countSilent([failedOpen, silent], NOW, 30_000), 0, "a connection error is an answer");
});

test("a refused login since the last check-in: web_connector_registration_lost ranks first, and a later check-in ends it", () => {
  const refused = { loginRefusedAtMs: NOW - 1000, lastSeenAtMs: NOW - 5 * MINUTE };
  assert.equal(codes(evidence(refused))[0], "web_connector_registration_lost");
  const offline = { ...refused, status: "offline", storedStatus: "offline" };
  assert.equal(
    codes(evidence(offline))[0],
    "web_connector_registration_lost",
    "beats the silence it explains",
  );
  const since = { loginRefusedAtMs: NOW - 5 * MINUTE, lastSeenAtMs: NOW - 1000 };
  assert.ok(!codes(evidence(since)).includes("web_connector_registration_lost"));
});

test("0x80040422 at the open: other_web_connector_app before the file mode conflict it is reported as", () => {
  const conflict = { ...unavailable("LEDGER_FILE_MODE_CONFLICT"), retryAtMs: NOW + MINUTE };
  assert.deepEqual(codes(evidence({ ...conflict, lastConnectionErrorCode: "0x80040422" })).slice(0, 2), [
    "other_web_connector_app",
    "file_mode_conflict",
  ]);
  assert.ok(
    !codes(evidence({ ...conflict, lastConnectionErrorCode: "0x80040410" })).includes(
      "other_web_connector_app",
    ),
  );
  // Only while the application is unreachable: an old code on an online connection proves nothing.
  assert.ok(!codes(evidence({ lastConnectionErrorCode: "0x80040422" })).includes("other_web_connector_app"));
});

test("an interrupted session: session_interrupted for what waits, after a pending recovery, never for a running request", () => {
  assert.equal(codes(evidence({ sessionInterruptedAtMs: NOW - 1000 }))[0], "session_interrupted");
  assert.deepEqual(
    codes(evidence({ sessionInterruptedAtMs: NOW - 1000, recoveriesPending: 1 })).slice(0, 2),
    ["write_recovery_pending", "session_interrupted"],
  );
  const running = { request: { waiting: false, queuePosition: null, sentAtMs: NOW - 1000 } };
  assert.ok(
    !codes(evidence({ ...running, sessionInterruptedAtMs: NOW - 1000 })).includes("session_interrupted"),
  );
});
