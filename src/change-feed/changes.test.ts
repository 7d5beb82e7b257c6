import assert from "node:assert/strict";
import { test } from "node:test";
import { classify, chunks, DELETED_REVISION, type ListedRecord } from "./changes.ts";

const WINDOW_START = Date.parse("2026-01-15T12:00:00Z");
const customer = (id: string, revisionNumber: string, createdAt: string): ListedRecord => ({
  id,
  objectType: "ledger_customer",
  revisionNumber,
  createdAt,
});

test("a record created in the window is created, an older one modified in it is updated", () => {
  const { changes, seen } = classify(
    [
      customer("80000010-1", "100", "2026-01-15T12:00:05Z"),
      customer("80000001-1", "7", "2025-06-01T09:00:00Z"),
    ],
    [],
    new Map(),
    WINDOW_START,
  );
  assert.deepEqual(changes, [
    { id: "80000010-1", objectType: "ledger_customer", revisionNumber: "100", changeKind: "created" },
    { id: "80000001-1", objectType: "ledger_customer", revisionNumber: "7", changeKind: "updated" },
  ]);
  assert.deepEqual(seen, [
    { objectId: "80000010-1", revision: "100" },
    { objectId: "80000001-1", revision: "7" },
  ]);
});

test("a revision reported by an earlier (overlapping) poll is not reported again; a newer one is an update", () => {
  const seen = new Map([["80000010-1", new Set(["100"])]]);
  const again = classify([customer("80000010-1", "100", "2026-01-15T12:00:05Z")], [], seen, WINDOW_START);
  assert.deepEqual(again.changes, []);
  assert.deepEqual(again.seen, []);
  const newer = classify([customer("80000010-1", "101", "2026-01-15T12:00:05Z")], [], seen, WINDOW_START);
  assert.deepEqual(
    newer.changes.map((c) => c.changeKind),
    ["updated"],
    "created in the window, but already reported: an update",
  );
});

test("a deletion is reported once, and wins over a listing of the same record in that poll", () => {
  const deleted = [{ id: "80000010-1", objectType: "ledger_customer" }];
  const first = classify(
    [customer("80000010-1", "101", "2026-01-15T12:00:05Z")],
    deleted,
    new Map(),
    WINDOW_START,
  );
  assert.deepEqual(first.changes, [
    { id: "80000010-1", objectType: "ledger_customer", revisionNumber: null, changeKind: "deleted" },
  ]);
  const seen = new Map([["80000010-1", new Set([DELETED_REVISION])]]);
  assert.deepEqual(classify([], deleted, seen, WINDOW_START).changes, []);
});

test("the same record twice in one poll is reported once", () => {
  const record = customer("80000010-1", "100", "2026-01-15T12:00:05Z");
  assert.equal(classify([record, record], [], new Map(), WINDOW_START).changes.length, 1);
});

test("a record without a creation time is an update", () => {
  const { changes } = classify(
    [{ id: "1-1", objectType: "ledger_invoice", revisionNumber: "5", createdAt: null }],
    [],
    new Map(),
    WINDOW_START,
  );
  assert.equal(changes[0]?.changeKind, "updated");
});

test("chunks splits into pieces of at most the size", () => {
  assert.deepEqual(chunks([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepEqual(chunks([], 100), []);
});
