/**
 * Start-up time and idle memory of the service as the README's quick start runs it (`BENCH_ONLY=startup`),
 * printed by `npm run bench`, never asserted:
 *  - `npm start`: the compiled service (dist/) behind npm, as a user types it;
 *  - `node dist/main.js`: the compiled service alone, as the container image runs it;
 *  - `npm run dev`: the sources through tsx, as before the build existed.
 * Each starts twice on one fresh PGlite data directory with the defaults (simulator and demo data on):
 * the first start creates the store and seeds the demo, the second reopens them. Start-up is spawn →
 * the banner printed (the demo end user's simulated connector has checked in, so its commands answer
 * at once). Idle memory is the resident set (VmRSS) of the service process, and of the whole process
 * tree (npm and its shell, if any, and the service), 10 s after the banner with no traffic.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../src/testing/system.ts";
import { tracked } from "./children.ts";

const ROOT = join(import.meta.dirname, "..");
const IDLE_MS = 10_000;

export interface StartupRow {
  figure: string;
  value: string;
  goal: string;
}

interface Variant {
  label: string;
  command: string;
  args: string[];
}

const VARIANTS: Variant[] = [
  { label: "npm start (dist/)", command: "npm", args: ["start"] },
  { label: "node dist/main.js", command: process.execPath, args: ["--enable-source-maps", "dist/main.js"] },
  { label: "npm run dev (tsx)", command: "npm", args: ["run", "dev"] },
];

/** Resident memory of a process in bytes (0 once it is gone). */
function rss(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0") * 1024;
  } catch {
    return 0;
  }
}

/** `pid` and its descendants, from /proc. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(children.get(tree[i] ?? 0) ?? []));
  return tree;
}

/**
 * The process of the tree that runs the service: of those whose command line names main.js or
 * main.ts (tsx's launcher names it too), the largest.
 */
function serviceProcess(pid: number): number {
  let best = pid;
  let bestRss = 0;
  for (const candidate of processTree(pid)) {
    try {
      const command = readFileSync(`/proc/${candidate}/cmdline`, "utf8");
      const size = rss(candidate);
      if (/main\.(js|ts)/.test(command) && size > bestRss) [best, bestRss] = [candidate, size];
    } catch {
      // gone meanwhile
    }
  }
  return best;
}

interface Start {
  startupMs: number;
  serviceRss: number;
  treeRss: number;
}

async function startOnce(variant: Variant, dataDir: string, idle: boolean): Promise<Start> {
  const port = await freePort();
  const { DATABASE_URL: _server, ...inherited } = process.env;
  const started = performance.now();
  const child: ChildProcess = tracked(
    spawn(variant.command, variant.args, {
      cwd: ROOT,
      env: { ...inherited, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    }),
  );
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let service = 0;
  try {
    while (!out.includes("API reference:")) {
      if (child.exitCode !== null) throw new Error(`${variant.label} exited: ${out.slice(-500)}`);
      if (performance.now() - started > 120_000)
        throw new Error(`${variant.label} printed no banner in 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const startupMs = performance.now() - started;
    if (idle) await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const pid = child.pid ?? 0;
    service = serviceProcess(pid);
    return {
      startupMs,
      serviceRss: rss(service),
      treeRss: processTree(pid).reduce((sum, p) => sum + rss(p), 0),
    };
  } finally {
    // The whole group, as Ctrl-C in a terminal: npm and the service it started.
    if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGINT");
    await exited;
    // npm exits on the signal at once; the service's own shutdown (and its data directory lock) follows.
    const stopping = performance.now();
    while (service && rss(service) > 0 && performance.now() - stopping < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const seconds = (msValue: number): string => `${(msValue / 1000).toFixed(2)} s`;

/** The start-up rows: first start, restart and idle memory for each way of running the service. */
export async function measureStartup(): Promise<StartupRow[]> {
  // The compiled variants need a current dist/ (a no-op when it is).
  const build = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (build.status !== 0) throw new Error("the build failed");
  const rows: StartupRow[] = [];
  for (const variant of VARIANTS) {
    const dataDir = mkdtempSync(join(tmpdir(), "lb-bench-startup-"));
    try {
      const first = await startOnce(variant, dataDir, false);
      const again = await startOnce(variant, dataDir, true);
      rows.push(
        {
          figure: `start-up: ${variant.label}, first start → banner`,
          value: seconds(first.startupMs),
          goal: "-",
        },
        {
          figure: `start-up: ${variant.label}, restart → banner`,
          value: seconds(again.startupMs),
          goal: "-",
        },
        {
          figure: `idle memory: ${variant.label}, ${IDLE_MS / 1000} s after the banner`,
          value: `${mb(again.serviceRss)} service RSS, ${mb(again.treeRss)} all its processes`,
          goal: "-",
        },
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}
