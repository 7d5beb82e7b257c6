import assert from "node:assert/strict";
import { test } from "node:test";
import { ActivityStamps } from "../../src/store/activity-stamps.ts";
import type { ObservedQuery } from "../../src/store/database.ts";
import { PostgresNotifier } from "../../src/store/notifier.ts";
import { openTestStore } from "../../src/testing/harness.ts";
import { startSystem, type ConnectedEndUser } from "../../src/testing/system.ts";
import { READ, bringOnline, eventually, passthroughPath, stopConnector } from "./helpers.ts";

/**
 * The statements of a sync round trip through a connector in session (issue 17, decision 0027),
 * counted with the store's query observer: the caller's admission (call target, then the insert
 * that also counts the project's usage), the held call woken and claiming at once (the claim checks the session
 * itself: it is not read first), the answer (session with its request in flight, then the settling
 * transition), and the connector's next ask, claimed at once again without reading the session.
 * A statement added back to this path fails here.
 */
const ROUND_TRIPS = 5;

const kindOf = (sql: string): string => {
  const text = sql.replace(/\s+/g, " ").trim().toLowerCase();
  if (text === "begin" || text === "commit") return text;
  if (text.startsWith("with recovery as")) return "claim";
  if (text.startsWith('select * from "connector_sessions"')) return "session";
  if (text.includes('to_jsonb(s) as "session_json"')) return "session with in-flight request";
  if (text.startsWith('with "moved" as (update "requests"')) return "transition";
  if (text.startsWith('insert into "requests"')) return "insert request";
  if (text.startsWith('insert into "project_usage"')) return "charge usage";
  if (text.startsWith('with "charged" as (insert into "project_usage"')) return "insert charged request";
  if (text.startsWith('select "c".*')) return "call target";
  return text.slice(0, 80);
};

test("a sync round trip runs six statements, none of them a session read", async (t) => {
  const seen: ObservedQuery[] = [];
  const opened = await openTestStore({ onQuery: (query) => seen.push(query) });
  // Stamps are written by hand, so that their timer cannot write while statements are counted.
  const activity = new ActivityStamps(3_600_000);
  const sys = await startSystem(null, {
    store: opened.store,
    activity,
    // No hold ends while the round trips run: every call is answered by a wake-up.
    config: { CONNECTOR_HOLD_MS: "100000", RATE_LIMIT_MAX: "1000000" },
  });
  // The connector stops first: its session is closed while the store still answers.
  const connected: ConnectedEndUser[] = [];
  t.after(async () => {
    for (const eu of connected) await stopConnector(sys, eu);
    await sys.close();
    await opened.store.close();
    await opened.drop();
  });
  const eu = await sys.connectEndUser({ companyName: "Statement Books" });
  connected.push(eu);
  await bringOnline(sys, eu);
  const roundTrip = async (): Promise<void> => {
    const response = await sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
    assert.equal(response.status, 200, await response.clone().text());
    await response.text();
  };
  // The connector asks again after each answer and finds nothing (a claim) before it is held:
  // each round trip waits for that claim, so that each holds both of its claims. (Without the wait
  // the next call could be queued before that ask, which then finds it: one claim fewer.)
  const claims = (): number => seen.filter((q) => kindOf(q.sql) === "claim").length;
  const roundTrips = async (n: number): Promise<void> => {
    seen.length = 0;
    for (let i = 1; i <= n; i += 1) {
      await roundTrip();
      await eventually("the connector's ask after the answer looked for work", async () => claims() >= 2 * i);
    }
  };
  await roundTrips(2);
  // On PostgreSQL the admission's and the settling transition's statements carry their NOTIFY:
  // no wake-up is a statement of its own (decision 0029).
  const notifier = opened.store.notifier;
  const alone = (): number => (notifier instanceof PostgresNotifier ? notifier.sentAlone : 0);
  const aloneBefore = alone();
  await roundTrips(ROUND_TRIPS);
  assert.equal(alone() - aloneBefore, 0, "notifications sent as statements of their own");
  const counted = seen.map((q) => kindOf(q.sql));
  const counts = new Map<string, number>();
  for (const kind of counted) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const perTrip = Object.fromEntries([...counts].map(([kind, n]) => [kind, n / ROUND_TRIPS]));
  assert.deepEqual(
    perTrip,
    {
      "call target": 1,
      // No quota: the usage charge rides on the insert (one statement, no transaction).
      "insert charged request": 1,
      // The woken hold's claim hands the request over; the ask after the answer finds nothing.
      claim: 2,
      "session with in-flight request": 1,
      transition: 1,
    },
    `statements per round trip:\n${counted.join("\n")}`,
  );
});
