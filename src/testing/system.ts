import { ActivityStamps } from "../store/activity-stamps.ts";
import { sealingFor } from "../platform/sealing.ts";
import { createServer } from "node:net";
import type { TestContext } from "node:test";
import type { FastifyInstance } from "fastify";
import { pino, type Logger } from "pino";
import { buildApp } from "../app.ts";
import { loadConfig } from "../config.ts";
import type { Deps } from "../deps.ts";
import { FakeClock, type Clock } from "../platform/clock.ts";
import type { LatencyProfile } from "../platform/latency-profile.ts";
import { newInstanceId } from "../platform/ids.ts";
import { Metrics } from "../platform/metrics.ts";
import type { Tracing } from "../platform/tracing.ts";
import { sampleStoredState } from "../store/state-sample.ts";
import { startInstance, type ServiceInstance } from "../requests/instances.ts";
import { startSweeper } from "../requests/sweeper.ts";
import { SimulationHost } from "../simulation/host.ts";
import { startDispatcher, type Dispatcher, type DispatcherOptions } from "../webhooks/dispatcher.ts";
import { startChangeFeed, type ChangeFeedPoller } from "../change-feed/poller.ts";
import { startMirrorEngine, type MirrorEngine } from "../mirror/engine.ts";
import type { DemoCompanySize } from "../simulator/ledger/index.ts";
import {
  SimulatedLedgerApplication,
  type SimulatedCountry,
  type SimulatedXmlVersion,
} from "../simulator/ledger/index.ts";
import type { LedgerClock } from "../simulator/ledger/company-file.ts";
import { simulatedLatency, type SimulatedLatency } from "../simulator/latency.ts";
import { SimulatedWebConnector } from "../simulator/web-connector.ts";
import type { SimulatedApplication } from "../simulator/application.ts";
import { createProject, type CreatedProject } from "../tenancy/api-keys.ts";
import { loadSetup, qwcForSetup } from "../tenancy/auth-sessions.ts";
import { findConnectionById } from "../store/connections.ts";
import type { StatementGate, Store } from "../store/database.ts";
import { openTestStore, TEST_SECRETS_KEY } from "./harness.ts";

/**
 * The whole system on loopback: the service (HTTP + connector endpoint) and a simulated end user
 * (Web Connector + company file) configured from the real `.qwc` and password of an auth session,
 * exactly as an end user would. No shortcut around the protocol.
 */
export interface SystemOptions {
  /** Service clock; a FakeClock by default (time rules are driven by tests). */
  clock?: Clock;
  /** The clock of transport deadlines (a body's receive timeout); real time when absent. */
  transportClock?: Clock;
  config?: Record<string, string>;
  /** Pause after NoOp in the simulated connector (real time). */
  noOpPauseMs?: number;
  /** Existing store (restart tests, the bench's on-disk store). */
  store?: Store;
  /** The service's logger; silent by default (the bench logs as `npm start` does). */
  logger?: Logger;
  /** Simulator mode: setup pages and the admin operations can attach simulated connectors. */
  simulator?: boolean;
  /**
   * Runs the webhook dispatcher, as main.ts does (with these seams: name resolution, transport,
   * jitter). Off unless asked for: its timers on the fake clock are not part of other tests.
   */
  webhooks?: boolean;
  dispatcher?: DispatcherOptions;
  /** Runs the change feed poller, as main.ts does (off unless asked for, like the dispatcher). */
  changeFeed?: boolean;
  /** Runs the mirror engine, as main.ts does (off unless asked for, like the change feed). */
  mirror?: boolean;
  /** Called before every statement (`StoreOptions.gate`): tests make the store fail with it. */
  gate?: StatementGate;
  /** The activity stamps (a test that counts statements writes them by hand: a long `flushMs`). */
  activity?: ActivityStamps;
  /**
   * How slow the simulated end users of `connectEndUser` are (their connector's network and their
   * application): `profile` (none by default), spent on `clock`, else the system's clock. The
   * service's own simulated end users (`simulator`) follow `SIMULATOR_LATENCY` in `config`, on the
   * same clock.
   */
  latency?: { profile?: LatencyProfile; clock?: Clock };
  /** OpenTelemetry traces (tests: `exportingTo` an in-memory exporter, platform/tracing-sdk.ts); off when absent. */
  tracing?: Tracing;
}

