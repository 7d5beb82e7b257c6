import { ActivityStamps } from "../store/activity-stamps.ts";
import { sealingFor } from "../platform/sealing.ts";
import { join, resolve } from "node:path";
import type { Config } from "../config.ts";
import { systemClock } from "../platform/clock.ts";
import { newInstanceId } from "../platform/ids.ts";
import { Metrics } from "../platform/metrics.ts";
import {
  LOCK_FILE_NAME,
  tryAcquireDataDirLock,
  type DataDirLock,
  type LockHolder,
} from "../store/data-dir-lock.ts";
import { probeAdminChannel, remoteAdmin } from "./client.ts";
import type { AdminOperations } from "./operations.ts";
import { adminSocketPath } from "./socket-path.ts";

/**
 * Who acts on the store for an operator command (decision 0005):
 *
 * 1. A service answers on `<DATA_DIR>/admin.sock` → the command runs inside it (both stores).
 * 2. Otherwise, PostgreSQL → the command opens the database itself (every process may).
 * 3. Otherwise, PGlite → the command takes the data directory's lock and opens the store itself; a
 *    service that starts meanwhile waits for the command to finish. If a service holds the lock but
 *    does not answer (still starting), the command waits for it, then gives up with a clear message.
 *
 * No path writes to a copy of the store that the service does not see, so nothing is lost silently.
 */
export interface AdminSession {
  ops: AdminOperations;
  /** Where the command runs, for the operator: "the running service (pid 123)" or "the store". */
  via: string;
  close(): Promise<void>;
}

/** The data directory is owned by another process: the message says which and what to do. */
export class DataDirBusyError extends Error {
  override name = "DataDirBusyError";
}

/** How long a command waits for a starting service or another command before giving up. */
const WAIT_MS = 30_000;

export async function openAdmin(config: Config, waitMs = WAIT_MS): Promise<AdminSession> {
  const socket = adminSocketPath(config.DATA_DIR);
  const deadline = systemClock.now() + waitMs;
  for (;;) {
    const status = socket ? await probeAdminChannel(socket) : null;
    if (socket && status) {
      return {
        ops: remoteAdmin(socket),
        via: `the running service (pid ${status.pid})`,
        close: async () => {},
      };
    }
    if (config.DATABASE_URL) return direct(config, null);
    const attempt = await tryAcquireDataDirLock(config.DATA_DIR, "cli");
    if (attempt.acquired) return direct(config, attempt.lock);
    if (systemClock.now() >= deadline)
      throw new DataDirBusyError(busyMessage(config.DATA_DIR, attempt.holder, socket));
    await systemClock.sleep(200);
  }
}

async function direct(config: Config, lock: DataDirLock | null): Promise<AdminSession> {
  try {
    // Loaded only here: a command that goes to the running service needs none of the store's code.
    const [{ openStore }, { adminOperations }, { pino }] = await Promise.all([
      import("../store/database.ts"),
      import("./operations.ts"),
      import("pino"),
    ]);
    const store = await openStore({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      connectTimeoutMs: config.STORE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: config.STORE_STATEMENT_TIMEOUT_MS,
      sharedBuffersMb: config.STORE_EMBEDDED_SHARED_BUFFERS_MB,
    });
    // Not a service instance: it holds no connector session, so its instance ID is never registered.
    const deps = {
      config,
      store,
      db: store.db,
      clock: systemClock,
      logger: pino({ level: "silent" }),
      instanceId: newInstanceId(),
      activity: new ActivityStamps(),
      sealing: sealingFor(config),
      metrics: new Metrics(),
    };
    return {
      ops: adminOperations(deps),
      via: store.engine === "postgres" ? "the database" : `the store in ${resolve(config.DATA_DIR)}`,
      close: async () => {
        await store.close();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/**
 * Makes the service the owner of the embedded store's data directory, waiting (bounded) for an
 * operator command that holds it; refuses when another service holds it.
 */
export async function ownDataDir(dataDir: string, waitMs = WAIT_MS): Promise<DataDirLock> {
  const deadline = systemClock.now() + waitMs;
  for (;;) {
    const attempt = await tryAcquireDataDirLock(dataDir, "service");
    if (attempt.acquired) return attempt.lock;
    if (attempt.holder.role === "service") {
      throw new DataDirBusyError(
        `Another ledger-bridge service (${holderText(attempt.holder)}) is running on the embedded store in ${resolve(dataDir)}. ` +
          `Stop it first, or give this one its own DATA_DIR. (If no such process runs, remove ${join(resolve(dataDir), LOCK_FILE_NAME)}.)`,
      );
    }
    if (systemClock.now() >= deadline) throw new DataDirBusyError(busyMessage(dataDir, attempt.holder, null));
    await systemClock.sleep(200);
  }
}

function busyMessage(dataDir: string, holder: LockHolder, socket: string | null): string {
  const dir = resolve(dataDir);
  const lockFile = join(dir, LOCK_FILE_NAME);
  const who = holderText(holder);
  if (holder.role === "cli") {
    return `Another ledger-bridge command (${who}) is using the embedded store in ${dir}. Try again when it has finished.`;
  }
  const channel = socket
    ? `it does not answer on its admin channel (${socket}); if it is still starting, try again in a moment`
    : `its data directory path is too long for an admin socket; use a shorter DATA_DIR`;
  return (
    `A ledger-bridge service (${who}) owns the embedded store in ${dir}, and ${channel}. ` +
    `Two processes must never open one embedded store. If no such process runs, remove ${lockFile}.`
  );
}

function holderText(holder: LockHolder): string {
  return `pid ${holder.pid} on ${holder.hostname}, since ${holder.startedAt || "an unknown time"}`;
}
