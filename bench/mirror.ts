/**
 * The mirror's figures (issue 26 "Done means"), printed by `npm run bench` (`BENCH_ONLY=mirror`),
 * never asserted. Set up as the typed walk is (bench/typed.ts): the service and its mirror engine
 * on this thread, the simulated end user (Web Connector, zero-latency company file) and the caller
 * on a worker thread, the real clock, 127.0.0.1; PGlite in memory, or a fresh PostgreSQL database.
 *
 *  1. Fill rate: {@link INVOICES} invoices (5 lines each) written straight into the company file
 *     {@link SEED_AGE_MS} before (as a company file's records were: the catch-up poll re-reads what
 *     changed since `CHANGE_FEED_OVERLAP_SECONDS` before the fill, and a file whose every record was
 *     written in those minutes is read twice), then `PUT …/mirror {"resources": ["invoices"]}`:
 *     the group's records ÷ the time from the PUT to `ready` (every fill page and the catch-up poll
 *     included), and ÷ the time to the last page.
 *  2. A mirrored page of {@link PAGE} invoices (`Svc-Max-Staleness-Seconds`), the caller walking the
 *     group page by page with the mirror's cursor, {@link PAGE_CALLS} calls after {@link WARM_UP}:
 *     per call, this thread's busy time (`performance.eventLoopUtilization()`, as the walk's figure:
 *     on PGlite the store's work runs on this thread too; the worker answers a summary, so no copy
 *     of the page is made on this thread) and the HTTP call's wall time as the caller on the worker
 *     sees it (its JSON parse included). The engine's polls (every few seconds) run meanwhile.
 *  3. Freshness lag: an invoice written straight into the company file (another user's session,
 *     not through the service), at a random moment of the poll cycle; the time until a mirrored
 *     retrieve of it (`Svc-Max-Staleness-Seconds: 86400`, so never live) answers 200, against
 *     `MIRROR_POLL_INTERVAL_SECONDS` = {@link INTERVAL_S} and `MIRROR_TICK_MS` = {@link TICK_MS}.
 *  4. Store bytes per mirrored invoice: `mirrorBytes` (the rows' `pg_column_size`) ÷ its records.
 */
import { performance } from "node:perf_hooks";
import { mirrorBytes } from "../src/store/mirrors.ts";
import { percentile, startWalkSystem, type TypedRow, type WalkSystem } from "./typed.ts";

/** Invoices in the mirrored group (14 pages of 150), besides the sample company's own. */
export const INVOICES = 2_100;
const PAGE = 150;
const WARM_UP = 30;
const PAGE_CALLS = 250;
const LAG_SAMPLES = 5;
const INTERVAL_S = 5;
const TICK_MS = 1000;
const STALE_OK = { "svc-max-staleness-seconds": "86400" };
/** How long before the fill the seeded invoices were written in the company file. */
const SEED_AGE_MS = 3_600_000;
/** The catch-up poll reaches back CHANGE_FEED_OVERLAP_SECONDS before the fill started. */
const OVERLAP_NOTE =
  "the fill's start less CHANGE_FEED_OVERLAP_SECONDS: the sample company's own records, written at the start";

type Group = { resource: string; state: string; records: number; asOf: string | null };

const delay = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));
const pair = (values: number[]): string =>
  `${percentile(values, 0.5).toFixed(2)} / ${percentile(values, 0.99).toFixed(2)} ms`;

async function invoicesGroup(system: WalkSystem): Promise<Group | undefined> {
  const response = await system.sys.call("GET", `/v1/end-users/${system.endUserId}/mirror`);
  return ((await response.json()) as { resources: Group[] }).resources.find((g) => g.resource === "invoices");
}

/**
 * Where a fill page's time goes, from the fill's Requests (paged invoice lists since `since`): the
 * wait for the connector, the round trip through it and the application, and the engine's work from
 * an answer to the next page's Request (the next page is asked for before a page is written). Their
 * sum times the pages is the fill's pages figure, less the first Request's start.
 */
async function fillSplit(system: WalkSystem, since: Date): Promise<{ pages: number; value: string }> {
  const pages = await system.sys.deps.db
    .selectFrom("requests")
    .select(["created_at", "sent_at", "completed_at", "input"])
    .where("end_user_id", "=", system.endUserId)
    .where("background", "=", true)
    .where("operation_id", "=", "ledger.invoices.list")
    .where("created_at", ">=", since)
    .orderBy("created_at")
    .execute()
    // A fill page names a page size; the catch-up poll's lists do not.
    .then((rows) => rows.filter((r) => JSON.stringify(r.input).includes('"limit"')));
  let queued = 0;
  let answered = 0;
  let between = 0;
  pages.forEach((page, i) => {
    const sent = page.sent_at?.getTime() ?? Number.NaN;
    const done = page.completed_at?.getTime() ?? Number.NaN;
    queued += sent - page.created_at.getTime();
    answered += done - sent;
    const next = pages[i + 1];
    if (next) between += next.created_at.getTime() - done;
  });
  const n = Math.max(1, pages.length);
  const value = `${(queued / n).toFixed(1)} / ${(answered / n).toFixed(1)} / ${(between / Math.max(1, n - 1)).toFixed(1)} ms`;
  return { pages: pages.length, value };
}

