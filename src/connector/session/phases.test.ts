import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  findSession,
  type ConnectorSessionRow,
  type SessionChanges,
} from "../../store/connector-sessions.ts";
import { buildTestApp, type TestApp } from "../../testing/harness.ts";
import { connectionOf, readySession } from "../../testing/queue.ts";
import {
  OPEN_PHASES,
  SESSION_PHASES,
  SESSION_TRANSITIONS,
  moveSession,
  type SessionPhase,
  type SessionTransitionName,
} from "./phases.ts";

/**
 * The session machine's table, driven through the store: every named transition from every phase.
 * A transition moves a session only from the phases it lists, to the phase it names, and writes
 * exactly the columns it lists; from any other phase it changes nothing and says so (null).
 */
let h: TestApp | undefined;
let connectionId = "";
let sessions = 0;
before(async () => {
  h = await buildTestApp(null);
  connectionId = (await connectionOf(h)).connectionId;
});
after(() => h?.close());

/** A session of the connection, in `phase`. */
async function sessionIn(phase: SessionPhase): Promise<ConnectorSessionRow> {
  assert.ok(h);
  sessions += 1;
  const ticketHash = `phase-test-${sessions}`;
  await readySession(h, connectionId, ticketHash);
  await h.deps.db
    .updateTable("connector_sessions")
    .set({ phase, recovery_message_set_id: phase === "recovering" ? "{set}" : null })
    .where("ticket_hash", "=", ticketHash)
    .execute();
  const row = await findSession(h.deps.db, ticketHash);
  assert.ok(row);
  return row;
}

/** A value for each column a transition may write, different from what a new session holds. */
const VALUES: Required<SessionChanges> = {
  last_error: "something to say",
  recovery_message_set_id: "{other-set}",
  connection_errors: 3,
  company_file_path: "C:\\Files\\Other.qbw",
  xml_version: "13.0",
  last_activity_at: new Date(Date.UTC(2030, 0, 1)),
  last_work_at: new Date(Date.UTC(2030, 0, 2)),
  closed_at: new Date(Date.UTC(2030, 0, 3)),
  instance_id: "inst_elsewhere",
  ledger_answered_at: new Date(Date.UTC(2030, 0, 4)),
  personal_data_allowed: true,
};

const COLUMNS = Object.keys(VALUES) as Array<keyof SessionChanges>;

void describe("the connector session's phase table", () => {
  void it("knows every phase, and every transition starts and ends in one", () => {
    for (const [name, transition] of Object.entries(SESSION_TRANSITIONS)) {
      for (const from of transition.from) assert.ok(SESSION_PHASES.includes(from), `${name} from ${from}`);
      assert.ok(transition.to === "stay" || SESSION_PHASES.includes(transition.to), name);
      assert.ok(!transition.from.some((from: SessionPhase) => from === "closed"), `${name}: closed is final`);
    }
    assert.deepEqual([...OPEN_PHASES].sort(), SESSION_PHASES.filter((p) => p !== "closed").sort());
  });

  for (const name of Object.keys(SESSION_TRANSITIONS) as SessionTransitionName[]) {
    const transition = SESSION_TRANSITIONS[name];
    for (const phase of SESSION_PHASES) {
      const allowed = (transition.from as readonly SessionPhase[]).includes(phase);
      void it(`${name} from ${phase}: ${allowed ? `moves to ${transition.to}` : "changes nothing"}`, async () => {
        assert.ok(h);
        const before = await sessionIn(phase);
        // Every column offered: only the transition's own may be written.
        const moved = await moveSession(h.deps, before.ticket_hash, name, VALUES as never);
        const after = await findSession(h.deps.db, before.ticket_hash);
        assert.ok(after);
        if (!allowed) {
          assert.equal(moved, null);
          assert.deepEqual(after, before, "untouched");
          return;
        }
        assert.deepEqual(moved, after);
        assert.equal(after.phase, transition.to === "stay" ? phase : transition.to);
        assert.equal(after.state, after.phase === "closed" ? "closed" : "open", "state follows the phase");
        for (const column of COLUMNS) {
          const written = (transition.writes as readonly string[]).includes(column);
          assert.deepEqual(after[column], written ? VALUES[column] : before[column], `${name}: ${column}`);
        }
      });
    }
  }
});
