import type { Deps } from "../deps.ts";
import { systemClock, type Clock } from "../platform/clock.ts";
import { connectionChannel } from "../requests/engine.ts";
import { ServiceError } from "../errors/service-error.ts";
import {
  SIMULATED_COUNTRIES,
  SIMULATED_XML_VERSIONS,
  SimulatedLedgerApplication,
  type SimulatedCountry,
  type SimulatedXmlVersion,
} from "../simulator/ledger/application.ts";
import { PersistedApplication, type CompanyFileSnapshot } from "../simulator/ledger/index.ts";
import type { DemoCompanySize } from "../simulator/ledger/index.ts";
import { simulatedLatency, type SimulatedLatency } from "../simulator/latency.ts";
import { SimulatedWebConnector, type ConnectorEvent } from "../simulator/web-connector.ts";
import { findConnectionById, type ConnectionRow } from "../store/connections.ts";
import { waitingRequests } from "../store/requests.ts";
import {
  attachSimulatedCompanyFile,
  detachSimulatedCompanyFile,
  findSimulatedCompanyFile,
  listAttachedSimulatedCompanyFiles,
  saveSimulatedCompanyFile,
} from "../store/simulated-company-files.ts";
import { qwcForSetup } from "../tenancy/auth-sessions.ts";
import {
  issueConnectorPassword,
  type AttachSimulatedConnector,
  type AttachedSimulatedConnector,
  type SimulatedApplicationChoice,
  type SimulatedConnectors,
} from "../tenancy/simulated-connections.ts";

/**
 * Simulated end users inside the service (`SIMULATOR=on`): for each attached connection, a
 * simulated Web Connector (speaking SOAP to this service over HTTP, like the real one) and the
 * simulated application with one company file, saved in the store after every change
 * (`PersistedApplication`), so Requests and the file they changed survive a restart together.
 *
 * Two departures from a real end user's computer, both for a local developer's first hour:
 * - each connector checks in at once when the service starts (`restoreAll`), and again whenever work
 *   is queued for its connection while it is between sessions, instead of waiting up to its
 *   scheduled interval (`CONNECTOR_CHECK_IN_SECONDS`) as a real one would;
 * - its password is re-issued at every start (the store keeps only digests).
 *
 * They are as slow as `SIMULATOR_LATENCY` says (none by default): their connector's network and
 * their application's work, on real time (decision 0034).
 */
export interface SimulationHostOptions {
  /** Pause after a NoOp (ms); the real connector's 5 s by default. */
  noOpPauseMs?: number;
  /**
   * Where the simulated connectors reach this service's connector endpoint: its own listener
   * (main.ts), since the public URL need not lead back to it (a container's published port, a proxy).
   * Their `.qwc` is the one end users download, with this `AppURL`. Default: `CONNECTOR_URL`.
   */
  connectorUrl?: string;
  /** The clock the simulated end users spend `SIMULATOR_LATENCY` on; real time by default. */
  latencyClock?: Clock;
}

interface Running {
  readonly connectionId: string;
  readonly connector: SimulatedWebConnector;
  readonly watching: AbortController;
  nudging: boolean;
  again: boolean;
}

/** How long an attach waits for the connection's first successful check-in. */
const ONLINE_WAIT_MS = 30_000;

/** Check-ins one wake-up may cause in a row when work stays queued (a fault keeps it from running). */
const CHECK_INS_PER_WAKE_MAX = 3;

export class SimulationHost implements SimulatedConnectors {
  private readonly running = new Map<string, Running>();
  private readonly latency: SimulatedLatency;

  constructor(
    private readonly deps: Deps,
    private readonly options: SimulationHostOptions = {},
  ) {
    this.latency = simulatedLatency(deps.config.SIMULATOR_LATENCY, options.latencyClock);
  }

  /** The service's dependencies with the connector endpoint its simulated connectors use. */
  private withConnectorUrl(): Deps {
    const connectorUrl = this.options.connectorUrl;
    return connectorUrl ? { ...this.deps, config: { ...this.deps.config, connectorUrl } } : this.deps;
  }

  /** Whether a simulated connector runs for the connection. */
  isRunning(connectionId: string): boolean {
    return this.running.has(connectionId);
  }

