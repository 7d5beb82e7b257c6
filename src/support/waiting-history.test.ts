import assert from "node:assert/strict";
import { test } from "node:test";
import { waitingReasonsOf } from "./waiting-history.ts";

const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString();
const change = (s: number, status: string, statusReason: string | null = null) => ({
  status,
  statusReason,
  changedAt: at(s),
});

test("the status at creation and each change before the hand-over, mapped and folded", () => {
  const changes = [
    change(0, "online"),
    change(10, "offline", "INTEGRATION_CONNECTION_NOT_ACTIVE"),
    change(20, "ledger_unavailable", "LEDGER_STARTING"),
    change(25, "ledger_unavailable", "LEDGER_STARTING"),
    change(30, "ledger_unavailable", "LEDGER_CANNOT_START"),
    change(40, "online"),
  ];
  const sentAt = at(40);
  assert.deepEqual(waitingReasonsOf({ createdAt: at(10), sentAt, completedAt: at(41) }, changes, 0), [
    "connector_offline",
    "ledger_starting",
    "ledger_unavailable",
  ]);
  // Made while online, sent before anything changed: no reason the status history shows.
  assert.deepEqual(waitingReasonsOf({ createdAt: at(1), sentAt: at(2), completedAt: at(3) }, changes, 0), []);
  // Made after the connection came back (a change at the hand-over is after it).
  assert.deepEqual(
    waitingReasonsOf({ createdAt: at(40), sentAt: at(40), completedAt: at(41) }, changes, 0),
    [],
  );
  // Still open: its wait runs to the bundle's end.
  assert.deepEqual(
    waitingReasonsOf(
      { createdAt: at(15), sentAt: null, completedAt: null },
      changes.slice(0, 3),
      Date.parse(at(50)),
    ),
    ["connector_offline", "ledger_starting"],
  );
  // Refused at admission: it never waited.
  assert.deepEqual(
    waitingReasonsOf({ createdAt: at(12), sentAt: null, completedAt: at(12) }, changes, 0),
    [],
  );
});
