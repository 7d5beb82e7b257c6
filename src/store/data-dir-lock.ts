import {
  linkSync,
  mkdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { systemClock } from "../platform/clock.ts";
import { randomToken } from "../platform/random.ts";

/**
 * The embedded store's data directory belongs to one process at a time: two PGlite instances on one
 * directory corrupt it or lose writes. The owner (the service, or a CLI command while no service
 * runs) holds `<DATA_DIR>/ledger-bridge.lock`, a small JSON file naming its process.
 *
 * - Taking it is atomic: the file is written under a private name and hard-linked into place, which
 *   fails if it exists, so no reader ever sees a half-written lock.
 * - A lock whose process is gone (killed, crashed) is stale and is replaced. The process is
 *   identified by pid and, on Linux, by its start time, so a recycled pid (a container's pid 1 after
 *   a restart) does not look alive. Replacing a stale lock happens under a short-lived mutex
 *   directory, and only if the file still holds what was judged stale.
 * - A lock written by another host (a data directory on a shared disk) is never judged stale.
 */
export const LOCK_FILE_NAME = "ledger-bridge.lock";

export interface LockHolder {
  pid: number;
  /** `service` (npm start) or `cli` (an operator command opening the store itself). */
  role: "service" | "cli";
  hostname: string;
  /** `/proc/<pid>/stat` start time (clock ticks since boot) where available. */
  startTicks: string | null;
  startedAt: string;
}

export type LockAttempt = { acquired: true; lock: DataDirLock } | { acquired: false; holder: LockHolder };

/** How long a takeover mutex may be held before it is itself considered abandoned. */
const TAKEOVER_STALE_MS = 10_000;

/** A held lock. */
export class DataDirLock {
  constructor(
    readonly path: string,
    private readonly content: string,
  ) {}

  /** Releases the lock if it is still ours. */
  release(): void {
    try {
      if (readFileSync(this.path, "utf8") === this.content) unlinkSync(this.path);
    } catch {
      // Already gone.
    }
  }
}

/** Tries once to take the lock of `dataDir` (created if missing); reports the holder otherwise. */
export async function tryAcquireDataDirLock(dataDir: string, role: LockHolder["role"]): Promise<LockAttempt> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE_NAME);
  const mine: LockHolder = {
    pid: process.pid,
    role,
    hostname: hostname(),
    startTicks: processStartTicks(process.pid),
    startedAt: new Date(systemClock.now()).toISOString(),
  };
  const content = JSON.stringify(mine);
  for (let attempt = 0; attempt < 20; attempt++) {
    if (createExclusive(path, content)) return { acquired: true, lock: new DataDirLock(path, content) };
    const seen = readText(path);
    if (seen === null) continue;
    const holder = parseHolder(seen);
    if (holder && isAlive(holder)) return { acquired: false, holder };
    await removeStale(path, seen);
  }
  throw new Error(`Could not take ${path}: it keeps changing. Is another ledger-bridge process starting?`);
}

/** Whether a lock holder's process still runs (always true for another host's). */
export function isAlive(holder: LockHolder): boolean {
  if (holder.hostname !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const ticks = processStartTicks(holder.pid);
  return ticks === null || holder.startTicks === null || ticks === holder.startTicks;
}

/** The lock's holder, if the file exists and is readable. */
export function readLockHolder(dataDir: string): LockHolder | null {
  const text = readText(join(dataDir, LOCK_FILE_NAME));
  return text === null ? null : parseHolder(text);
}

function createExclusive(path: string, content: string): boolean {
  const temp = `${path}.${process.pid}.${randomToken(6)}`;
  writeFileSync(temp, content, { mode: 0o600 });
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

async function removeStale(path: string, seen: string): Promise<void> {
  const mutex = `${path}.takeover`;
  try {
    mkdirSync(mutex);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Process-level real time: a lock outlives any injected clock.
    const age = systemClock.now() - (statSafe(mutex) ?? systemClock.now());
    if (age > TAKEOVER_STALE_MS) rmdirSync(mutex, { maxRetries: 0 });
    else await systemClock.sleep(25);
    return;
  }
  try {
    if (readText(path) === seen) unlinkSync(path);
  } finally {
    rmdirSync(mutex);
  }
}

function statSafe(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid !== "number" || (value.role !== "service" && value.role !== "cli")) return null;
    return {
      pid: value.pid,
      role: value.role,
      hostname: typeof value.hostname === "string" ? value.hostname : hostname(),
      startTicks: typeof value.startTicks === "string" ? value.startTicks : null,
      startedAt: typeof value.startedAt === "string" ? value.startedAt : "",
    };
  } catch {
    return null;
  }
}

/** Field 22 of `/proc/<pid>/stat` (after the command name, which may contain spaces); null elsewhere. */
function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}
