import assert from "node:assert/strict";
import { test } from "node:test";
import { hashSecret } from "../platform/secrets.ts";
import { updateSession } from "../store/connector-sessions.ts";
import type { ObservedQuery } from "../store/database.ts";
import { openTestStore } from "../testing/harness.ts";
import { SoapByHand } from "../testing/soap-by-hand.ts";
import { startSystem } from "../testing/system.ts";

/**
 * What an idle session costs (issue 8, P4): each hold period the connector asks again, and the
 * service's statements for that call are few. The activity stamps of the session and of its
 * connection are one statement; a hold that ends with nothing to clear writes nothing; a stale
 * error is still cleared so that getLastError says NoOp.
 */
test("an idle re-ask: one activity stamp for session and connection, no write at the hold's end", async (t) => {
  const seen: ObservedQuery[] = [];
  const opened = await openTestStore({ onQuery: (query) => seen.push(query) });
  const sys = await startSystem(null, {
    store: opened.store,
    config: { CONNECTOR_HOLD_MS: "30", RATE_LIMIT_MAX: "1000000" },
  });
  t.after(async () => {
    await sys.close();
    await opened.store.close();
    await opened.drop();
  });
  const eu = await sys.connectEndUser({ companyName: "Idle Co" });
  const soap = SoapByHand.for(sys, eu);
  const ticket = await soap.ticket();
  assert.equal(await soap.send(ticket, eu.companyFilePath), "", "the first hold ends empty");
  assert.equal(await soap.lastError(ticket), "NoOp");

  // The connector asks again after its pause; the stamps are due (more than a second later).
  await sys.fakeClock?.advance(2000);
  seen.length = 0;
  assert.equal(await soap.send(ticket, eu.companyFilePath), "");
  const statements = seen.map((q) => q.sql.replace(/\s+/g, " "));
  const stamps = statements.filter((q) => q.includes(`"last_activity_at"`) || q.includes(`"last_seen_at"`));
  assert.equal(stamps.length, 1, `one statement stamps both:\n${stamps.join("\n")}`);
  assert.match(stamps[0] ?? "", /update "connector_sessions" set "last_activity_at"/);
  assert.match(stamps[0] ?? "", /update "connections" set "last_seen_at"/);
  assert.deepEqual(
    statements.filter((q) => q.includes(`"last_error"`)),
    [],
    "nothing to clear, nothing written",
  );
  const session = await opened.store.db
    .selectFrom("connector_sessions")
    .select(["last_activity_at"])
    .where("ticket_hash", "=", hashSecret(ticket))
    .executeTakeFirstOrThrow();
  const connection = await opened.store.db
    .selectFrom("connections")
    .select(["last_seen_at"])
    .where("id", "=", eu.connectionId)
    .executeTakeFirstOrThrow();
  assert.equal(session.last_activity_at.getTime(), sys.clock.now());
  assert.equal(connection.last_seen_at?.getTime(), sys.clock.now());

  // A stale error is still cleared when the hold ends empty.
  await updateSession(opened.store.db, hashSecret(ticket), { last_error: "stale" });
  assert.equal(await soap.send(ticket, eu.companyFilePath), "");
  assert.equal(await soap.lastError(ticket), "NoOp");
});
