/**
 * Where a page of the cursor walk spends the service's time (issue 24, decision 0035). Not part of
 * `npm run bench`'s table: `npx tsx bench/page-profile.ts` (PGlite in memory), with DATABASE_URL for
 * PostgreSQL (a fresh database, dropped after). Set up as `bench/typed.ts` sets up its walk: the
 * service on this thread, the simulated end user and the caller on a worker, the same seeded list.
 *
 * Three walks over the list, each from its first page:
 *  1. warm-up (not counted);
 *  2. measured: per page this thread's busy time (`performance.eventLoopUtilization()`, as the bench
 *     prints it) and, through the store's query observer (`StoreOptions.onQuery`), every statement
 *     with its time — on PGlite the engine runs on this thread, so statement time is busy time;
 *     on PostgreSQL it is the round trip, during which this thread is mostly idle;
 *  3. profiled: V8's sampling profiler (inspector `Profiler`, 100 µs) around this walk only. Every
 *     sample is put in one stage by its stack (the rules in {@link STAGES}, first match wins), and
 *     the stages' shares are scaled to walk 2's busy time per page. Idle samples are left out (V8's
 *     profile samples wall time: the thread waiting on the worker or PostgreSQL shows as idle).
 *
 * `PAGE_PROFILE_INVOICES` (default 10,000, as the bench) sizes the list; `PAGE_PROFILE_OUT` keeps
 * the profile (`.cpuprofile`, Chrome DevTools format).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { performance } from "node:perf_hooks";
import type { ObservedQuery } from "../src/store/database.ts";
import { openTestStore } from "../src/testing/harness.ts";
import { INVOICES, percentile, startWalkSystem, walkInvoices } from "./typed.ts";

interface Frame {
  functionName: string;
  url: string;
}

interface ProfileNode {
  id: number;
  callFrame: Frame & { lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * A stage of a page and how a sample's stack (leaf first) is recognised as being in it. Ordered:
 * the first rule that matches takes the sample. Rules look at module files (`url`) and, where a
 * module serves several stages, at the function on the stack that called it.
 */
interface Stage {
  name: string;
  matches(stack: readonly Frame[]): boolean;
}

const inFile = (stack: readonly Frame[], part: string): boolean => stack.some((f) => f.url.includes(part));
const calls = (stack: readonly Frame[], name: string, part = ""): boolean =>
  stack.some((f) => f.functionName === name && f.url.includes(part));
const leafIn = (stack: readonly Frame[], part: string): boolean => (stack[0]?.url ?? "").includes(part);

const STAGES: readonly Stage[] = [
  { name: "garbage collection", matches: (s) => s[0]?.functionName === "(garbage collector)" },
  { name: "profiler and runtime (program)", matches: (s) => s[0]?.functionName === "(program)" },
  {
    name: "SOAP call read (envelope + the answer's text decoded)",
    matches: (s) => inFile(s, "connector/call-reader") || inFile(s, "connector/call-body"),
  },
  {
    name: "answer XML parse (readAnswer)",
    matches: (s) => calls(s, "readAnswer") || calls(s, "readXml") || calls(s, "readAnswerXml"),
  },
  {
    name: "decode: records → JSON (reader, field kinds)",
    matches: (s) =>
      inFile(s, "ledger/typed/reader") || calls(s, "decodeRecords") || calls(s, "decodeListPage"),
  },
  {
    name: "JSON text of values for statements (json(); the result's text, taken once)",
    matches: (s) =>
      calls(s, "json", "store/database") || calls(s, "requestValues") || calls(s, "jsonTextOnce"),
  },
  {
    name: "store: PGlite engine and its protocol (statements)",
    matches: (s) => inFile(s, "@electric-sql/pglite") || inFile(s, "store/pglite-dialect"),
  },
  {
    name: "store: pg driver (PostgreSQL protocol, parameters, rows)",
    matches: (s) => inFile(s, "node_modules/pg") || inFile(s, "pg-protocol") || inFile(s, "pg-types"),
  },
  { name: "store: Kysely (build, compile, plugins)", matches: (s) => inFile(s, "node_modules/kysely") },
  {
    name: "HTTP response: JSON serialisation of the answer",
    matches: (s) => calls(s, "serialize", "fastify") || calls(s, "onSendEnd") || calls(s, "serializeRequest"),
  },
  {
    name: "HTTP: Fastify, node:http, sockets",
    matches: (s) =>
      inFile(s, "node_modules/fastify") ||
      inFile(s, "node_modules/find-my-way") ||
      inFile(s, "node_modules/light-my-request") ||
      leafIn(s, "node:_http") ||
      leafIn(s, "node:net") ||
      leafIn(s, "node:internal/stream") ||
      calls(s, "writev") ||
      calls(s, "writeGeneric"),
  },
  { name: "connector session and engine (service code)", matches: (s) => inFile(s, "/src/") },
  { name: "worker messages and timers (bench, node)", matches: () => true },
];

