/**
 * Profiling aid for `npm run bench` (not part of the table): runs sequential sync passthrough round
 * trips and prints, per round trip, which SQL statements run, how often and how long the store takes
 * on them, then the statement timelines of a few hand-overs. It watches statements through the
 * store's query observer (`openStore`'s `onQuery`), so prepared statements count and both stores work:
 * the embedded PGlite by default, PostgreSQL with DATABASE_URL. Run with `npx tsx bench/query-profile.ts`.
 */
import { performance } from "node:perf_hooks";
import { systemClock } from "../src/platform/clock.ts";
import type { ObservedQuery } from "../src/store/database.ts";
import { openTestStore } from "../src/testing/harness.ts";
import { watchApplication } from "../src/testing/application-watch.ts";
import { startSystem } from "../src/testing/system.ts";

const WARM_UP = 30;
const ROUND_TRIPS = 200;
const TIMELINES = 3;

interface Stat {
  count: number;
  totalMs: number;
}

/** Statement text as one line, its parameters' placeholders kept (one row per distinct statement). */
const oneLine = (sql: string, width: number): string => sql.replace(/\s+/g, " ").slice(0, width);

class Profile {
  readonly stats = new Map<string, Stat>();
  recording = false;
  /** When set, every statement of the current round trip is kept with its start offset. */
  timeline: Array<{ at: number; ms: number; sql: string }> | null = null;
  timelineStart = 0;

  readonly observe = (query: ObservedQuery): void => {
    // The observer is told when the statement's result is in: its start is that minus its duration.
    const start = performance.now() - query.durationMs;
    if (this.timeline) {
      this.timeline.push({
        at: start - this.timelineStart,
        ms: query.durationMs,
        sql: oneLine(query.sql, 90),
      });
    }
    if (!this.recording) return;
    const key = oneLine(query.sql, 150) + (query.failed ? " [failed]" : "");
    const stat = this.stats.get(key) ?? { count: 0, totalMs: 0 };
    stat.count += 1;
    stat.totalMs += query.durationMs;
    this.stats.set(key, stat);
  };
}

async function main(): Promise<void> {
  const profile = new Profile();
  const observers = { current: profile.observe };
  const opened = await openTestStore({ onQuery: (query) => observers.current(query) });
  const sys = await startSystem(null, {
    clock: systemClock,
    noOpPauseMs: 20,
    store: opened.store,
    config: { CONNECTOR_HOLD_MS: "20000", LOG_LEVEL: "silent", RATE_LIMIT_MAX: "1000000" },
  });
  const eu = await sys.connectEndUser({ companyName: "Profile Books" });
  let arrival = 0;
  watchApplication(sys, () => {
    arrival = performance.now();
  });
  eu.connector.start();
  for (;;) {
    const body = (await (await sys.call("GET", `/v1/end-users/${eu.endUserId}`)).json()) as {
      integrationConnections?: Array<{ status?: string }>;
    };
    if (body.integrationConnections?.[0]?.status === "online") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const roundTrip = async (): Promise<void> => {
    const res = await sys.call("POST", `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`, {
      body: "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>",
    });
    await res.text();
  };
  for (let i = 0; i < WARM_UP; i += 1) await roundTrip();
  profile.recording = true;
  const started = performance.now();
  for (let i = 0; i < ROUND_TRIPS; i += 1) await roundTrip();
  const elapsed = performance.now() - started;
  profile.recording = false;
  // Statement timelines of hand-overs to a held connector (offsets from the HTTP call start).
  for (let sample = 0; sample < TIMELINES; sample += 1) {
    await new Promise((r) => setTimeout(r, 50));
    profile.timeline = [];
    profile.timelineStart = performance.now();
    await roundTrip();
    const total = performance.now() - profile.timelineStart;
    console.log(
      `\n--- hand-over sample ${sample + 1}: document at the application after ${(arrival - profile.timelineStart).toFixed(2)} ms, call done after ${total.toFixed(2)} ms`,
    );
    for (const e of profile.timeline)
      console.log(`${e.at.toFixed(2).padStart(7)} +${e.ms.toFixed(2)}  ${e.sql}`);
    profile.timeline = null;
  }
  // Reads of one settled Request (P3's call), one at a time.
  const settled = (await (await sys.call("GET", "/v1/requests?limit=1")).json()) as {
    data: Array<{ id: string }>;
  };
  const requestId = settled.data[0]?.id ?? "";
  const getProfile = new Profile();
  observers.current = getProfile.observe;
  getProfile.recording = true;
  const getStarted = performance.now();
  for (let i = 0; i < ROUND_TRIPS; i += 1) await (await sys.call("GET", `/v1/requests/${requestId}`)).text();
  const getElapsed = performance.now() - getStarted;
  getProfile.recording = false;
  await eu.connector.stop();
  await sys.close();
  await opened.store.close();
  await opened.drop();

  report(profile, `${opened.store.engine}: ${ROUND_TRIPS} sync round trips`, ROUND_TRIPS, elapsed);
  report(getProfile, `${opened.store.engine}: ${ROUND_TRIPS} GET /v1/requests/{id}`, ROUND_TRIPS, getElapsed);
}

function report(profile: Profile, what: string, calls: number, elapsed: number): void {
  const rows = [...profile.stats].sort((a, b) => b[1].totalMs - a[1].totalMs);
  const queries = rows.reduce((n, [, s]) => n + s.count, 0);
  const dbMs = rows.reduce((n, [, s]) => n + s.totalMs, 0);
  console.log(
    `\n${what} in ${elapsed.toFixed(0)} ms (${(elapsed / calls).toFixed(2)} ms each); ` +
      `${(queries / calls).toFixed(1)} statements and ${(dbMs / calls).toFixed(2)} ms in the store per call ` +
      `(transaction begin/commit not counted)`,
  );
  console.log("per call: count  ms  statement");
  for (const [sql, s] of rows) {
    console.log(
      `${(s.count / calls).toFixed(2).padStart(6)} ${(s.totalMs / calls).toFixed(3).padStart(7)}  ${sql}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