  /** Starts every attached simulated end user kept in the store; returns how many started. */
  async restoreAll(): Promise<number> {
    let started = 0;
    for (const row of await listAttachedSimulatedCompanyFiles(this.deps.db)) {
      const connection = await findConnectionById(this.deps.db, row.connectionId);
      if (!connection) continue;
      try {
        const password = await issueConnectorPassword(this.deps, connection.id);
        await this.start(connection, password, row.companyName, row.snapshot, editionOf(row.application));
        started += 1;
      } catch (error) {
        this.deps.logger.error(
          { err: error, connectionId: row.connectionId },
          "simulated end user not started",
        );
      }
    }
    return started;
  }

  async attach(input: AttachSimulatedConnector): Promise<AttachedSimulatedConnector> {
    const { connection } = input;
    const existing = await findSimulatedCompanyFile(this.deps.db, connection.id);
    // What the caller asks for, else what the file's application was, else the default.
    const application = editionOf({
      xmlVersion: input.application?.xmlVersion ?? existing?.application?.xmlVersion,
      country: input.application?.country ?? existing?.application?.country,
    });
    const snapshot =
      existing?.snapshot ?? newCompanyFile(input.companyName, this.deps.config.SIMULATOR_COMPANY_SIZE);
    const row = await attachSimulatedCompanyFile(
      this.deps.db,
      {
        connectionId: connection.id,
        projectId: connection.project_id,
        companyName: existing?.companyName ?? input.companyName,
        snapshot,
        application,
      },
      new Date(this.deps.clock.now()),
    );
    const companyFilePath = await this.start(
      connection,
      input.password,
      row.companyName,
      snapshot,
      application,
    );
    const online = await this.waitUntilOnline(connection.id);
    return {
      connectionId: connection.id,
      companyFilePath,
      reused: existing !== null,
      online,
      application,
    };
  }

  /**
   * Waits (bounded, in real time: the simulated connector runs on real time) until the connection is
   * online after its first check-in, so that calls made right after an attach or a start succeed
   * (before it, a call fails fast with INTEGRATION_CONNECTION_NOT_SET_UP).
   */
  async waitUntilOnline(connectionId: string, timeoutMs = ONLINE_WAIT_MS): Promise<boolean> {
    const deadline = systemClock.now() + timeoutMs;
    for (;;) {
      const connection = await findConnectionById(this.deps.db, connectionId);
      if (connection?.status === "online") return true;
      if (!this.running.has(connectionId) || systemClock.now() >= deadline) return false;
      await systemClock.sleep(50);
    }
  }

  /** Stops every simulated connector (the company files are already saved). */
  async stop(): Promise<void> {
    await Promise.all([...this.running.keys()].map((id) => this.stopOne(id)));
  }

  private async start(
    connection: ConnectionRow,
    password: string,
    companyName: string,
    snapshot: unknown,
    edition: SimulatedEdition,
  ): Promise<string> {
    await this.stopOne(connection.id);
    const ledger = new SimulatedLedgerApplication({ ...edition, latency: this.latency });
    const file = ledger.restoreCompanyFile(snapshot);
    const application = new PersistedApplication(ledger, {
      save: (next) => this.save(connection.id, next),
    });
    application.markSaved(file);
    const entry: Running = {
      connectionId: connection.id,
      connector: new SimulatedWebConnector({
        qwc: qwcForSetup(this.withConnectorUrl(), connection, companyName),
        password,
        application,
        latency: this.latency,
        ...(this.options.noOpPauseMs === undefined ? {} : { noOpPauseMs: this.options.noOpPauseMs }),
        onEvent: (event) => this.observe(entry, event),
      }),
      watching: new AbortController(),
      nudging: false,
      again: false,
    };
    this.running.set(connection.id, entry);
    entry.connector.start();
    this.watch(entry);
    return file.path;
  }

  private async stopOne(connectionId: string): Promise<void> {
    const entry = this.running.get(connectionId);
    if (!entry) return;
    this.running.delete(connectionId);
    entry.watching.abort();
    await entry.connector.stop();
  }

  private async save(connectionId: string, snapshot: CompanyFileSnapshot): Promise<void> {
    const saved = await saveSimulatedCompanyFile(
      this.deps.db,
      connectionId,
      snapshot,
      new Date(this.deps.clock.now()),
    );
    if (!saved) {
      void this.stopOne(connectionId);
      throw new Error("the end user of this company file was deleted");
    }
  }

