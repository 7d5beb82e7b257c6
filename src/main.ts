import { ActivityStamps } from "./store/activity-stamps.ts";
import { sealingFor, unprotectedAtRest } from "./platform/sealing.ts";
import { startAdminChannel, type AdminChannel } from "./admin/channel.ts";
import { DataDirBusyError, ownDataDir } from "./admin/connect.ts";
import { adminSocketPath } from "./admin/socket-path.ts";
import { buildApp } from "./app.ts";
import { loadConfig, type Config } from "./config.ts";
import type { Deps } from "./deps.ts";
import { demoBanner, seedDemo } from "./simulation/demo.ts";
import { SimulationHost } from "./simulation/host.ts";
import { systemClock } from "./platform/clock.ts";
import { formatLatencyProfile, isZeroLatency } from "./platform/latency-profile.ts";
import { serviceLogger } from "./platform/logging.ts";
import { newInstanceId } from "./platform/ids.ts";
import { Metrics } from "./platform/metrics.ts";
import { startTracing } from "./platform/tracing.ts";
import { startMetricsServer } from "./platform/metrics-server.ts";
import { sampleStoredState } from "./store/state-sample.ts";
import { openStore } from "./store/database.ts";
import { startInstance } from "./requests/instances.ts";
import { startSweeper } from "./requests/sweeper.ts";
import { startDispatcher } from "./webhooks/dispatcher.ts";
import { startChangeFeed } from "./change-feed/poller.ts";
import { startMirrorEngine } from "./mirror/engine.ts";

/**
 * Composition root: configuration, store, HTTP server (API, hosted setup page, connector endpoint),
 * the operator's admin channel and, unless SIMULATOR=off, simulated end users (a demo one, and any
 * attached through a setup page or the CLI, whose new company files hold the demo company).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const { logger } = serviceLogger(config.LOG_LEVEL);
  // The embedded store is opened by this process only; operator commands reach it over the admin
  // channel (decision 0005). PostgreSQL is shared by design.
  const dataDirLock = config.DATABASE_URL ? null : await ownDataDir(config.DATA_DIR);
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    connectTimeoutMs: config.STORE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.STORE_STATEMENT_TIMEOUT_MS,
    sharedBuffersMb: config.STORE_EMBEDDED_SHARED_BUFFERS_MB,
  });
  const deps: Deps = {
    config,
    store,
    db: store.db,
    clock: systemClock,
    logger,
    instanceId: newInstanceId(),
    activity: new ActivityStamps(),
    sealing: sealingFor(config),
    metrics: new Metrics({ defaults: true }),
    // OpenTelemetry traces only when configured (decision 0048): otherwise no SDK at all.
    tracing: await startTracing(config),
  };
  deps.metrics.sampleStateWith(() => sampleStoredState(store.db, deps.instanceId));
  logSecretsAtRest(deps);
  const simulation =
    config.SIMULATOR === "on" ? new SimulationHost(deps, { connectorUrl: localConnectorUrl(config) }) : null;
  deps.simulatedConnectors = simulation ?? undefined;
  if (simulation && !isZeroLatency(config.SIMULATOR_LATENCY)) {
    const latency = formatLatencyProfile(config.SIMULATOR_LATENCY);
    logger.info({ latency }, "simulated end users are as slow as SIMULATOR_LATENCY says");
  }
  // This process as an instance with a lease: sessions of instances that stopped (this data's last
  // run, or a neighbour on a shared PostgreSQL) are recovered; live neighbours' are left alone.
  const instance = await startInstance(deps);
  const app = await buildApp(deps);
  await app.listen({ port: config.PORT, host: config.HOST });
  const stops: Array<() => Promise<void>> = [];
  if (config.METRICS_PORT !== undefined) {
    const metricsServer = await startMetricsServer(deps.metrics, config.METRICS_PORT, config.METRICS_HOST);
    stops.push(() => metricsServer.close());
    logger.info({ port: metricsServer.port, host: config.METRICS_HOST }, "metrics at GET /metrics");
  }
  // Queue TTL and idempotency retention are enforced in the background too (requests/sweeper.ts).
  const sweeper = startSweeper(deps);
  stops.push(() => sweeper.stop());
  // Webhook deliveries: fans out the event outbox and attempts due deliveries (webhooks/dispatcher.ts).
  const dispatcher = startDispatcher(deps);
  stops.push(() => dispatcher.stop());
  // Change feed: polls each subscribed connection for changed records (change-feed/poller.ts).
  const changeFeed = startChangeFeed(deps);
  stops.push(() => changeFeed.stop());
  // Mirrors: fill and keep fresh the copies reads may be answered from (mirror/engine.ts).
  const mirrors = startMirrorEngine(deps);
  stops.push(() => mirrors.stop());
  if (simulation) {
    // Simulated end users check in as soon as the service listens, with their files as they were left.
    stops.push(() => simulation.stop());
    await simulation.restoreAll();
  }
  const admin = await openAdminChannel(deps);
  if (admin) stops.unshift(() => admin.close());
  if (simulation) {
    const demo = await seedDemo(deps, simulation);
    // The keys only to a terminal: a log (a container's, a service manager's) gets the key file's path.
    const terminal = process.stdout.isTTY === true;
    process.stdout.write(demoBanner(demo, { url: config.publicUrl, engine: store.engine, terminal }));
  } else {
    logger.info({ url: config.publicUrl, engine: store.engine }, "ledger-bridge listening (simulator off)");
  }

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    for (const stop of stops) await stop();
    // Connections still open once the longest held connector call has returned are cut, so that a
    // stop takes seconds rather than the 72 s keep-alive of an idle client the server keeps waiting on.
    const closing = app.close();
    const cut = setTimeout(() => app.server.closeAllConnections(), config.CONNECTOR_HOLD_MS + 1000);
    await closing;
    clearTimeout(cut);
    // Released once no call is held any more: a neighbour may recover what is left at once.
    await instance.stop({ release: true });
    await store.close();
    // The spans still buffered go to the collector before the process ends.
    await deps.tracing
      ?.shutdown()
      .catch((error: unknown) => logger.warn({ err: error }, "spans not exported"));
    dataDirLock?.release();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

/**
 * The connector endpoint on this process's own listener, for the simulated end users it runs: the
 * public URL may not lead back here (a container's published port, a proxy in front).
 */
