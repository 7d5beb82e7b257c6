import assert from "node:assert/strict";
import { test } from "node:test";
import { buildTestApp } from "../testing/harness.ts";
import { connectionOf, queueRequest } from "../testing/queue.ts";
import { nextWork } from "./engine.ts";

/**
 * Background requests (the change feed's polls) run at low priority in their connection's queue:
 * a developer's request queued after them is handed to the connector first (issue 9 item 5).
 */
test("a developer's request is handed out before background requests queued earlier", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  const poll1 = await queueRequest(h, target, { background: true });
  await queueRequest(h, target, { background: true });
  const developer = await queueRequest(h, target);
  const first = await nextWork(h.deps, target.connectionId, target.ticketHash, "16.0");
  assert.equal(
    first?.kind === "request" ? first.rows[0]?.id : null,
    developer,
    "the developer's call goes first",
  );
  // Once it is answered the background requests follow, oldest first.
  await h.deps.db.updateTable("requests").set({ status: "succeeded" }).where("id", "=", developer).execute();
  const second = await nextWork(h.deps, target.connectionId, target.ticketHash, "16.0");
  assert.equal(second?.kind === "request" ? second.rows[0]?.id : null, poll1);
});
