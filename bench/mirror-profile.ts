/**
 * Profiling aid (not part of `npm run bench`'s table): the service's CPU profile while a caller
 * reads mirrored pages of 150 invoices (`Svc-Max-Staleness-Seconds`), and while a fill of the
 * invoices runs. The demo company: `small` (150 invoices), or `MIRROR_PROFILE_SIZE=large` (10,000);
 * PGlite in memory, or PostgreSQL with DATABASE_URL. `MIRROR_PROFILE_TIMELINE=1` also prints each
 * background Request's times (created, sent, answered; ms from the first) and a summary per kind. Writes `mirror-page.cpuprofile`
 * and `mirror-fill.cpuprofile` to `BENCH_PROFILE_DIR` (default: a new temporary directory) and
 * prints the top functions by self time. Run with `npx tsx bench/mirror-profile.ts`.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { systemClock } from "../src/platform/clock.ts";
import type { ObservedQuery } from "../src/store/database.ts";
import { openTestStore } from "../src/testing/harness.ts";
import { startSystem } from "../src/testing/system.ts";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** The top functions by self time, with their share of the samples. */
function top(profile: Profile, count = 25): string {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byName = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    const where = node.callFrame.url.replace(/^.*\/(src|node_modules)\//, "$1/");
    const name = `${node.callFrame.functionName || "(anonymous)"} ${where}:${node.callFrame.lineNumber + 1}`;
    byName.set(name, (byName.get(name) ?? 0) + us);
  }
  const total = [...byName.values()].reduce((a, b) => a + b, 0);
  return [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(
      ([name, us]) =>
        `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`,
    )
    .join("\n");
}

async function main(): Promise<void> {
  const dir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(join(tmpdir(), "lb-profile-"));
  mkdirSync(dir, { recursive: true });
  // The store's time by statement during the fill (`MIRROR_PROFILE_SQL=1`).
  const statements = new Map<string, { count: number; ms: number }>();
  let recording = false;
  const onQuery = (query: ObservedQuery): void => {
    if (!recording) return;
    const key = query.sql.replace(/\s+/g, " ").slice(0, 140);
    const stat = statements.get(key) ?? { count: 0, ms: 0 };
    stat.count += 1;
    stat.ms += query.durationMs;
    statements.set(key, stat);
  };
  const opened = process.env.MIRROR_PROFILE_SQL ? await openTestStore({ onQuery }) : null;
  const sys = await startSystem(null, {
    ...(opened ? { store: opened.store } : {}),
    clock: systemClock,
    mirror: true,
    config: {
      CONNECTOR_HOLD_MS: "300",
      RATE_LIMIT_MAX: "1000000",
      MIRROR_POLL_INTERVAL_SECONDS: "3600",
      // Settings to compare, as JSON: MIRROR_PROFILE_CONFIG='{"MIRROR_FILL_PAGE_SIZE":"500"}'.
      ...(JSON.parse(process.env.MIRROR_PROFILE_CONFIG ?? "{}") as Record<string, string>),
    },
  });
  const eu = await sys.connectEndUser({
    companyName: "Profile Co",
    seed: "demo",
    demoSize: process.env.MIRROR_PROFILE_SIZE === "large" ? "large" : "small",
  });
  eu.connector.start();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  const state = async (): Promise<string | undefined> =>
    (
      (await (await sys.call("GET", `/v1/end-users/${eu.endUserId}/mirror`)).json()) as {
        resources: { state: string }[];
      }
    ).resources[0]?.state;
  await session.post("Profiler.start");
  recording = true;
  const fillStart = performance.now();
  await sys.call("PUT", `/v1/end-users/${eu.endUserId}/mirror`, { body: { resources: ["invoices"] } });
  while ((await state()) !== "ready") await new Promise((r) => setTimeout(r, 20));
  const fillMs = performance.now() - fillStart;
  recording = false;
  let { profile } = await session.post("Profiler.stop");
  writeFileSync(join(dir, "mirror-fill.cpuprofile"), JSON.stringify(profile));
  console.log(`fill: ${fillMs.toFixed(0)} ms\n${top(profile as Profile)}`);
  if (opened) {
    const rows = [...statements].sort((a, b) => b[1].ms - a[1].ms).slice(0, 20);
    const storeMs = [...statements.values()].reduce((sum, s) => sum + s.ms, 0);
    console.log(`\nstatements during the fill: ${storeMs.toFixed(0)} ms in all (wall time, overlapping)`);
    for (const [sql, stat] of rows)
      console.log(`${stat.ms.toFixed(0).padStart(7)} ms ${String(stat.count).padStart(6)}×  ${sql}`);
  }
  if (process.env.MIRROR_PROFILE_TIMELINE) {
    const rows = await sys.deps.db
      .selectFrom("requests")
      .select(["operation_id", "created_at", "sent_at", "completed_at", "timeline"])
      .where("background", "=", true)
      .orderBy("seq")
      .execute();
    const t0 = rows[0]?.created_at.getTime() ?? 0;
    const pages = rows.filter((r) => r.operation_id === "ledger.invoices.list");
    let waited = 0;
    let answered = 0;
    // From a page's answer to the next page's Request: the engine applying it (the next page is
    // asked for before this one is written).
    let between = 0;
    pages.forEach((r, i) => {
      const next = pages[i + 1];
      if (next && r.completed_at) between += next.created_at.getTime() - r.completed_at.getTime();
    });
    for (const r of rows) {
      const created = r.created_at.getTime() - t0;
      const sent = (r.sent_at?.getTime() ?? 0) - t0;
      const done = (r.completed_at?.getTime() ?? 0) - t0;
      if (pages.includes(r)) {
        waited += sent - created;
        answered += done - sent;
      }
      if (rows.length <= 40) console.log(r.operation_id, created, sent, done);
    }
    console.log(
      `${pages.length} invoice list Requests: queued → sent ${(waited / pages.length).toFixed(1)} ms, sent → answered ${(answered / pages.length).toFixed(1)} ms, answered → next page queued ${(between / Math.max(1, pages.length - 1)).toFixed(1)} ms on average`,
    );
  }

  const read = async (): Promise<void> => {
    const response = await sys.call("GET", "/v1/ledger-desktop/invoices?limit=150", {
      endUserId: eu.endUserId,
      headers: { "Svc-Max-Staleness-Seconds": "86400" },
    });
    await response.arrayBuffer();
  };
  for (let i = 0; i < 50; i++) await read();
  await session.post("Profiler.start");
  const started = performance.now();
  const calls = 300;
  for (let i = 0; i < calls; i++) await read();
  const readMs = performance.now() - started;
  ({ profile } = await session.post("Profiler.stop"));
  writeFileSync(join(dir, "mirror-page.cpuprofile"), JSON.stringify(profile));
  console.log(
    `\npages: ${(readMs / calls).toFixed(2)} ms a call (caller on this thread)\n${top(profile as Profile)}`,
  );
  session.disconnect();
  await sys.close();
  if (opened) {
    await opened.store.close();
    await opened.drop();
  }
}

await main();
