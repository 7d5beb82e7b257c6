import type { Logger } from "pino";
import type { Config } from "./config.ts";
import type { ActivityStamps } from "./store/activity-stamps.ts";
import type { Clock } from "./platform/clock.ts";
import type { Metrics } from "./platform/metrics.ts";
import type { Sealing } from "./platform/sealing.ts";
import type { Tracing } from "./platform/tracing.ts";
import type { ConnectionRow } from "./store/connections.ts";
import type { Db, Store } from "./store/database.ts";

/** Everything a module needs from the outside world, built once in main.ts (or the test harness). */
export interface Deps {
  config: Config;
  store: Store;
  db: Db;
  clock: Clock;
  logger: Logger;
  /**
   * This process as a service instance (requests/instances.ts): the owner written on the connector
   * sessions whose HTTP calls it holds.
   */
  instanceId: string;
  /** Prometheus metrics of this instance (platform/metrics.ts), fed where things happen. */
  metrics: Metrics;
  /**
   * The activity stamps of connector calls, written in batches (store/activity-stamps.ts).
   * A reader of a connection's `last_seen_at` applies them with `activity.connection(row)`.
   */
  activity: ActivityStamps;
  /**
   * The clock of the HTTP transport's deadlines (a body's receive timeout, decision 0031): real time
   * whatever `clock` is, as for the connector's hold, since they bound sockets, not business rules.
   * Tests that exercise those deadlines inject a FakeClock here.
   */
  transportClock?: Clock | undefined;
  /**
   * Seals and opens secrets at rest with the configured key-encryption key (platform/sealing.ts,
   * decision 0032): built from `SECRETS_KEY` and `SECRETS_KEY_PREVIOUS` with {@link sealingFor}.
   */
  sealing: Sealing;
  /**
   * OpenTelemetry traces (platform/tracing.ts, decision 0048), when configured (`OTEL_*`); absent
   * when off, and then no span is made anywhere.
   */
  tracing?: Tracing | undefined;
  /**
   * Simulator mode only (`SIMULATOR=on`): attaches simulated Web Connectors and company files to
   * connections (the setup page's button, the CLI). Absent otherwise, and then nothing offers it.
   */
  simulatedConnectors?: SimulatedConnectors | undefined;
}

/**
 * Simulator mode (`SIMULATOR=on`, tenancy/simulated-connections.ts): the service itself plays an
 * end user's Web Connector and company file. Declared here, beside the other capabilities a module
 * may be given, so that no feature module is imported by this file.
 */
export interface SimulatedConnectors {
  /**
   * Attaches (or re-attaches) a simulated Web Connector and company file to `connection`, which
   * must accept `password`. A company file kept from an earlier attachment is reused.
   */
  attach(input: AttachSimulatedConnector): Promise<AttachedSimulatedConnector>;
}

/** The message version and regional edition asked of a simulated application (checked by its host). */
export interface SimulatedApplicationChoice {
  xmlVersion?: string | undefined;
  country?: string | undefined;
}

export interface AttachSimulatedConnector {
  connection: ConnectionRow;
  password: string;
  /** Company name for a new company file (the end user's company name). */
  companyName: string;
  /**
   * The simulated application's message version and regional edition (`13.0`…`16.0`; `US`, `CA`,
   * `UK`); the default is 16.0, US. Kept with the company file, and changed only when given.
   */
  application?: SimulatedApplicationChoice;
}

export interface AttachedSimulatedConnector {
  connectionId: string;
  companyFilePath: string;
  /** True when an existing company file (with its data) was attached again. */
  reused: boolean;
  /** Whether the first check-in made the connection online (waited for, within a bound). */
  online: boolean;
  /** The simulated application's message version and regional edition. */
  application: { xmlVersion: string; country: string };
}
