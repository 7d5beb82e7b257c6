import assert from "node:assert/strict";
import { test } from "node:test";
import { SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { loadSetup } from "../../src/tenancy/auth-sessions.ts";
import { startSystem } from "../../src/testing/system.ts";
import { bringOnline, eventually, json, stopConnector } from "./helpers.ts";
import { WAITING_CONFIG, causesOf, queueRead, readRequest, untilStatus } from "./waiting-helpers.ts";

/**
 * Three probable causes of the spec's diagnosis, each from what the simulated connector does and
 * read back from a waiting Request over HTTP: `web_connector_registration_lost` (the connector
 * checks in with a registration the connection no longer accepts), `other_web_connector_app` (the
 * application refuses the open because another application shares the file, 0x80040422) and
 * `session_interrupted` (a handed-over request lost its answer when the session broke off).
 */

test("web_connector_registration_lost: after the setup is done again, the old registration's check-ins are refused", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Reinstalled Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const clock = sys.fakeClock ?? assert.fail("a fake clock");
  await clock.advance(60_000);
  // The developer sends a new setup link; the end user's connector keeps the registration it has.
  const created = await sys.call("POST", "/v1/auth-sessions", {
    body: { publishableKey: sys.project.keys.publishableLive, endUserId: eu.endUserId },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const authSession = await json<{ id: string; clientSecret: string }>(created);
  const id = await queueRead(sys, eu);
  assert.ok(!(await causesOf(sys, id)).includes("web_connector_registration_lost"), "no evidence yet");
  await clock.advance(60_000); // the connector's next scheduled check-in
  const report = await eu.connector.runSession();
  assert.equal(report.outcome, "invalid_user", report.message);
  const waiting = await readRequest(sys, id);
  assert.equal(waiting.status, "queued");
  assert.equal(waiting.diagnosis?.probableCauses[0]?.code, "web_connector_registration_lost");
  assert.match(waiting.diagnosis?.summary ?? "", /registration/);

  // The end user installs the new registration: its check-in runs the request, and the cause ends.
  const setup = await loadSetup(sys.deps, authSession.id, authSession.clientSecret);
  assert.equal(setup.state, "waiting");
  const renewed = new SimulatedWebConnector({
    qwc: eu.connectorQwc,
    password: setup.state === "waiting" ? setup.password : "",
    application: eu.ledger,
    noOpPauseMs: 20,
  });
  t.after(() => renewed.stop());
  await clock.advance(60_000);
  void renewed.runSession();
  await untilStatus(sys, id, "succeeded");
  await renewed.stop();
  const next = await queueRead(sys, eu);
  assert.ok(!(await causesOf(sys, next)).includes("web_connector_registration_lost"));
});

test("other_web_connector_app: another application shares the company file (0x80040422), ranked before the file mode conflict", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Shared Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  eu.ledger.setFault({ kind: "other_application_sharing" });
  const id = await queueRead(sys, eu);
  const report = await eu.connector.runSession();
  assert.equal(report.outcome, "connection_failed", report.message);
  assert.match(report.message, /^0x80040422/);
  const waiting = await readRequest(sys, id);
  assert.equal(waiting.waitingReason, "file_mode_conflict");
  const causes = waiting.diagnosis?.probableCauses ?? [];
  assert.deepEqual(
    causes.slice(0, 2).map((c) => c.code),
    ["other_web_connector_app", "file_mode_conflict"],
  );
  assert.ok(Date.parse(causes[1]?.retryAt ?? "") > 0, "the conflict still says when it is tried again");
  assert.equal(waiting.diagnosis?.connector.lastConnectionErrorCode, "0x80040422");

  // The other application lets go: the next check-in runs the request.
  eu.ledger.setFault(null);
  void eu.connector.checkInNow();
  await untilStatus(sys, id, "succeeded");
  await stopConnector(sys, eu);
  assert.ok(!(await causesOf(sys, await queueRead(sys, eu))).includes("other_web_connector_app"));
});

test("session_interrupted: a read handed over was never answered, and the next session has not heard the application yet", async (t) => {
  const sys = await startSystem(t, WAITING_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Broken Off Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  // The connector stops right after it received a read, before the application saw it.
  eu.connector.setFault({ kind: "crash_on_hand_over", match: "read" });
  const lost = await queueRead(sys, eu);
  const crashed = await eu.connector.runSession();
  assert.equal(crashed.outcome, "answer_lost", crashed.message);
  assert.equal((await readRequest(sys, lost)).status, "sent", "the service cannot know yet");

  // At its next check-in the application hangs while opening the file (a dialog at start-up).
  eu.ledger.setFault({ kind: "hang_on_open" });
  const next = await queueRead(sys, eu);
  void eu.connector.runSession();
  const interrupted = await untilStatus(sys, lost, "failed");
  assert.equal(interrupted.error?.code, "LEDGER_READ_INTERRUPTED");
  const waiting = await eventually("a session is open for the next read", async () => {
    const read = await readRequest(sys, next);
    return read.diagnosis?.connector.sessionOpen === true ? read : null;
  });
  assert.equal(waiting.diagnosis?.probableCauses[0]?.code, "session_interrupted");
  assert.equal(waiting.diagnosis?.connector.ledgerAnswered, false);

  // The application opens the file: the read runs, and the interruption is history.
  eu.ledger.setFault(null);
  await untilStatus(sys, next, "succeeded");
  await stopConnector(sys, eu);
  assert.ok(!(await causesOf(sys, await queueRead(sys, eu))).includes("session_interrupted"));
});