function localConnectorUrl(config: Config): string {
  const host = ["0.0.0.0", "::", ""].includes(config.HOST) ? "127.0.0.1" : config.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.PORT}/connector`;
}

/**
 * Says once at start how secrets are kept at rest (decision 0032): without `SECRETS_KEY`, one
 * warning listing exactly what is stored unprotected; with it, the IDs of the keys in use (the
 * rotation's `secrets reseal` report names the same IDs).
 */
function logSecretsAtRest(deps: Deps): void {
  const { sealing, logger } = deps;
  if (!sealing.protects) {
    logger.warn(
      { unprotectedAtRest: unprotectedAtRest() },
      "SECRETS_KEY is not set: these secrets are stored unprotected (README, Secrets at rest)",
    );
    return;
  }
  logger.info(
    { keyId: sealing.currentKeyId, previousKeyIds: sealing.keyIds.slice(1) },
    "secrets at rest are sealed with SECRETS_KEY",
  );
}

/** The admin channel on `<DATA_DIR>/admin.sock`, or null (logged) when it cannot be offered. */
async function openAdminChannel(deps: Deps): Promise<AdminChannel | null> {
  const socket = adminSocketPath(deps.config.DATA_DIR);
  const channel = socket ? await startAdminChannel(deps, socket) : null;
  if (!channel) {
    deps.logger.warn(
      { dataDir: deps.config.DATA_DIR },
      socket
        ? "another service answers on this DATA_DIR's admin channel; operator commands go to it"
        : "DATA_DIR's path is too long for the admin socket; operator commands cannot reach this service",
    );
  }
  return channel;
}

main().catch((error: unknown) => {
  console.error(error instanceof DataDirBusyError ? error.message : error);
  process.exit(1);
});