/**
 * The polls' rounds since `since`: the engine's background Requests, one poll's made together and
 * polls an interval apart, so a gap of over a second starts the next poll. Per poll, the time from
 * its first Request's creation to its last one's answer; and how many Requests in how many message
 * sets a poll was.
 */
async function pollRounds(system: WalkSystem, since: Date): Promise<{ ms: number[]; shape: string }> {
  const rows = await system.sys.deps.db
    .selectFrom("requests")
    .select(["created_at", "completed_at", "message_set_id", "operation_id"])
    .where("end_user_id", "=", system.endUserId)
    .where("background", "=", true)
    .where("created_at", ">=", since)
    .orderBy("created_at")
    .execute();
  const polls: (typeof rows)[] = [];
  for (const row of rows) {
    const current = polls[polls.length - 1];
    const last = current?.[current.length - 1];
    if (current && last && row.created_at.getTime() - last.created_at.getTime() < 1000) current.push(row);
    else polls.push([row]);
  }
  const answered = polls.filter((poll) => poll.every((r) => r.completed_at !== null));
  const ms = answered.map(
    (poll) =>
      Math.max(...poll.map((r) => r.completed_at?.getTime() ?? 0)) -
      Math.min(...poll.map((r) => r.created_at.getTime())),
  );
  const requests = answered.reduce((n, poll) => n + poll.length, 0);
  // A Request handed over alone has no message set ID of its own.
  const setsOf = (poll: typeof rows): number =>
    new Set(poll.map((r) => r.message_set_id).filter((id) => id !== null)).size +
    poll.filter((r) => r.message_set_id === null).length;
  const sets = answered.reduce((n, poll) => n + setsOf(poll), 0);
  const per = (n: number): string => (answered.length === 0 ? "n/a" : (n / answered.length).toFixed(1));
  const operations = new Map<string, number>();
  for (const poll of answered)
    for (const r of poll) operations.set(r.operation_id, (operations.get(r.operation_id) ?? 0) + 1);
  const mix = [...operations].map(([op, n]) => `${op} ${per(n)}`).join(", ");
  return { ms, shape: `${per(requests)} Requests in ${per(sets)} message sets a poll: ${mix}` };
}

/**
 * Waits for `ready`; also notes when the fill's last page was in (the engine's `fill_cursor` is
 * `done`: the catch-up poll comes next), a figure of its own.
 */
async function untilReady(
  system: WalkSystem,
  timeoutMs: number,
): Promise<{ group: Group; pagesInMs: number | null }> {
  const started = performance.now();
  let pagesInMs: number | null = null;
  for (;;) {
    const group = await invoicesGroup(system);
    if (pagesInMs === null) {
      const row = await system.sys.deps.db
        .selectFrom("mirrors")
        .select("fill_cursor")
        .where("end_user_id", "=", system.endUserId)
        .where("resource", "=", "invoices")
        .executeTakeFirst();
      if (row?.fill_cursor === "done" || group?.state === "ready") pagesInMs = performance.now() - started;
    }
    if (group?.state === "ready") return { group, pagesInMs };
    if (performance.now() - started > timeoutMs)
      throw new Error(`the mirror was not ready after ${timeoutMs} ms: ${JSON.stringify(group)}`);
    await delay(20);
  }
}

