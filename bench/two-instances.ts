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
const MIXED_SECONDS = 15;
/** Load before the measured window (not counted): compiled code and pools warmed up, in every run alike. */
const WARM_UP_SECONDS = 4;
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
  two: MixedRun;
  /**
   * The CPU comparison at one load per instance (decision 0029): an instance's CPU per call depends
   * on how busy it is, and the unpaced runs leave each of two instances at another rate than one
   * alone. `alone`: one instance with half the end users and callers at half {@link PACED_RATE};
   * `pair`: two instances with all of them at the whole rate, so each serves what `alone` serves.
   */
  alone: MixedRun;
  pair: MixedRun;
}

/** Passthrough round trips started per second in the paced runs (each followed by two reads). */
export const PACED_RATE = 60;

async function mixedRun(
  serverUrl: string,
  instances: number,
  share = 1,
  ratePerSecond?: number,
): Promise<MixedRun> {
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
    const load = (seconds: number) =>
      fleet.send<"mixed">({
        cmd: "mixed",
        secretKey: seeded.secretKey,
        targets,
        concurrency: Math.round(MIXED_CALLERS * share),
        durationMs: seconds * 1000,
        ...(ratePerSecond === undefined ? {} : { ratePerSecond }),
      });
    await load(WARM_UP_SECONDS);
    const cpuBefore = services.map((service) => service.cpuSeconds());
    const mixed = await load(MIXED_SECONDS);
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
  const two = await mixedRun(serverUrl, 2);
  const alone = await mixedRun(serverUrl, 1, 0.5, PACED_RATE / 2);
  const pair = await mixedRun(serverUrl, 2, 1, PACED_RATE);
  return { one, two, alone, pair };
}
