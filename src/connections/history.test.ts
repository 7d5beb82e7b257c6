import assert from "node:assert/strict";
import { test } from "node:test";
import { availabilitySegments, availabilityState, secondsByState } from "./history.ts";

const H = 3600_000;
const T0 = Date.UTC(2026, 10, 1);

const change = (previousStatus: string, status: string, hours: number) => ({
  previousStatus,
  status,
  atMs: T0 + hours * H,
});

test("no change inside the window: the status now, all along", () => {
  const segments = availabilitySegments(T0, T0 + 24 * H, [], "online");
  assert.deepEqual(segments, [{ state: "online", fromMs: T0, toMs: T0 + 24 * H }]);
  assert.deepEqual(secondsByState(segments), {
    online: 24 * 3600,
    offline: 0,
    ledger_unavailable: 0,
    not_set_up: 0,
    disabled: 0,
  });
});

test("the state before the first change is that change's previous status; each change starts a segment", () => {
  const segments = availabilitySegments(
    T0,
    T0 + 10 * H,
    [
      change("online", "offline", 2),
      change("offline", "online", 5),
      change("online", "ledger_unavailable", 8),
    ],
    "ledger_unavailable",
  );
  assert.deepEqual(
    segments.map((s) => [s.state, (s.fromMs - T0) / H, (s.toMs - T0) / H]),
    [
      ["online", 0, 2],
      ["offline", 2, 5],
      ["online", 5, 8],
      ["ledger_unavailable", 8, 10],
    ],
  );
  const seconds = secondsByState(segments);
  assert.equal(seconds.online, 5 * 3600);
  assert.equal(seconds.offline, 3 * 3600);
  assert.equal(seconds.ledger_unavailable, 2 * 3600);
});

test("statuses of one state are joined; changes outside the window are ignored", () => {
  const segments = availabilitySegments(
    T0 + H,
    T0 + 6 * H,
    [
      change("pending_setup", "online", 0.5),
      change("online", "ledger_unavailable", 2),
      change("ledger_unavailable", "company_file_mismatch", 3),
      change("company_file_mismatch", "online", 4),
      change("online", "offline", 7),
    ],
    "online",
  );
  assert.deepEqual(
    segments.map((s) => [s.state, (s.fromMs - T0) / H, (s.toMs - T0) / H]),
    [
      ["online", 1, 2],
      ["ledger_unavailable", 2, 4],
      ["online", 4, 6],
    ],
  );
});

test("every connection status has its state; a status unknown to this version counts as unavailable", () => {
  assert.equal(availabilityState("pending_setup"), "not_set_up");
  assert.equal(availabilityState("disabled"), "disabled");
  assert.equal(availabilityState("company_file_mismatch"), "ledger_unavailable");
  assert.equal(availabilityState("something_new"), "ledger_unavailable");
});
