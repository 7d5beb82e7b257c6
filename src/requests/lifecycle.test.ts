import assert from "node:assert/strict";
import { test } from "node:test";
import { REQUEST_STATUSES, TRANSITIONS, sourcesOf } from "./lifecycle.ts";

test("final statuses have no way out", () => {
  for (const status of ["succeeded", "failed", "canceled"] as const)
    assert.deepEqual(TRANSITIONS[status], []);
});

test("a sent request can never be canceled or sent again", () => {
  assert.ok(!TRANSITIONS.sent.includes("canceled"));
  assert.ok(!TRANSITIONS.sent.includes("queued"));
  assert.ok(!TRANSITIONS.outcome_unknown.includes("sent"));
  assert.deepEqual(sourcesOf("canceled").sort(), ["queued", "waiting_for_connection"]);
});

test("every status is reachable from queued", () => {
  const seen = new Set<string>(["queued"]);
  const frontier = ["queued"] as (typeof REQUEST_STATUSES)[number][];
  while (frontier.length) {
    const next = frontier.pop()!;
    for (const to of TRANSITIONS[next]) {
      if (!seen.has(to)) {
        seen.add(to);
        frontier.push(to);
      }
    }
  }
  assert.deepEqual([...seen].sort(), [...REQUEST_STATUSES].sort());
});