export interface System {
  app: FastifyInstance;
  deps: Deps;
  url: string;
  clock: Clock;
  fakeClock: FakeClock | null;
  project: CreatedProject;
  ledger: SimulatedLedgerApplication;
  /** This system as a service instance with a lease (stop it without release to play a crash). */
  instance: ServiceInstance;
  /** The service's simulated end users (simulator mode only). */
  simulation: SimulationHost | null;
  /** The webhook dispatcher, as in main.ts (`webhooks` or `dispatcher` options only). */
  dispatcher: Dispatcher | null;
  /** The change feed poller (`changeFeed` option only). */
  changeFeed: ChangeFeedPoller | null;
  /** The mirror engine (`mirror` option only). */
  mirror: MirrorEngine | null;
  close(): Promise<void>;
  /** Creates an end user and connects a simulated Web Connector to it through an auth session. */
  connectEndUser(options?: ConnectOptions): Promise<ConnectedEndUser>;
  /** `fetch` against the service with a key. */
  call(method: string, path: string, options?: CallInit): Promise<Response>;
}

export interface ConnectOptions {
  test?: boolean;
  companyName?: string;
  /**
   * The end user's own simulated application (another machine): the message version it speaks and
   * its regional edition. Without it, the end user's company file lives in the system's shared
   * `ledger` (16.0, US). `clock` is the application's own (the computer's wall time by default):
   * a test that needs records modified at chosen times passes the system's fake clock.
   */
  application?: { xmlVersion?: SimulatedXmlVersion; country?: SimulatedCountry; clock?: LedgerClock };
  /** The company file computer's UTC offset (`+05:30`); the simulator's default otherwise. */
  utcOffset?: string;
  /** What the new company file holds: `sample` (a few records many tests count on; the default) or the `demo` company. */
  seed?: "sample" | "demo" | "empty";
  /** Size of the `demo` company (`small` by default). */
  demoSize?: DemoCompanySize;
  /**
   * What the connector drives instead of the application itself (a support bundle's replay wraps
   * it, simulator/replay.ts); the company file is made in the application either way.
   */
  connectorApplication?: (application: SimulatedLedgerApplication) => SimulatedApplication;
}

export interface CallInit {
  key?: string;
  endUserId?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ConnectedEndUser {
  endUserId: string;
  /** The secret key of the end user's mode (only keys of that mode see it). */
  key: string;
  connectionId: string;
  connector: SimulatedWebConnector;
  /** The application behind the connector: the system's shared one, or the end user's own. */
  ledger: SimulatedLedgerApplication;
  companyFilePath: string;
  /** What the end user was given: the `.qwc` file and the password. */
  connectorQwc: string;
  password: string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startSystem(t: TestContext | null, options: SystemOptions = {}): Promise<System> {
  const fakeClock = options.clock ? null : new FakeClock(Date.now());
  const clock = options.clock ?? (fakeClock as FakeClock);
  const opened = options.store
    ? { store: options.store, drop: async () => {} }
    : await openTestStore({
        ...(options.gate ? { gate: options.gate } : {}),
        ...(options.config?.STORE_STATEMENT_TIMEOUT_MS
          ? { statementTimeoutMs: Number(options.config.STORE_STATEMENT_TIMEOUT_MS) }
          : {}),
      });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    LOG_LEVEL: "silent",
    PUBLIC_URL: url,
    PORT: String(port),
    SECRETS_KEY: TEST_SECRETS_KEY,
    // A fake clock stands still unless a test moves it, so a write spaced from the previous one
    // would wait forever; the tests of that rule (write-spacing) set it back to the default.
    ...(options.clock ? {} : { RECORD_WRITE_SPACING_MS: "0" }),
    ...options.config,
  });
  const deps: Deps = {
    config,
    store: opened.store,
    db: opened.store.db,
    clock,
    logger: options.logger ?? pino({ level: "silent" }),
    instanceId: newInstanceId(),
    activity: options.activity ?? new ActivityStamps(),
    sealing: sealingFor(config),
    metrics: new Metrics(),
    transportClock: options.transportClock,
    tracing: options.tracing,
  };
  deps.metrics.sampleStateWith(() => sampleStoredState(opened.store.db, deps.instanceId));
  const latency: SimulatedLatency = simulatedLatency(
    options.latency?.profile,
    options.latency?.clock ?? clock,
  );
  const simulation = options.simulator
    ? new SimulationHost(deps, { noOpPauseMs: options.noOpPauseMs ?? 20, latencyClock: latency.clock })
    : null;
  deps.simulatedConnectors = simulation ?? undefined;
  // As in main.ts: registered with a lease before it listens; the lease is renewed on the service clock.
  const instance = await startInstance(deps);
  const app = await buildApp(deps);
  await app.listen({ port, host: "127.0.0.1" });
  const project = await createProject(deps, { name: "System test" });
  const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0", latency });
  const connectors: SimulatedWebConnector[] = [];