/** The sample's stack, leaf first. */
function stacksOf(profile: CpuProfile): Map<number, Frame[]> {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const stacks = new Map<number, Frame[]>();
  for (const node of profile.nodes) {
    const stack: Frame[] = [];
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (frame && frame.functionName !== "(root)") stack.push(frame);
    }
    stacks.set(node.id, stack);
  }
  return stacks;
}

/** A leaf frame as `function file`. */
function frameName(frame: Frame | undefined): string {
  if (!frame) return "?";
  return `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}`.trim();
}

interface Stages {
  /** Per stage: its time (ms) and its heaviest leaf functions (ms each). */
  byStage: Map<string, { ms: number; leaves: Map<string, number> }>;
  busyMs: number;
  idleMs: number;
}

/**
 * Busy samples' time per stage (ms). Idle samples are left out, and so are those of the
 * profiler's own stop (`Profiler.stop` building the profile on this thread).
 */
function stagesOf(profile: CpuProfile): Stages {
  const stacks = stacksOf(profile);
  const byStage = new Map(STAGES.map((stage) => [stage.name, { ms: 0, leaves: new Map<string, number>() }]));
  let busyMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const stack = stacks.get(id) ?? [];
    if (stack[0]?.functionName === "(idle)") {
      idleMs += ms;
      return;
    }
    if (stack.some((frame) => frame.url === "node:inspector")) return;
    busyMs += ms;
    const stage = STAGES.find((candidate) => candidate.matches(stack)) ?? STAGES[STAGES.length - 1];
    const entry = stage ? byStage.get(stage.name) : undefined;
    if (!entry) return;
    entry.ms += ms;
    const leaf = frameName(stack[0]);
    entry.leaves.set(leaf, (entry.leaves.get(leaf) ?? 0) + ms);
  });
  return { byStage, busyMs, idleMs };
}

/**
 * CPU time of this process's main thread so far, in ms (Linux: `/proc/self/task/<pid>/stat`,
 * user + system in clock ticks of 10 ms); NaN elsewhere. Unlike busy time it does not count the
 * time the thread waited for a core, so it is steadier on a shared machine.
 */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Statement text as one line, parameters' placeholders kept (one row per distinct statement). */
const oneLine = (sql: string, width: number): string => sql.replace(/\s+/g, " ").trim().slice(0, width);

