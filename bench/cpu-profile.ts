/**
 * Profiling aid for `npm run bench` (not part of the table): the service's CPU profile during the
 * bench's P2 loads (sync round trips through one connection, 8 in flight: passthrough calls, each
 * alone in its message set, and typed retrieves, which share message sets) and during P3 (`GET
 * /v1/requests/{id}` under autocannon), set up as bench/run.ts sets up P1–P3 (a store on disk,
 * info logging to a file, the end user on a worker thread). Only the service's thread is profiled,
 * and only while the load runs. Writes `p2.cpuprofile`, `p2-typed.cpuprofile` and `p3.cpuprofile` (Chrome DevTools format)
 * to `BENCH_PROFILE_DIR` (default: a new temporary directory); PostgreSQL with DATABASE_URL.
 * Run with `npx tsx bench/cpu-profile.ts`.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serviceLogger } from "../src/platform/logging.ts";
import { systemClock } from "../src/platform/clock.ts";
import { openStore } from "../src/store/database.ts";
import { startSystem, type System } from "../src/testing/system.ts";
import { measureApiRate } from "./api-rate.ts";
import { EndUserThread, setUpEndUser } from "./end-user-thread.ts";
import { freshStore } from "./service-process.ts";

const BODY = "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>";
const P2_REQUESTS = 800;

async function untilOnline(sys: System, endUserId: string): Promise<void> {
  for (let i = 0; i < 750; i += 1) {
    const body = (await (await sys.call("GET", `/v1/end-users/${endUserId}`)).json()) as {
      integrationConnections?: Array<{ status?: string }>;
    };
    if (body.integrationConnections?.[0]?.status === "online") return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the connection never came online");
}

async function profiled<T>(session: Session, file: string, run: () => Promise<T>): Promise<T> {
  await session.post("Profiler.start");
  const result = await run();
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(file, JSON.stringify(profile));
  return result;
}

async function main(): Promise<void> {
  const dir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(join(tmpdir(), "lb-profile-"));
  mkdirSync(dir, { recursive: true });
  const target = await freshStore(process.env.DATABASE_URL);
  const store = await openStore({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  const sys = await startSystem(null, {
    clock: systemClock,
    noOpPauseMs: 20,
    store,
    logger: serviceLogger("info", join(target.dataDir, "service.log")).logger,
    config: { CONNECTOR_HOLD_MS: "20000", LOG_LEVEL: "info", RATE_LIMIT_MAX: "1000000" },
  });
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  const setup = await setUpEndUser(sys, BODY);
  const endUser = new EndUserThread(setup);
  try {
    await endUser.send<"started">({ cmd: "start" });
    await untilOnline(sys, setup.endUserId);
    await endUser.send<"throughput">({ cmd: "throughput", total: 100, concurrency: 8 });
    const p2 = await profiled(session, join(dir, "p2.cpuprofile"), () =>
      endUser.send<"throughput">({ cmd: "throughput", total: P2_REQUESTS, concurrency: 8 }),
    );
    await endUser.send<"throughput">({ cmd: "throughput", total: 100, concurrency: 8, kind: "typed" });
    const p2Typed = await profiled(session, join(dir, "p2-typed.cpuprofile"), () =>
      endUser.send<"throughput">({ cmd: "throughput", total: P2_REQUESTS, concurrency: 8, kind: "typed" }),
    );
    const res = await sys.call("POST", `/v1/end-users/${setup.endUserId}/passthrough/ledger_desktop`, {
      body: BODY,
    });
    await res.text();
    const requestId = res.headers.get("svc-request-id") ?? "";
    // The hello-world runs on this thread too: the P3 profile starts after it (measureApiRate runs it first).
    let started = false;
    const p3 = await measureApiRate(sys.url, sys.project.keys.secretLive, requestId, async () => {
      started = true;
      await session.post("Profiler.start");
    });
    if (started) {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(join(dir, "p3.cpuprofile"), JSON.stringify(profile));
    }
    console.log(
      `${sys.deps.store.engine}: P2 ${p2.perSecond.toFixed(0)}/s, typed ${p2Typed.perSecond.toFixed(0)}/s; P3 ${p3.retrieve.perSecond.toFixed(0)}/s ÷ ${p3.helloWorld.perSecond.toFixed(0)}/s = ${(p3.retrieve.perSecond / p3.helloWorld.perSecond).toFixed(2)}; profiles in ${dir}`,
    );
  } finally {
    session.disconnect();
    await endUser.close();
    await sys.close();
    await store.close();
    await target.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
