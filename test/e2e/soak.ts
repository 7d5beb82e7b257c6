import { appendFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { TestContext } from "node:test";
import fc from "fast-check";

/**
 * Shared machinery of the reliability suites (issue 8 §5): their size (small in `npm test`, long
 * under `npm run soak`), a seed that reproduces a run, the counts each run reports, and a full
 * garbage collection for memory measurements.
 */

/** Whether the long variants run (`npm run soak` sets SOAK=1). */
export const SOAK = process.env.SOAK === "1";

/** `small` in `npm test`, `long` under `npm run soak`; an explicit env variable wins over both. */
export function soakSize(variable: string, small: number, long: number): number {
  const given = Number(process.env[variable]);
  if (Number.isInteger(given) && given > 0) return given;
  return SOAK ? long : small;
}

/**
 * The run's seed: SOAK_SEED when given (to replay a failing run), otherwise a fresh one. It is
 * printed first, so a failure can always be reproduced with `SOAK_SEED=<seed>`.
 */
export function soakSeed(t: TestContext, suite: string): number {
  const given = Number(process.env.SOAK_SEED);
  const seed = Number.isInteger(given) ? given : Date.now() % 2_147_483_647;
  t.diagnostic(`${suite} seed ${seed} (replay with SOAK_SEED=${seed})`);
  return seed;
}

/** `count` uniform values of `arbitrary` drawn from `seed` (the same seed, the same plan). */
export function plan<T>(arbitrary: fc.Arbitrary<T>, seed: number, count: number): T[] {
  return fc.sample(fc.noBias(arbitrary), { seed, numRuns: count });
}

/**
 * Reports a suite's counts: as a test diagnostic (shown by `npm test`) and, when SOAK_REPORT names
 * a file, as one JSON line appended to it (read back by scripts/soak.ts for its summary table).
 */
export function reportCounts(t: TestContext, suite: string, counts: Record<string, unknown>): void {
  t.diagnostic(`${suite} ${JSON.stringify(counts)}`);
  const file = process.env.SOAK_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify({ suite, ...counts })}\n`);
}

let gc: (() => void) | undefined;

/** A full collection (twice: weak references and finalizers free more on the second pass). */
export function collectGarbage(): void {
  if (!gc) {
    // Available without `--expose-gc` on the command line: the flag is set, then `gc` is read from a
    // fresh context, where V8 installs it.
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
  gc();
}

/** Heap in use and resident set size after a full collection, in MB. */
export function memoryAfterGc(): { heapMb: number; rssMb: number } {
  collectGarbage();
  const usage = process.memoryUsage();
  return { heapMb: round(usage.heapUsed / 2 ** 20), rssMb: round(usage.rss / 2 ** 20) };
}

function round(mb: number): number {
  return Math.round(mb * 10) / 10;
}
