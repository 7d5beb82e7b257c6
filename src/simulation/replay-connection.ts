import { systemClock } from "../platform/clock.ts";
import { waitingReasonOfStatus } from "../requests/probable-causes.ts";
import { bundleStatusChanges } from "../store/support-bundle.ts";
import type { LedgerFault } from "../simulator/ledger/index.ts";
import type { ConnectedEndUser, System } from "../testing/system.ts";

/**
 * Faults that leave no Request, replayed (issue 28 item 2, decision 0049): the bundle's connection
 * status history, in order with the Requests' creations. A change to `offline` (the connector went
 * silent: the PC off, the Web Connector closed) stops the replay's simulated connector and moves
 * the service's clock past `CONNECTION_OFFLINE_AFTER_MS` and a sweep, so the service stores
 * `offline` as it did; a change to `ledger_unavailable` (a session whose `connectionError` said the
 * application could not be opened: closed, starting, a dialog, the file held in single-user mode)
 * sets the matching fault of the simulated application for one check-in, then stops the connector.
 * A change back to `online` starts the connector again (its first check-in at once). Requests made
 * meanwhile wait, as they did. The service's clock moves one millisecond after each change, so that
 * a Request made right after it is seen, in the replay's own history, to be made after it.
 *
 * Not replayed: a refused login (the bundle shows `loginRefusedAt` but not when each refusal
 * happened), a company file mismatch, a connector shared by two computers, a dropped session
 * without a status change, and the spacing in time between check-ins.
 */
export interface RecordedChange {
  status: string;
  statusReason: string | null;
  changedAt: string;
}

const FAULT_FOR_REASON: Readonly<Record<string, LedgerFault>> = {
  LEDGER_CANNOT_START: { kind: "app_not_running" },
  LEDGER_STARTING: { kind: "starting" },
  LEDGER_MODAL_DIALOG_OPEN: { kind: "modal_dialog" },
  LEDGER_NOT_RESPONDING: { kind: "modal_dialog" },
  LEDGER_FILE_MODE_CONFLICT: { kind: "file_mode_conflict" },
};

export class ConnectionPlayer {
  /** The waiting reason the connection gives waiting Requests now (null: it is online). */
  awayReason: string | null = null;

  constructor(
    private readonly sys: System,
    private readonly eu: ConnectedEndUser,
  ) {}

  /** Plays one recorded change: to `offline`, `ledger_unavailable` or `online` (others are not played). */
  async play(change: RecordedChange): Promise<void> {
    if (change.status === "online") return this.comeBack();
    if (change.status !== "offline" && change.status !== "ledger_unavailable") return;
    const reason = waitingReasonOfStatus(change.status, change.statusReason);
    if (reason === null || this.awayReason === reason) return;
    const clock = this.sys.fakeClock;
    if (!clock) throw new Error("replay: connection faults need the service's injected clock");
    await this.eu.connector.stop();
    if (change.status === "offline") {
      const config = this.sys.deps.config;
      await clock.advance(config.CONNECTION_OFFLINE_AFTER_MS + config.SWEEP_INTERVAL_MS);
    } else {
      this.eu.ledger.setFault(FAULT_FOR_REASON[change.statusReason ?? ""] ?? { kind: "app_not_running" });
      await this.eu.connector.checkInNow();
    }
    await this.untilStatus(change.status);
    await clock.advance(1);
    this.awayReason = reason;
  }

  /** Back online: the fault cleared, the connector started (it checks in at once). */
  async comeBack(): Promise<void> {
    if (this.awayReason === null) return;
    this.awayReason = null;
    this.eu.ledger.setFault(null);
    await this.sys.fakeClock?.advance(1);
    this.eu.connector.start();
    await this.untilStatus("online");
  }

  /** The replayed connection's status history, oldest first (as a bundle shows it). */
  async changes(): Promise<RecordedChange[]> {
    const rows = await bundleStatusChanges(this.sys.deps.db, this.eu.connectionId, {
      since: new Date(0),
      until: new Date(Date.UTC(9999, 0, 1)),
    });
    return rows.map((c) => ({
      status: c.status,
      statusReason: c.status_reason,
      changedAt: c.changed_at.toISOString(),
    }));
  }

  /** The connection's last stored status (what its history, and so a bundle, shows). */
  async status(): Promise<string | undefined> {
    return (await this.changes()).at(-1)?.status;
  }

  async untilStatus(status: string, timeoutMs = 30_000): Promise<void> {
    const started = systemClock.now();
    while ((await this.status()) !== status) {
      if (systemClock.now() - started > timeoutMs)
        throw new Error(`replay: timed out waiting until the replayed connection is ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
