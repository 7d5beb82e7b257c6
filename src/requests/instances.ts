import { hostname } from "node:os";
import type { Deps } from "../deps.ts";
import {
  claimDeadInstances,
  closeSessionsOf,
  deleteRecoveredInstances,
  insertInstance,
  releaseLease,
  renewLease,
  sentOnSessionsOf,
  type SessionOwners,
} from "../store/instances.ts";
import { markSyncCallersGone } from "../store/requests.ts";
import { connectionChannel, interruptSent } from "./engine.ts";

/**
 * Service instances and their leases (issue 8 §2, migration 0008). Several instances may share one
 * PostgreSQL; each connector session belongs to the instance that holds its HTTP calls
 * (`connector_sessions.instance_id`). A crashed instance's held calls died with it, so its sessions
 * are closed and what they had in flight is interrupted (a write goes to `outcome_unknown` and is
 * recovered by the write-recovery query, a read fails LEDGER_READ_INTERRUPTED; nothing is re-sent).
 *
 * The rule: an instance renews its lease every third of `INSTANCE_LEASE_MS` of the injected clock.
 * Recovery touches only instances whose lease ended (a crash, or a stall longer than the lease) or
 * that released it (a graceful stop), each claimed by exactly one recoverer; never a live
 * neighbour's sessions. It runs at start-up and at every renewal, so a dead instance's sessions are
 * closed within about one lease even when its connector never comes back (a connector that checks
 * in again ends its older session itself). Sessions opened before leases existed (no instance) are
 * recovered at start-up, as a single instance always did.
 */

/** What getLastError answers for a session whose instance died. */
export const INSTANCE_GONE_TEXT =
  "The service stopped while this update session was open. The Web Connector will start a new one at its next update.";

export interface RecoveryResult {
  /** Instances whose sessions this call recovered. */
  instances: string[];
  sessionsClosed: number;
  /** Requests that were `sent` on those sessions and are now interrupted. */
  requestsInterrupted: number;
}

/** How long recovered instance rows are kept (for operators looking at what happened). */
const RECOVERED_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * Recovers every instance whose lease ended (and, with `legacy`, the sessions opened before
 * leases). Safe to run on every instance at once.
 */
export async function recoverDeadInstances(
  deps: Deps,
  options: { legacy?: boolean } = {},
): Promise<RecoveryResult> {
  const now = new Date(deps.clock.now());
  const instances = await claimDeadInstances(deps.db, deps.instanceId, now);
  const owners: SessionOwners = { instanceIds: instances, legacy: options.legacy ?? false };
  const closedOn = await closeSessionsOf(deps.db, owners, now, INSTANCE_GONE_TEXT);
  const sessionsClosed = closedOn.length;
  // An instance still alive whose lease had run out (a stall) forgets what it knew of them from memory.
  for (const connectionId of new Set(closedOn))
    await deps.store.notifier.notify(connectionChannel(connectionId));
  // Their sync callers are gone too: webhooks then report those requests to every endpoint.
  await markSyncCallersGone(deps.db, owners, now);
  let requestsInterrupted = 0;
  for (const row of await sentOnSessionsOf(deps.db, owners)) {
    const moved = await interruptSent(
      deps,
      row,
      "The service instance holding the connector session stopped while the request was in flight",
    );
    if (moved) requestsInterrupted += 1;
  }
  deps.metrics.instancesRecovered.inc(instances.length);
  await deleteRecoveredInstances(deps.db, new Date(now.getTime() - RECOVERED_RETENTION_MS));
  return { instances, sessionsClosed, requestsInterrupted };
}

/** This process as a service instance. */
export interface ServiceInstance {
  readonly id: string;
  /** What the start-up recovery found. */
  readonly startup: RecoveryResult;
  /**
   * Stops renewing. `release` (a graceful stop) ends the lease at once so that a neighbour may
   * recover the sessions at once; without it (a test's crash) the lease runs out on its own.
   */
  stop(options?: { release?: boolean }): Promise<void>;
}

/**
 * Registers `deps.instanceId` with a lease, recovers dead instances (and sessions older than
 * leases), and keeps renewing and recovering until stopped. Call before the server listens.
 */
export async function startInstance(deps: Deps): Promise<ServiceInstance> {
  const leaseMs = deps.config.INSTANCE_LEASE_MS;
  const now = deps.clock.now();
  await insertInstance(deps.db, {
    id: deps.instanceId,
    host: hostname(),
    pid: process.pid,
    started_at: new Date(now),
    lease_expires_at: new Date(now + leaseMs),
    released_at: null,
    recovered_at: null,
  });
  const startup = await recoverDeadInstances(deps, { legacy: true });
  logRecovery(deps, startup);
  const controller = new AbortController();
  const { signal } = controller;
  const loop = (async (): Promise<void> => {
    while (!signal.aborted) {
      await deps.clock.sleep(leaseMs / 3, signal);
      if (signal.aborted) return;
      try {
        if (!(await renewLease(deps.db, deps.instanceId, new Date(deps.clock.now() + leaseMs))))
          deps.logger.warn(
            { instanceId: deps.instanceId },
            "this instance's lease had ended (a stall longer than INSTANCE_LEASE_MS); its sessions were recovered by a neighbour",
          );
        logRecovery(deps, await recoverDeadInstances(deps));
      } catch (error) {
        deps.logger.error({ err: error }, "lease renewal failed; retrying");
      }
    }
  })();
  return {
    id: deps.instanceId,
    startup,
    stop: async (options = {}) => {
      controller.abort();
      await loop;
      if (options.release ?? true) await releaseLease(deps.db, deps.instanceId, new Date(deps.clock.now()));
    },
  };
}

function logRecovery(deps: Deps, result: RecoveryResult): void {
  if (result.sessionsClosed > 0 || result.requestsInterrupted > 0 || result.instances.length > 0)
    deps.logger.warn(
      { ...result, instanceId: deps.instanceId },
      "recovered the connector sessions of stopped instances; writes in flight await recovery",
    );
}
