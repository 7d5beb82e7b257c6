/**
 * Profiling aid for `npm run bench` (not part of the table): runs sequential sync passthrough round
 * trips on the embedded store and prints, per round trip, which SQL statements run, how often and
 * how long PGlite spends on them. Run with `npx tsx bench/query-profile.ts`.
 */
import { performance } from "node:perf_hooks";
import { PGlite } from "@electric-sql/pglite";
import { systemClock } from "../src/platform/clock.ts";
import { startSystem } from "../src/testing/system.ts";

const WARM_UP = 30;
const ROUND_TRIPS = 200;

interface Stat {
  count: number;
  totalMs: number;
}

const stats = new Map<string, Stat>();
let recording = false;
/** When set, every statement of the current round trip is logged with its start offset. */
let timeline: Array<{ at: number; ms: number; sql: string }> | null = null;
let timelineStart = 0;

type Query = PGlite["query"];
// eslint-disable-next-line @typescript-eslint/unbound-method
const originalQuery: Query = PGlite.prototype.query;
PGlite.prototype.query = async function (this: PGlite, ...args: Parameters<Query>) {
  const start = performance.now();
  try {
    return await originalQuery.apply(this, args);
  } finally {
    if (timeline) {
      timeline.push({ at: start - timelineStart, ms: performance.now() - start, sql: args[0].slice(0, 90) });
    }
    if (recording) {
      const key = args[0].replace(/\s+/g, " ").slice(0, 150);
      const stat = stats.get(key) ?? { count: 0, totalMs: 0 };
      stat.count += 1;
      stat.totalMs += performance.now() - start;
      stats.set(key, stat);
    }
  }
} as Query;

async function main(): Promise<void> {
  delete process.env.DATABASE_URL;
  const sys = await startSystem(null, {
    clock: systemClock,
    noOpPauseMs: 20,
    config: { CONNECTOR_HOLD_MS: "20000", LOG_LEVEL: "silent", RATE_LIMIT_MAX: "1000000" },
  });
  const eu = await sys.connectEndUser({ companyName: "Profile Books" });
  let arrival = 0;
  const begin = sys.ledger.beginSession.bind(sys.ledger);
  sys.ledger.beginSession = async (options) => {
    const begun = await begin(options);
    if (begun.ok) {
      const process = begun.session.processRequest.bind(begun.session);
      begun.session.processRequest = (xml: string) => {
        arrival = performance.now();
        return process(xml);
      };
    }
    return begun;
  };
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
  recording = true;
  const started = performance.now();
  for (let i = 0; i < ROUND_TRIPS; i += 1) await roundTrip();
  const elapsed = performance.now() - started;
  recording = false;
  // Statement timelines of hand-overs to a held connector (offsets from the HTTP call start).
  for (let sample = 0; sample < 3; sample += 1) {
    await new Promise((r) => setTimeout(r, 50));
    timeline = [];
    timelineStart = performance.now();
    await roundTrip();
    const total = performance.now() - timelineStart;
    console.log(
      `\n--- hand-over sample ${sample + 1}: document at the application after ${(arrival - timelineStart).toFixed(2)} ms, call done after ${total.toFixed(2)} ms`,
    );
    for (const e of timeline) console.log(`${e.at.toFixed(2).padStart(7)} +${e.ms.toFixed(2)}  ${e.sql}`);
    timeline = null;
  }
  await eu.connector.stop();
  await sys.close();

  const rows = [...stats].sort((a, b) => b[1].totalMs - a[1].totalMs);
  const queries = rows.reduce((n, [, s]) => n + s.count, 0);
  const dbMs = rows.reduce((n, [, s]) => n + s.totalMs, 0);
  console.log(
    `${ROUND_TRIPS} round trips in ${elapsed.toFixed(0)} ms (${(elapsed / ROUND_TRIPS).toFixed(2)} ms each); ` +
      `${(queries / ROUND_TRIPS).toFixed(1)} queries and ${(dbMs / ROUND_TRIPS).toFixed(2)} ms in PGlite.query per round trip`,
  );
  console.log("per round trip: count  ms  statement");
  for (const [sql, s] of rows) {
    console.log(
      `${(s.count / ROUND_TRIPS).toFixed(2).padStart(6)} ${(s.totalMs / ROUND_TRIPS).toFixed(3).padStart(7)}  ${sql}`,
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
