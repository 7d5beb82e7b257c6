#!/usr/bin/env node
/**
 * `npm run build`: compiles `src/` to JavaScript in `dist/` with the type checker
 * (tsconfig.build.json: the `.ts` import specifiers are rewritten to `.js`; tests and `src/testing`
 * are left out), then copies every other file under `src/` beside the compiled modules: the tables
 * the code reads at run time with `new URL("./generated/x.json", import.meta.url)`.
 *
 * `--if-stale` (npm's `prestart` and `pretest`, and `bin/ledger-bridge.mjs`): builds only when the
 * inputs changed since the last build, so `npm ci && npm start` compiles on the first start and a
 * checkout never runs a build older than its sources. The inputs' fingerprint (paths, sizes and
 * modification times) is kept in `dist/.build-inputs`; checking it takes a few milliseconds.
 *
 * The build is written to a directory beside `dist/` and renamed into place, so a process starting
 * meanwhile never loads half a build.
 *
 * Plain JavaScript, run by Node itself: it needs nothing but the `typescript` dev dependency.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST = join(ROOT, "dist");
const SRC = join(ROOT, "src");
const STAMP = ".build-inputs";
/** Files outside `src/` whose change changes the output. */
const CONFIG_INPUTS = ["tsconfig.json", "tsconfig.build.json", "package-lock.json", "scripts/build.mjs"];

/** Whether a path under `src/` is part of the build (not a test, not the test harness). */
function built(path) {
  const rel = relative(SRC, path).split(sep).join("/");
  return !rel.endsWith(".test.ts") && rel !== "testing" && !rel.startsWith("testing/");
}

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (!built(path)) continue;
    if (entry.isDirectory()) walk(path, out);
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** The build's inputs: every built file under `src/` and the configuration, sorted. */
function inputs() {
  const files = walk(SRC, []);
  for (const name of CONFIG_INPUTS) if (existsSync(join(ROOT, name))) files.push(join(ROOT, name));
  return files.sort();
}

/** A digest of the inputs' paths, sizes and modification times: any edit, addition or removal changes it. */
export function fingerprint() {
  const hash = createHash("sha256");
  for (const path of inputs()) {
    const stat = statSync(path);
    hash.update(`${relative(ROOT, path)}\t${stat.size}\t${stat.mtimeMs}\n`);
  }
  return hash.digest("hex");
}

/** Whether `dist/` is missing or older than the sources; false where there are no sources (an image). */
export function isStale() {
  if (!existsSync(SRC)) return false;
  const stamp = join(DIST, STAMP);
  if (!existsSync(stamp)) return true;
  return readFileSync(stamp, "utf8").trim() !== fingerprint();
}

/** Compiles and copies into `dist/`; throws with the compiler's exit code on a type error. */
export function build({ reason } = {}) {
  const started = performance.now();
  let tsc;
  try {
    tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
  } catch {
    throw new Error("building dist/ needs the dev dependencies (typescript): run `npm ci` first");
  }
  process.stderr.write(`Compiling src/ to dist/${reason ? ` (${reason})` : ""} …\n`);
  const fingerprintBefore = fingerprint();
  const out = join(ROOT, `dist.building-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  try {
    const result = spawnSync(
      process.execPath,
      [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", out],
      {
        cwd: ROOT,
        // tsc reports on stdout; it goes to stderr so that a build run on the way to a stdio
        // protocol (`ledger-bridge mcp`) never writes into the protocol stream.
        stdio: ["ignore", 2, 2],
      },
    );
    if (result.status !== 0) throw new Error(`tsc failed (exit ${result.status ?? result.signal})`);
    for (const path of walk(SRC, [])) {
      if (path.endsWith(".ts")) continue;
      cpSync(path, join(out, relative(SRC, path)));
    }
    writeFileSync(join(out, STAMP), `${fingerprintBefore}\n`);
    const old = join(ROOT, `dist.old-${process.pid}`);
    if (existsSync(DIST)) renameSync(DIST, old);
    renameSync(out, DIST);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  process.stderr.write(`Compiled to dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

/** Builds when `dist/` is missing or older than the sources; returns whether it built. */
export function buildIfStale() {
  if (!isStale()) return false;
  build({ reason: existsSync(DIST) ? "the sources changed since the last build" : "first build" });
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv.includes("--if-stale")) buildIfStale();
    else build();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