async function main(): Promise<void> {
  const invoices = Number(process.env.PAGE_PROFILE_INVOICES ?? INVOICES);
  const statements = new Map<string, { count: number; ms: number }>();
  let recording = false;
  /** The statements of one page of walk 2 (its fifth), in order. */
  const onePage: string[] = [];
  let pageIndex = -1;
  const observe = (query: ObservedQuery): void => {
    if (!recording) return;
    if (pageIndex === 4) onePage.push(`${query.durationMs.toFixed(2)} ms  ${oneLine(query.sql, 100)}`);
    const key = oneLine(query.sql, 110);
    const stat = statements.get(key) ?? { count: 0, ms: 0 };
    stat.count += 1;
    stat.ms += query.durationMs;
    statements.set(key, stat);
  };
  const opened = await openTestStore({ onQuery: observe });
  // `PAGE_PROFILE_CONFIG`: settings as JSON (`{"REQUEST_ANSWER_KEEP_BYTES":"0"}`), to see what one changes.
  const config = JSON.parse(process.env.PAGE_PROFILE_CONFIG ?? "{}") as Record<string, string>;
  const system = await startWalkSystem({ store: opened.store, invoices, config });
  const engine = system.engine;
  try {
    await walkInvoices(system);
    recording = true;
    const cpuBefore = mainThreadCpuMs();
    const measured = await walkInvoices(system, () => (pageIndex += 1));
    const cpuPerPage = (mainThreadCpuMs() - cpuBefore) / measured.pages.length;
    recording = false;
    const pages = measured.pages.length;
    const busy = measured.pages.map((page) => page.busyMs);
    const busyPerPage = busy.reduce((a, b) => a + b, 0) / pages;

    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
    const profiled = await walkInvoices(system);
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: CpuProfile };
    session.disconnect();
    if (process.env.PAGE_PROFILE_OUT) writeFileSync(process.env.PAGE_PROFILE_OUT, JSON.stringify(profile));
    const profiledBusy = profiled.pages.reduce((a, page) => a + page.busyMs, 0) / profiled.pages.length;

    console.log(
      `[${engine}] ${measured.records} invoices in ${pages} pages; busy time per page p50 ${percentile(busy, 0.5).toFixed(1)} / p99 ${percentile(busy, 0.99).toFixed(1)} / mean ${busyPerPage.toFixed(1)} ms` +
        `; main-thread CPU per page ${cpuPerPage.toFixed(1)} ms` +
        ` (profiled walk: busy mean ${profiledBusy.toFixed(1)} ms, the profiler's own cost included)\n`,
    );

    console.log(`statements per page (walk 2; ${engine === "pglite" ? "on this thread" : "round trips"}):`);
    console.log("| per page | ms per page | statement |");
    console.log("|---|---|---|");
    let statementMs = 0;
    let statementCount = 0;
    for (const [sql, stat] of [...statements].sort((a, b) => b[1].ms - a[1].ms)) {
      statementMs += stat.ms;
      statementCount += stat.count;
      console.log(`| ${(stat.count / pages).toFixed(2)} | ${(stat.ms / pages).toFixed(2)} | ${sql} |`);
    }
    console.log(`| ${(statementCount / pages).toFixed(2)} | ${(statementMs / pages).toFixed(2)} | all |\n`);
    console.log("the statements of one page (the fifth), in order:");
    for (const line of onePage) console.log(`  ${line}`);
    console.log("");

    const { byStage, busyMs, idleMs } = stagesOf(profile);
    console.log(
      `stages of the profiled walk (busy samples ${busyMs.toFixed(0)} ms, idle ${idleMs.toFixed(0)} ms left out), scaled to walk 2's mean busy time per page:`,
    );
    console.log("| stage | share | ms per page | heaviest functions (self, ms per page) |");
    console.log("|---|---|---|---|");
    const ordered = [...byStage].sort((a, b) => b[1].ms - a[1].ms);
    for (const [name, { ms, leaves }] of ordered) {
      const share = ms / busyMs;
      const top = [...leaves]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([leaf, leafMs]) => `${leaf} ${((leafMs / busyMs) * busyPerPage).toFixed(1)}`)
        .join("; ");
      console.log(
        `| ${name} | ${(share * 100).toFixed(1)} % | ${(share * busyPerPage).toFixed(1)} | ${top} |`,
      );
    }
    console.log(`| all | 100 % | ${busyPerPage.toFixed(1)} | |`);
  } finally {
    await system.close();
    await opened.drop();
  }
}

const started = performance.now();
await main();
console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
process.exit(0);
