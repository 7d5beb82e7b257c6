import { pino } from "pino";
import { buildApp } from "./app.ts";
import { loadConfig } from "./config.ts";
import type { Deps } from "./deps.ts";
import { seedDemo } from "./simulation/demo.ts";
import { SimulationHost } from "./simulation/host.ts";
import { systemClock } from "./platform/clock.ts";
import { openStore } from "./store/database.ts";
import { recoverAfterRestart } from "./requests/restart.ts";
import { startSweeper } from "./requests/sweeper.ts";

/**
 * Composition root: configuration, store, HTTP server (API, hosted setup page, connector endpoint)
 * and, unless SIMULATOR=off, a simulated end user whose company file has sample data.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.LOG_LEVEL });
  const store = await openStore({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  const deps: Deps = { config, store, db: store.db, clock: systemClock, logger };
  const simulation = config.SIMULATOR === "on" ? new SimulationHost(deps) : null;
  deps.simulatedConnectors = simulation ?? undefined;
  const interrupted = await recoverAfterRestart(deps);
  if (interrupted > 0) logger.warn({ interrupted }, "requests in flight at the last stop await recovery");
  const app = await buildApp(deps);
  await app.listen({ port: config.PORT, host: config.HOST });
  const stops: Array<() => Promise<void>> = [];
  // Queue TTL and idempotency retention are enforced in the background too (requests/sweeper.ts).
  const sweeper = startSweeper(deps);
  stops.push(() => sweeper.stop());
  if (simulation) {
    // Simulated end users (the demo one and any attached through a setup page or the CLI) check in
    // as soon as the service listens, with their company files as they were left.
    stops.push(() => simulation.stop());
    await simulation.restoreAll();
    const demo = await seedDemo(deps, simulation);
    process.stdout.write(demo.banner);
  } else {
    logger.info({ url: config.publicUrl, engine: store.engine }, "ledger-bridge listening (simulator off)");
  }

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    for (const stop of stops) await stop();
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
