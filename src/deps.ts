import type { Logger } from "pino";
import type { Config } from "./config.ts";
import type { ActivityStamps } from "./store/activity-stamps.ts";
import type { Clock } from "./platform/clock.ts";
import type { Metrics } from "./platform/metrics.ts";
import type { Sealing } from "./platform/sealing.ts";
import type { Db, Store } from "./store/database.ts";
import type { SimulatedConnectors } from "./tenancy/simulated-connections.ts";

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
   * Simulator mode only (`SIMULATOR=on`): attaches simulated Web Connectors and company files to
   * connections (the setup page's button, the CLI). Absent otherwise, and then nothing offers it.
   */
  simulatedConnectors?: SimulatedConnectors | undefined;
}