  /** A password the service no longer accepts means the end user set up another connector. */
  private observe(entry: Running, event: ConnectorEvent): void {
    if (event.type !== "session_ended" || event.report.outcome !== "invalid_user") return;
    if (this.running.get(entry.connectionId) !== entry) return;
    this.deps.logger.info(
      { connectionId: entry.connectionId },
      "simulated connector detached: its password changed",
    );
    void detachSimulatedCompanyFile(this.deps.db, entry.connectionId, new Date(this.deps.clock.now()))
      .then(() => this.stopOne(entry.connectionId))
      .catch((error: unknown) =>
        this.deps.logger.error({ err: error }, "detaching a simulated connector failed"),
      );
  }

  /** Checks in when work is queued for the connection (wake-ups: in process, or LISTEN/NOTIFY). */
  private watch(entry: Running): void {
    const signal = entry.watching.signal;
    if (signal.aborted) return;
    // One standing listener: a wake-up between two waits is not missed.
    const stop = this.deps.store.notifier.listen(connectionChannel(entry.connectionId), () => {
      if (signal.aborted) return;
      void this.nudge(entry).catch((error: unknown) =>
        this.deps.logger.warn({ err: error, connectionId: entry.connectionId }, "simulated check-in failed"),
      );
    });
    signal.addEventListener("abort", stop, { once: true });
  }

  private async nudge(entry: Running): Promise<void> {
    if (entry.nudging) {
      // The check-in running now may end before it sees this work: look again after it.
      entry.again = true;
      return;
    }
    entry.nudging = true;
    try {
      for (let i = 0; i < CHECK_INS_PER_WAKE_MAX && (i === 0 || entry.again); i++) {
        entry.again = false;
        if (entry.watching.signal.aborted || !(await this.hasWork(entry.connectionId))) continue;
        // Joins the session in progress, if any, like "Update Selected" in the real connector.
        await entry.connector.checkInNow();
      }
    } finally {
      entry.nudging = false;
    }
  }

  private async hasWork(connectionId: string): Promise<boolean> {
    const waiting = await waitingRequests(this.deps.db, connectionId, ["queued", "waiting_for_connection"]);
    return waiting.length > 0;
  }
}

/** The message version and regional edition of a simulated application. */
interface SimulatedEdition {
  xmlVersion: SimulatedXmlVersion;
  country: SimulatedCountry;
}

/**
 * The simulated application an end user runs: the given (or kept) message version and edition, by
 * default 16.0 and US. A value the simulator cannot play is refused, naming the accepted ones.
 */
export function editionOf(given: SimulatedApplicationChoice | null): SimulatedEdition {
  const xmlVersion = given?.xmlVersion ?? "16.0";
  const country = given?.country?.toUpperCase() ?? "US";
  const version = SIMULATED_XML_VERSIONS.find((v) => v === xmlVersion);
  if (!version) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "xmlVersion",
      message: `The simulated application speaks ${SIMULATED_XML_VERSIONS.join(", ")}.`,
    });
  }
  const edition = SIMULATED_COUNTRIES.find((c) => c === country);
  if (!edition) {
    throw new ServiceError("INVALID_PARAMETER", {
      param: "country",
      message: `The simulated application's editions are ${SIMULATED_COUNTRIES.join(", ")}.`,
    });
  }
  return { xmlVersion: version, country: edition };
}

/** A new company file with the demo company's year of business (`SIMULATOR_COMPANY_SIZE`), as a snapshot. */
function newCompanyFile(companyName: string, size: DemoCompanySize): CompanyFileSnapshot {
  const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0" });
  return ledger
    .createCompanyFile(companyFilePath(companyName), { companyName, seed: "demo", demoSize: size })
    .snapshot();
}

/** `C:\Company Files\<name>.company`, with the characters Windows refuses in file names replaced. */
export function companyFilePath(companyName: string): string {
  const safe = companyName
    // eslint-disable-next-line no-control-regex
    .replace(/[<>:"/\\|?*\u0000-\u001f]+/g, "-")
    .trim()
    .slice(0, 60);
  return `C:\\Company Files\\${safe || "Company"}.company`;
}
