import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * The service's Prometheus metrics (issue 8 §3), one registry per service instance (never the
 * library's global one, so that several services in one test process do not share counters).
 *
 * Counters and histograms are fed where things happen (the request engine, the connector endpoint,
 * the sweep); gauges that describe stored state (queue depth per status, open connector sessions)
 * are sampled from the store when scraped, through {@link StateSampler}, so they hold across
 * instances and restarts. Label values are bounded sets (statuses, error codes, SOAP methods):
 * never IDs.
 */
export interface StateSample {
  /** Unfinished requests by status (queued, waiting_for_connection, sent, outcome_unknown). */
  requestsByStatus: Record<string, number>;
  /** Open connector sessions, all instances. */
  sessionsOpen: number;
  /** Open connector sessions held by this instance. */
  sessionsOpenHere: number;
  /** Connections by stored status. */
  connectionsByStatus: Record<string, number>;
}

export type StateSampler = () => Promise<StateSample>;

/** Hand-over buckets in seconds: the goal is 5 ms p50 / 20 ms p99; waits for a check-in take minutes. */
const HANDOVER_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600];

export class Metrics {
  readonly registry = new Registry();
  private sampler: StateSampler | null = null;
  private pending: Promise<StateSample> | null = null;

  /** Requests by status at scrape time (from the store). */
  readonly requestsByStatus = new Gauge({
    name: "ledger_bridge_requests",
    help: "Unfinished requests by status (queue depth per state), from the store at scrape time",
    labelNames: ["status"] as const,
    registers: [this.registry],
    collect: async () => {
      const state = await this.state();
      this.requestsByStatus.reset();
      for (const [status, n] of Object.entries(state?.requestsByStatus ?? {}))
        this.requestsByStatus.set({ status }, n);
    },
  });

  readonly connectorSessionsOpen = new Gauge({
    name: "ledger_bridge_connector_sessions_open",
    help: "Open connector sessions; scope=all (every instance) or here (held by this instance)",
    labelNames: ["scope"] as const,
    registers: [this.registry],
    collect: async () => {
      const state = await this.state();
      this.connectorSessionsOpen.set({ scope: "all" }, state?.sessionsOpen ?? 0);
      this.connectorSessionsOpen.set({ scope: "here" }, state?.sessionsOpenHere ?? 0);
    },
  });

  readonly connectionsByStatus = new Gauge({
    name: "ledger_bridge_connections",
    help: "Connections by stored status",
    labelNames: ["status"] as const,
    registers: [this.registry],
    collect: async () => {
      const state = await this.state();
      this.connectionsByStatus.reset();
      for (const [status, n] of Object.entries(state?.connectionsByStatus ?? {}))
        this.connectionsByStatus.set({ status }, n);
    },
  });

  /** Request creation → handed to the connector (the Request's time in the queue, injected clock). */
  readonly handOverSeconds = new Histogram({
    name: "ledger_bridge_request_handover_seconds",
    help: "Time from a request's creation to its hand-over to the connector",
    buckets: HANDOVER_BUCKETS,
    registers: [this.registry],
  });

  /** Requests reaching a settled status, by status and error code (`none` on success). */
  readonly requestOutcomes = new Counter({
    name: "ledger_bridge_request_outcomes_total",
    help: "Requests that settled, by status, outcome and error code",
    labelNames: ["status", "outcome", "code"] as const,
    registers: [this.registry],
  });

  /** Connector check-ins (`authenticate`), by what the service answered. */
  readonly connectorCheckIns = new Counter({
    name: "ledger_bridge_connector_check_ins_total",
    help: "Connector check-ins (authenticate) by result: session, none, nvu",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });

  /** Connector SOAP calls by method. */
  readonly connectorCalls = new Counter({
    name: "ledger_bridge_connector_calls_total",
    help: "Connector SOAP calls by method",
    labelNames: ["method"] as const,
    registers: [this.registry],
  });

  /** Requests per message set handed to a connector (decision 0036: several when several are queued). */
  readonly messageSetRequests = new Histogram({
    name: "ledger_bridge_message_set_requests",
    help: "Requests per message set handed to a connector",
    buckets: [1, 2, 3, 5, 8, 10, 20, 50],
    registers: [this.registry],
  });

  /**
   * Failed attempts per client address (decision 0031), by reason: `login_refused`,
   * `unknown_ticket`, `not_a_call`, `too_large`, `body_timeout`, `setup_link`, and `throttled` for
   * calls turned away unread because their address failed too often.
   */
  readonly failedAttempts = new Counter({
    name: "ledger_bridge_failed_attempts_total",
    help: "Failed attempts per client address by reason, and calls throttled for them",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  /**
   * Connector calls answered from memory (decision 0023): the re-asks of sessions with nothing to
   * do (`sendRequestXML` held with no store call, `getLastError` answering NoOp).
   */
  readonly connectorQuietCalls = new Counter({
    name: "ledger_bridge_connector_quiet_calls_total",
    help: "Connector calls of sessions with nothing to do, answered without the store",
    registers: [this.registry],
  });

  readonly sweepRuns = new Counter({
    name: "ledger_bridge_sweep_runs_total",
    help: "Background sweeps by result (ok, error)",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });

  /** Rows the sweep acted on, by action (expired_requests, idempotency_keys_deleted, ...). */
  readonly sweepRows = new Counter({
    name: "ledger_bridge_sweep_rows_total",
    help: "Rows the background sweep acted on, by action",
    labelNames: ["action"] as const,
    registers: [this.registry],
  });

  readonly sweepSeconds = new Histogram({
    name: "ledger_bridge_sweep_duration_seconds",
    help: "Duration of one background sweep",
    buckets: [0.005, 0.025, 0.1, 0.5, 2, 10, 60],
    registers: [this.registry],
  });

  /** Instances whose lease expired and whose sessions this instance recovered. */
  readonly instancesRecovered = new Counter({
    name: "ledger_bridge_instances_recovered_total",
    help: "Dead service instances whose connector sessions this instance recovered",
    registers: [this.registry],
  });

  /** With `defaults`, process metrics too (memory, CPU, event loop lag). */
  constructor(options: { defaults?: boolean } = {}) {
    if (options.defaults) collectDefaultMetrics({ register: this.registry, prefix: "ledger_bridge_" });
  }

  /** Where stored state is sampled from (set once the store is open). */
  sampleStateWith(sampler: StateSampler): void {
    this.sampler = sampler;
  }

  /** The exposition text. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * One store sample per scrape: the gauges are collected in parallel and share the sample taken
   * by the first of them.
   */
  private state(): Promise<StateSample | null> {
    if (!this.sampler) return Promise.resolve(null);
    if (!this.pending) {
      this.pending = this.sampler().finally(() => {
        this.pending = null;
      });
    }
    return this.pending;
  }
}