  const call = async (method: string, path: string, init: CallInit = {}): Promise<Response> => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${init.key ?? project.keys.secretLive}`,
      ...init.headers,
    };
    if (init.endUserId) headers["svc-end-user-id"] = init.endUserId;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
      headers["content-type"] ??= typeof init.body === "string" ? "application/xml" : "application/json";
    }
    return fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  };

  let fileCount = 0;
  const connectEndUser = async (o: ConnectOptions = {}): Promise<ConnectedEndUser> => {
    const key = o.test ? project.keys.secretTest : project.keys.secretLive;
    fileCount++;
    const created = await call("POST", "/v1/end-users", {
      key,
      body: { companyName: o.companyName ?? `Company ${fileCount}`, sourceId: `src-${fileCount}` },
    });
    const endUser = (await created.json()) as { id: string };
    const sessionResponse = await call("POST", "/v1/auth-sessions", {
      key,
      body: {
        publishableKey: o.test ? project.keys.publishableTest : project.keys.publishableLive,
        endUserId: endUser.id,
      },
    });
    const session = (await sessionResponse.json()) as { id: string; clientSecret: string };
    const setup = await loadSetup(deps, session.id, session.clientSecret);
    if (setup.state !== "waiting") throw new Error(`setup state ${setup.state}`);
    const connection = await findConnectionById(deps.db, setup.connection.id);
    if (!connection) throw new Error("no connection");
    const companyFilePath = `C:\\Company Files\\${o.companyName ?? `Company ${fileCount}`}.qbw`;
    const application = o.application
      ? new SimulatedLedgerApplication({ xmlVersion: "16.0", ...o.application, latency })
      : ledger;
    application.createCompanyFile(companyFilePath, {
      companyName: o.companyName ?? `Company ${fileCount}`,
      seed: o.seed ?? "sample",
      ...(o.utcOffset === undefined ? {} : { utcOffset: o.utcOffset }),
      ...(o.demoSize === undefined ? {} : { demoSize: o.demoSize }),
    });
    application.openCompanyFile(companyFilePath);
    const connectorQwc = qwcForSetup(deps, connection, o.companyName ?? "Company");
    const connector = new SimulatedWebConnector({
      qwc: connectorQwc,
      password: setup.password,
      application: o.connectorApplication ? o.connectorApplication(application) : application,
      noOpPauseMs: options.noOpPauseMs ?? 20,
      latency,
    });
    connectors.push(connector);
    return {
      endUserId: endUser.id,
      key,
      connectionId: connection.id,
      connector,
      ledger: application,
      companyFilePath,
      connectorQwc,
      password: setup.password,
    };
  };

  // As in main.ts: the background sweep runs on the service clock (a FakeClock: only when advanced).
  const sweeper = startSweeper(deps);
  const dispatcher =
    options.webhooks || options.dispatcher ? startDispatcher(deps, options.dispatcher) : null;
  const changeFeed = options.changeFeed ? startChangeFeed(deps) : null;
  const mirror = options.mirror ? startMirrorEngine(deps) : null;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.all(connectors.map((c) => c.stop()));
    await simulation?.stop();
    await sweeper.stop();
    await changeFeed?.stop();
    await mirror?.stop();
    await dispatcher?.stop();
    await instance.stop({ release: true });
    // The test is over: connections still busy (a held connector call the client gave up on) are
    // cut, or the server would wait for Fastify's 72 s keep-alive timeout before closing.
    const closing = app.close();
    app.server.closeAllConnections();
    await closing;
    if (!options.store) {
      await opened.store.close();
      await opened.drop();
    }
  };
  t?.after(close);
  return {
    app,
    deps,
    url,
    clock,
    fakeClock,
    project,
    ledger,
    instance,
    simulation,
    dispatcher,
    changeFeed,
    mirror,
    close,
    connectEndUser,
    call,
  };
}
