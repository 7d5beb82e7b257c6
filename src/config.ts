import { z } from "zod";
import { parseLatencyProfile } from "./platform/latency-profile.ts";
import { parseSecretsKey } from "./platform/sealing.ts";
import { DEFAULT_RETRY_SCHEDULE_MS, parseSchedule } from "./webhooks/schedule.ts";

/**
 * Configuration, parsed once from the environment into a frozen, typed object. Every time rule has
 * its unit in the name and cites where it comes from.
 *
 * This schema is the single source of the README's configuration table: `npm run gen:config-table`
 * writes each variable's TSDoc below (a `@defaultValue` tag names a default computed at start), its
 * default and its allowed values into the README, and `test/contract/config-table.test.ts` fails
 * when the two differ. Write each comment for the operator who reads that table.
 */
export const configSchema = z.object({
  /** TCP port of the HTTP listener: the API, the hosted setup pages and the connector endpoint `/connector`. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Address the HTTP listener binds; loopback by default (the container image sets `0.0.0.0`). */
  HOST: z.string().default("127.0.0.1"),
  /**
   * Public base URL of the service, used in `authFlowUrl`, `Location`, docs links and the `.qwc` file.
   * @defaultValue `http://localhost:$PORT`
   */
  PUBLIC_URL: z.string().url().optional(),
  /**
   * The SOAP endpoint written into `.qwc` files (the Web Connector requires HTTPS unless it is localhost).
   * @defaultValue `$PUBLIC_URL/connector`
   */
  CONNECTOR_URL: z.string().url().optional(),
  /** PostgreSQL connection string; without it the embedded PGlite store in `DATA_DIR` is used. */
  DATABASE_URL: z.string().optional(),
  /**
   * Directory of the embedded store, its lock and the admin socket (`admin.sock`, also used with
   * PostgreSQL), the demo keys (`demo.json`); a volume in the container image (`/data`).
   */
  DATA_DIR: z.string().default("./data"),
  /**
   * PostgreSQL: how long a statement waits for a pooled connection (the pool exhausted, the server
   * unreachable) before the call answers 503 SERVICE_UNAVAILABLE (decision 0019).
   */
  STORE_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * PostgreSQL: the server's `statement_timeout` for the service's statements (0: none); a statement
   * that runs longer is cancelled and its call answers 503 SERVICE_UNAVAILABLE (decision 0019).
   * Migrations run without it.
   */
  STORE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * Embedded store (no `DATABASE_URL`): its shared buffer pool in MB, resident for as long as the
   * service runs. Raise it when the store in `DATA_DIR` grows well past it and reads slow down
   * (decision 0024).
   */
  STORE_EMBEDDED_SHARED_BUFFERS_MB: z.coerce.number().int().min(1).max(1024).default(16),
  /**
   * `production` (the container image sets it) changes one default of the service's: `SIMULATOR` is
   * `off` unless set.
   */
  NODE_ENV: z.string().optional(),
  /**
   * Runs the simulated end users (Web Connector + company file) inside the service: the demo end user
   * and its demo company (its keys in `DATA_DIR/demo.json`; printed at start only to a terminal), and
   * the "Use a simulated company file" button. `off` for real deployments.
   * @defaultValue `on`; `off` when `NODE_ENV=production` (the container image)
   */
  SIMULATOR: z.enum(["on", "off"]).optional(),
  /**
   * How slow the simulated end users of `SIMULATOR=on` are (decision 0034): `zero` (no delay),
   * `realistic` (`soap:80,messageSet:150,request:30,record:2`: a warm session on an office PC over the
   * internet, estimated), or milliseconds per key — `soap` (each connector call's network round
   * trip), `messageSet` (the application's overhead per message set), `request` (per request in it,
   * run in order), `record` (per record it returns) — for example `soap:40,request:10`; a key left out
   * is 0. For trying what users of a real connector feel; tests and the demo run with `zero`.
   */
  SIMULATOR_LATENCY: z
    .string()
    .default("zero")
    .transform((text, ctx) => {
      try {
        return parseLatencyProfile(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /**
   * How big the demo company is that a new simulated end user of `SIMULATOR=on` starts with (the
   * demo's, the setup page's simulated company file): `small` (a contractor's year: about 40
   * customers and jobs, 150 invoices, every kind of list and transaction; ready in about a second)
   * or `large` (the same business with 10,000 invoices and everything in proportion: for benches,
   * generated in 10–20 s at the first start; a 70 MB file, saved whole after each write, so every
   * write costs about a second more; reads do not). Files already made are kept as they are
   * (decision 0042).
   */
  SIMULATOR_COMPANY_SIZE: z.enum(["small", "large"]).default("small"),
  /** Requests per project per rate-limit window (all keys together). */
  RATE_LIMIT_MAX: z.coerce.number().int().positive().default(1000),
  /** Rate-limit window length in milliseconds. */
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().positive().default(60_000),
  /** Cap on test company files (test connections) per organisation (spec: Limits, "Test company files"). */
  TEST_COMPANY_FILE_LIMIT: z.coerce.number().int().min(0).default(10),
  /**
   * How long a connector's `sendRequestXML` is held open waiting for work (architecture §2,
   * decision 0023). Under the Web Connector's own call timeout (reported near 2 minutes; hence
   * the cap) and under the 60 s after which common reverse proxies and load balancers in front of
   * the service drop a response that has not started. Raise it toward 100 s when the proxy allows:
   * an idle session then re-asks less often. Keep it well inside `CONNECTION_OFFLINE_AFTER_MS`.
   */
  CONNECTOR_HOLD_MS: z.coerce.number().int().positive().max(110_000).default(55_000),
  /** A connector session with no work for this long is closed (architecture §2). */
  CONNECTOR_IDLE_CLOSE_MS: z.coerce.number().int().positive().default(300_000),
  /** A connector session ticket expires this long after its last use. */
  CONNECTOR_TICKET_TTL_MS: z.coerce.number().int().positive().default(1_800_000),
  /**
   * Most Requests of one connection handed to its connector in one message set (decision 0036):
   * when several are queued, the application runs them in order in one round trip instead of one
   * round trip each (each keeps its own answer, error and at-most-once recovery). 1 hands them one
   * at a time. A passthrough, a batch, a report and the change feed's queries always go alone.
   */
  CONNECTOR_MESSAGE_SET_MAX_REQUESTS: z.coerce.number().int().min(1).max(50).default(10),
  /** Most bytes of request messages in one message set of several Requests (one Request alone may be larger). */
  CONNECTOR_MESSAGE_SET_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(4096)
    .default(1024 * 1024),
  /**
   * Largest SOAP request the connector endpoint reads, in bytes. Its own limit, above the API's
   * 20 MiB: a `receiveResponseXML` carries a whole answer of the application (large query pages).
   * A bigger body is answered with a SOAP Fault.
   */
  CONNECTOR_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /**
   * Bytes of a connector call read before it has shown the ticket of a live session (decision
   * 0031): `authenticate`, a call with an unknown ticket and anything that is not a call stop
   * here. Only a session's own calls (a large `receiveResponseXML`) grow past it, up to
   * `CONNECTOR_BODY_LIMIT_BYTES`. The connector's login and its company file report are far smaller.
   */
  CONNECTOR_UNAUTHENTICATED_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(4096)
    .default(64 * 1024),
  /**
   * How long a call's body may take to arrive, from the end of its headers (decision 0031). A body
   * still arriving then is answered with an error and its connection closed. Covers the API, the
   * setup pages and a connector call until it shows a live session's ticket.
   */
  BODY_RECEIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * How long the body of a live connector session's call may take to arrive (an answer of tens of
   * MB from an office's uplink): ten minutes carry 64 MiB at about 1 Mbit/s.
   */
  CONNECTOR_BODY_RECEIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(600_000),
  /**
   * Open TCP connections the HTTP listener accepts at once; further ones are closed as they arrive.
   * Each connected Web Connector holds one while its session is open; a caller waiting for a sync
   * call holds one.
   */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().positive().default(10_000),
  /**
   * Failed attempts one client address may make per `FAILED_ATTEMPTS_WINDOW_MS` before its calls are
   * turned away unread until the window ends (decision 0031): connector logins refused (`nvu`),
   * calls with an unknown ticket, bodies that are not connector calls, and setup links whose ID or
   * client secret is wrong. Counted per instance.
   */
  FAILED_ATTEMPTS_PER_ADDRESS: z.coerce.number().int().positive().default(10),
  /** The window of `FAILED_ATTEMPTS_PER_ADDRESS`, from an address's first failure in it. */
  FAILED_ATTEMPTS_WINDOW_MS: z.coerce.number().int().positive().default(60_000),
  /**
   * Whether the client address comes from `X-Forwarded-For` (a reverse proxy in front): `off`, `on`
   * (trust every hop), or the proxies' addresses and CIDR ranges, comma-separated (for example
   * `10.0.0.0/8,127.0.0.1`). Per-address limits count the proxy itself when this is off.
   */
  TRUST_PROXY: z
    .string()
    .default("off")
    .transform((text): boolean | string => {
      const value = text.trim();
      if (value === "off" || value === "") return false;
      return value === "on" ? true : value;
    }),
  /**
   * Largest answer of the application a read is served from, in bytes (decision 0019). A read whose
   * answer is larger fails with 422 LEDGER_RESPONSE_TOO_LARGE ("narrow the filters or lower
   * `limit`"); an answer to a document holding a write is always read whole, so its outcome is
   * known. Keep it well under CONNECTOR_BODY_LIMIT_BYTES (the SOAP body escapes the answer).
   */
  LEDGER_RESPONSE_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  /** Check-in interval written into generated `.qwc` files. */
  CONNECTOR_CHECK_IN_SECONDS: z.coerce.number().int().positive().default(60),
  /** A connection not seen for this long is `offline` and sync calls fail fast. */
  CONNECTION_OFFLINE_AFTER_MS: z.coerce.number().int().positive().default(180_000),
  /**
   * The service sends its consecutive writes to one record more than this long after the previous
   * one was answered (0: not spaced), because the application changes a record's revision number at
   * most once a second (spec: common record fields). Keep the default; only tests whose clock is
   * frozen lower it.
   */
  RECORD_WRITE_SPACING_MS: z.coerce.number().int().min(0).default(1000),
  /**
   * How long an instance may keep a secret key it has looked up (0: every call reads the store).
   * A revocation through the service (`ledger-bridge keys revoke`) reaches every instance's cache at
   * once (a wake-up); this is the bound when that wake-up is missed, e.g. a revocation made behind
   * the service's back (decision 0013).
   */
  API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  /** Maximum requests waiting per connection before `CONNECTION_QUEUE_FULL`. */
  CONNECTION_QUEUE_CAPACITY: z.coerce.number().int().positive().default(1000),
  /**
   * Period of the background sweep (requests/sweeper.ts): expires queued requests whose queue TTL
   * passed (`canceled`, spec: States, `REQUEST_EXPIRED`), moves silent connections `offline`, and
   * deletes idempotency keys past their 7-day retention, finished Requests and closed connector
   * sessions past theirs.
   */
  SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  /**
   * Retention of a finished Request (succeeded, failed, canceled) after `completedAt`; then the sweep
   * deletes it. At least the idempotency keys' 7 days, so a key never outlives the Request it replays.
   * Requests still waiting, sent or `outcome_unknown` are never deleted.
   */
  REQUEST_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(7 * 24 * 3600 * 1000)
    .default(30 * 24 * 3600 * 1000),
  /**
   * Retention of a connection's status history (the console's history and 7-day availability strip,
   * decision 0028); then the sweep deletes the older changes. At least 8 days, so the strip is whole.
   */
  CONNECTION_HISTORY_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(8 * 24 * 3600 * 1000)
    .default(30 * 24 * 3600 * 1000),
  /**
   * The application's answer to a Request is kept (redacted when shown, `GET /v1/requests/{id}/messages`)
   * up to this many bytes; a larger answer keeps only its size. 0 keeps no answer. Deleted with its Request.
   */
  REQUEST_ANSWER_KEEP_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(32 * 1024 * 1024)
    .default(1024 * 1024),
  /**
   * Largest support bundle (`GET /v1/end-users/{id}/support-bundle`, `ledger-bridge support-bundle`),
   * in bytes of JSON: past it the oldest Requests of the window are left out, and the bundle says so.
   */
  SUPPORT_BUNDLE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(16 * 1024)
    .max(256 * 1024 * 1024)
    .default(20 * 1024 * 1024),
  /** Retention of a closed connector session after it closed; then the sweep deletes it. */
  CONNECTOR_SESSION_RETENTION_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(7 * 24 * 3600 * 1000),
  /**
   * How long a connector session may go without the application's answer (the company file report
   * after `authenticate`, or the answer to a handed-over request) before the application counts as
   * not responding (`waitingReason` `ledger_not_responding`, diagnosis `silentSessions`); also when a
   * sent request "runs long" and carries a diagnosis.
   */
  LEDGER_ANSWER_WAIT_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * How long the application may owe an answer (a request handed over and not answered, or an open
   * session whose company file report never came) before it counts as not responding: sync calls
   * are then refused at admission with 503 LEDGER_NOT_RESPONDING, nothing queued (decision 0019).
   * Two minutes, the spec's cap on a query session's continuous work.
   */
  LEDGER_NOT_RESPONDING_MS: z.coerce.number().int().positive().default(120_000),
  /**
   * Lease of a service instance (requests/instances.ts): renewed every third of it; the connector
   * sessions of an instance whose lease ran out are recovered by the others (PostgreSQL mode).
   * Longer than any stall.
   */
  INSTANCE_LEASE_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * Port of the Prometheus scrape endpoint `GET /metrics` (platform/metrics-server.ts), a listener
   * of its own apart from the API's; unset: no metrics listener.
   */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Address the metrics listener binds; loopback by default. */
  METRICS_HOST: z.string().default("127.0.0.1"),
  /**
   * Webhook endpoints per project, both modes together, before `WEBHOOK_ENDPOINT_LIMIT_REACHED`
   * (spec: Limits leaves the cap open).
   */
  WEBHOOK_ENDPOINT_LIMIT: z.coerce.number().int().min(0).default(16),
  /**
   * `on` lets endpoints point at loopback receivers (`http://localhost:<port>`, 127.0.0.1, [::1]) and
   * lets deliveries reach loopback addresses. For tests and local development only; every other
   * non-public destination stays blocked.
   */
  WEBHOOK_ALLOW_LOOPBACK: z.enum(["on", "off"]).default("off"),
  /** How long one webhook delivery attempt may take, connection to last byte. */
  WEBHOOK_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  /**
   * Delays before webhook delivery attempts 1, 2, … (comma-separated milliseconds, 1 to 8 entries;
   * spec: Events). The default is the published schedule (webhooks/schedule.ts); tests shorten it.
   */
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .default(DEFAULT_RETRY_SCHEDULE_MS.join(","))
    .transform((text, ctx) => {
      try {
        return parseSchedule(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Webhook delivery attempts in flight at once per instance. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().default(64),
  /** How often the change feed poller looks for due polls (change-feed/poller.ts). */
  CHANGE_FEED_TICK_MS: z.coerce.number().int().positive().default(15_000),
  /**
   * How often a ready mirror asks the application what changed (mirror/, issue 26): while the
   * connection is online, a mirrored answer lags the company file by at most this, plus the
   * engine's tick (`MIRROR_TICK_MS`) and the poll's own round trip.
   */
  MIRROR_POLL_INTERVAL_SECONDS: z.coerce.number().int().min(5).max(86_400).default(60),
  /**
   * Records a mirror's fill asks for per page (1 to 150): a caller's Request waits behind at most
   * one page of a fill, so smaller pages keep callers faster on a slow connection.
   */
  MIRROR_FILL_PAGE_SIZE: z.coerce.number().int().min(1).max(150).default(150),
  /** How often the mirror engine looks for due work (a paused mirror's connection is looked at this often). */
  MIRROR_TICK_MS: z.coerce.number().int().positive().default(1_000),
  /**
   * How far each change feed poll reaches back before the previous poll's start: the application's
   * times have whole seconds and its clock is not the service's. What overlaps is deduplicated.
   */
  CHANGE_FEED_OVERLAP_SECONDS: z.coerce.number().int().min(0).default(300),
  /**
   * Key-encryption key for secrets at rest (decision 0032): 32 random bytes in base64 or hex; make
   * one with `openssl rand -base64 32` and keep it outside the store (a secret manager, the
   * container's environment). It seals webhook signing secrets, the card numbers of Requests
   * waiting to be sent, and idempotency replay copies of new credentials, and keys idempotency
   * fingerprints. Unset: the service starts and logs what it stores unprotected. Rotation: see
   * `SECRETS_KEY_PREVIOUS`.
   */
  SECRETS_KEY: z
    .string()
    .optional()
    .refine((text) => text === undefined || text.trim() === "" || parseSecretsKey(text) !== null, {
      message: "must be 32 random bytes in base64 or hex (openssl rand -base64 32)",
    }),
  /**
   * Older keys (comma-separated), still accepted to open what they sealed, never to seal: during a
   * rotation, move the old `SECRETS_KEY` here, set a new one, restart, run
   * `ledger-bridge secrets reseal`, and drop the old key once its report says nothing needs it.
   */
  SECRETS_KEY_PREVIOUS: z
    .string()
    .optional()
    .refine(
      (text) =>
        text === undefined ||
        text
          .split(",")
          .map((part) => part.trim())
          .filter((part) => part !== "")
          .every((part) => parseSecretsKey(part) !== null),
      { message: "must be comma-separated keys of 32 random bytes in base64 or hex" },
    ),
  /**
   * OpenTelemetry traces (decision 0048), as the OpenTelemetry specification names them: base URL
   * of an OTLP/HTTP collector (`http://collector:4318`); spans go to its `/v1/traces`. Setting it
   * turns traces on (one trace per Request: README, Traces). Unset, and with no
   * `OTEL_TRACES_EXPORTER=otlp`: no tracing SDK runs. Headers for the collector (an API key) are
   * read from `OTEL_EXPORTER_OTLP_HEADERS` by the exporter itself.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** The full URL spans are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; also turns traces on. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  /**
   * `otlp` turns traces on (to `http://localhost:4318/v1/traces` when no endpoint is set); `none`
   * keeps them off whatever endpoint is set. Unset: on exactly when an endpoint is set.
   */
  OTEL_TRACES_EXPORTER: z.enum(["otlp", "none"]).optional(),
  /** `true` turns traces off whatever else is set (the OpenTelemetry SDK's switch). */
  OTEL_SDK_DISABLED: z
    .enum(["true", "false"])
    .default("false")
    .transform((text) => text === "true"),
  /** The `service.name` of the spans. */
  OTEL_SERVICE_NAME: z.string().min(1).default("ledger-bridge"),
  /** Log level (pino); logs are JSON lines on standard output. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type Config = Readonly<
  Omit<z.infer<typeof configSchema>, "SIMULATOR"> & {
    /** `SIMULATOR` as it applies: set, or its default for `NODE_ENV`. */
    SIMULATOR: "on" | "off";
    publicUrl: string;
    connectorUrl: string;
  }
>;

/** Parses the environment. Throws a readable error on bad values. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  // A production start (the container image) creates no demo project unless asked (issue 23): the
  // demo's keys are live keys, and a deployment's logs are no place for them.
  const SIMULATOR = parsed.data.SIMULATOR ?? (parsed.data.NODE_ENV === "production" ? "off" : "on");
  const base = { ...parsed.data, SIMULATOR, ...overrides };
  if (!base.SECRETS_KEY?.trim() && base.SECRETS_KEY_PREVIOUS?.trim()) {
    throw new Error(
      "Invalid configuration:\n  SECRETS_KEY_PREVIOUS: keys only open what they sealed; set SECRETS_KEY to the key that seals from now on",
    );
  }
  const publicUrl = (overrides.publicUrl ?? base.PUBLIC_URL ?? `http://localhost:${base.PORT}`).replace(
    /\/$/,
    "",
  );
  const connectorUrl = overrides.connectorUrl ?? base.CONNECTOR_URL ?? `${publicUrl}/connector`;
  return Object.freeze({ ...base, publicUrl, connectorUrl });
}