export async function runMirrorBench(databaseUrl?: string): Promise<TypedRow[]> {
  const system = await startWalkSystem({
    databaseUrl,
    invoices: INVOICES,
    seedAgeMs: SEED_AGE_MS,
    mirror: true,
    config: { MIRROR_POLL_INTERVAL_SECONDS: String(INTERVAL_S), MIRROR_TICK_MS: String(TICK_MS) },
  });
  const { engine, worker, sys } = system;
  try {
    // 1. Fill.
    const fillStartedAt = new Date();
    const fillStarted = performance.now();
    const put = await sys.call("PUT", `/v1/end-users/${system.endUserId}/mirror`, {
      body: { resources: ["invoices"] },
    });
    if (put.status !== 200) throw new Error(`PUT mirror: ${put.status} ${await put.text()}`);
    const { group: ready, pagesInMs } = await untilReady(system, 120_000);
    const fillMs = performance.now() - fillStarted;
    const split = await fillSplit(system, fillStartedAt);

    // 2. Mirrored pages, walked with the mirror's cursor.
    const busy: number[] = [];
    const wall: number[] = [];
    let notMirrored = 0;
    let path = `/v1/ledger-desktop/invoices?limit=${PAGE}`;
    for (let i = 0; i < WARM_UP + PAGE_CALLS; i++) {
      const before = performance.eventLoopUtilization();
      const page = await worker.send<"call">({
        cmd: "call",
        method: "GET",
        path,
        headers: STALE_OK,
        summary: true,
      });
      const used = performance.eventLoopUtilization(before);
      const summary = page.body as { source?: string; nextCursor?: string | null; count?: number };
      if (page.status !== 200 || summary.source !== "mirror" || !page.headers["svc-data-as-of"]) {
        notMirrored += 1;
      }
      const next = summary.nextCursor;
      if (i >= WARM_UP && summary.count === PAGE) {
        busy.push(used.active);
        wall.push(page.elapsedMs);
      }
      path =
        typeof next === "string"
          ? `/v1/ledger-desktop/invoices?cursor=${encodeURIComponent(next)}`
          : `/v1/ledger-desktop/invoices?limit=${PAGE}`;
    }

    // 3. Freshness lag of changes made in the company file directly, at random phases of the poll.
    const lags: number[] = [];
    const lagPhaseStarted = new Date();
    for (let i = 0; i < LAG_SAMPLES; i++) {
      await delay(Math.random() * INTERVAL_S * 1000);
      const seeded = await worker.send<"seeded">({
        cmd: "seedInvoices",
        customerId: system.customerId,
        itemId: system.itemId,
        count: 1,
        batch: 1,
      });
      const changedAt = performance.now();
      const id = seeded.ids[0];
      if (!id) throw new Error("the change made no invoice");
      for (;;) {
        const seen = await sys.call("GET", `/v1/ledger-desktop/invoices/${encodeURIComponent(id)}`, {
          endUserId: system.endUserId,
          headers: STALE_OK,
        });
        await seen.arrayBuffer();
        if (seen.status === 200 && seen.headers.get("svc-data-as-of")) break;
        if (performance.now() - changedAt > 10 * INTERVAL_S * 1000)
          throw new Error("the change never arrived");
        await delay(25);
      }
      lags.push(performance.now() - changedAt);
    }

    const rounds = await pollRounds(system, lagPhaseStarted);

    // 4. Bytes per record.
    const group = (await invoicesGroup(system)) ?? ready;
    const bytes = await mirrorBytes(sys.deps.db, { end_user_id: system.endUserId, resource: "invoices" });

    return [
      {
        figure: `[${engine}] mirror fill rate, ${ready.records} invoices × 5 lines written an hour before (PUT → ready, zero-latency application)`,
        value: `${(ready.records / (fillMs / 1000)).toFixed(0)} records/s (${(fillMs / 1000).toFixed(2)} s)`,
        goal: "≥ 2,000 records/s",
      },
      {
        figure: `[${engine}] of which the fill's pages (PUT → last page applied; then the catch-up poll, which re-reads what changed since ${OVERLAP_NOTE})`,
        value:
          pagesInMs === null
            ? "n/a"
            : `${(ready.records / (pagesInMs / 1000)).toFixed(0)} records/s (${(pagesInMs / 1000).toFixed(2)} s)`,
        goal: "-",
      },
      {
        figure: `[${engine}] of which each fill page, on average (n=${split.pages}): queued → sent / sent → answered / answered → next page queued`,
        value: split.value,
        goal: "-",
      },
      {
        figure: `[${engine}] mirrored page of ${PAGE} invoices: service main-thread busy time p50 / p99 (n=${busy.length})`,
        value: pair(busy),
        goal: "p50 ≤ 5 ms",
      },
      {
        figure: `[${engine}] mirrored page of ${PAGE} invoices: HTTP call wall time p50 / p99, caller on a worker`,
        value: `${pair(wall)}; ${notMirrored} not from the mirror`,
        goal: "0 not from the mirror",
      },
      {
        figure: `[${engine}] mirror freshness lag, change in the company file → mirrored read, p50 / max (n=${lags.length}; poll every ${INTERVAL_S} s, tick ${TICK_MS} ms)`,
        value: `${(percentile(lags, 0.5) / 1000).toFixed(2)} s / ${(Math.max(...lags) / 1000).toFixed(2)} s`,
        goal: `≤ ${INTERVAL_S + 1} s (interval + 1 s)`,
      },
      {
        figure: `[${engine}] of which a poll's round: its first Request queued → its last answered, p50 / max (n=${rounds.ms.length} polls during the lag samples; ${rounds.shape})`,
        value: `${percentile(rounds.ms, 0.5).toFixed(0)} / ${Math.max(...rounds.ms).toFixed(0)} ms`,
        goal: "-",
      },
      {
        figure: `[${engine}] store bytes per mirrored invoice (5 lines; ${group.records} records)`,
        value: `${(bytes / group.records).toFixed(0)} B (${(bytes / 1024 / 1024).toFixed(1)} MB)`,
        goal: "-",
      },
    ];
  } finally {
    await system.close();
  }
}

if (process.argv[1]?.endsWith("mirror.ts")) {
  const rows = await runMirrorBench();
  if (process.env.DATABASE_URL) rows.push(...(await runMirrorBench(process.env.DATABASE_URL)));
  for (const row of rows) console.log(`${row.figure}: ${row.value} (goal ${row.goal})`);
  process.exit(0);
}
