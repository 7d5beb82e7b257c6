/**
 * P5 (issue 8 §4): two service instances ÷ one on PostgreSQL, under mixed load over many
 * connections. Each instance is `dist/main.js` in its own process on one fresh database (as the
 * two-process e2e test runs them); the connectors and callers run in the fleet process
 * (bench/connector-fleet.ts). With two instances, half the connectors check in on each and every
 * end user's calls alternate between the instances, as behind a load balancer: half the
 * hand-overs cross instances (LISTEN/NOTIFY).
 */
import { Fleet } from "./fleet.ts";
import { freshStore, seedStore, startService, type ServiceProcess } from "./service-process.ts";

export const MIXED_END_USERS = 40;
export const MIXED_CALLERS = 32;
const MIXED_SECONDS = 10;
const NOOP_PAUSE_MS = 1000;

export interface MixedRun {
  instances: number;
  /** Completed API calls per second (sync passthrough round trips, Request and end-user reads). */
  perSecond: number;
  passthroughPerSecond: number;
  failures: number;
  /**
   * Each instance's CPU time (user + system, all its work: API calls and the connector calls they
   * cause) during the mixed load ÷ the API calls it served, in ms.
   */
  cpuMsPerCall: number[];
}

export interface TwoInstancesResult {
  one: MixedRun;
  /**
   * One instance carrying what each of the two carries: half the end users and half the callers.
   * An instance's CPU per call depends on how busy it is (a busier event loop batches more work per
   * wake-up: socket writes, reads, timers), so the second instance's own cost is read against this
   * run, not against `one`, which is twice as busy (decision 0029).
   */
  half: MixedRun;
  two: MixedRun;
}

async function mixedRun(serverUrl: string, instances: number, share = 1): Promise<MixedRun> {
  const target = await freshStore(serverUrl);
  const seeded = await seedStore(target, Math.round(MIXED_END_USERS * share));
  const services: ServiceProcess[] = [];
  const fleet = new Fleet();
  try {
    for (let i = 0; i < instances; i += 1) {
      services.push(await startService(target, { CONNECTOR_HOLD_MS: "20000", RATE_LIMIT_MAX: "1000000" }));
    }
    const at = (i: number): string => services[i % services.length]?.url ?? "";
    const half = Math.ceil(seeded.endUsers.length / instances);
    await fleet.send<"connected">({
      cmd: "connect",
      connectors: seeded.endUsers.map((e, i) => ({
        url: at(Math.floor(i / half)),
        userName: e.userName,
        password: e.password,
      })),
      noOpPauseMs: NOOP_PAUSE_MS,
      rampConcurrency: 8,
    });
    await fleet.untilHeld(seeded.endUsers.length, 60_000);
    const targets = seeded.endUsers.flatMap((e, i) =>
      // Calls to each end user alternate between the instances (one target per instance).
      services.map((_, k) => ({ url: at(i + k), endUserId: e.endUserId })),
    );
    const cpuBefore = services.map((service) => service.cpuSeconds());
    const mixed = await fleet.send<"mixed">({
      cmd: "mixed",
      secretKey: seeded.secretKey,
      targets,
      concurrency: Math.round(MIXED_CALLERS * share),
      durationMs: MIXED_SECONDS * 1000,
    });
    const cpuMsPerCall = services.map(
      (service, i) =>
        ((service.cpuSeconds() - (cpuBefore[i] ?? 0)) * 1000) / (mixed.byUrl[service.url] ?? NaN),
    );
    const seconds = mixed.ms / 1000;
    return {
      instances,
      cpuMsPerCall,
      perSecond: mixed.calls / seconds,
      passthroughPerSecond: mixed.passthrough / seconds,
      failures: mixed.failures,
    };
  } finally {
    await fleet.close();
    for (const service of services) await service.stop();
    await target.drop();
  }
}

export async function measureTwoInstances(serverUrl: string): Promise<TwoInstancesResult> {
  const one = await mixedRun(serverUrl, 1);
  const half = await mixedRun(serverUrl, 1, 0.5);
  const two = await mixedRun(serverUrl, 2);
  return { one, half, two };
}
