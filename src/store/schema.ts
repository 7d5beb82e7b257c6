import type { ColumnType, Generated, GeneratedAlways } from "kysely";

/**
 * Row types of every table. Only `store/` sees them; repositories map rows to domain objects.
 * Timestamps are `timestamptz` (Date in and out); JSON columns are `jsonb` written as JSON text.
 */
type Timestamp = ColumnType<Date, Date, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;
type Json<T> = ColumnType<T, string, string>;

export interface ProjectsTable {
  id: string;
  name: string;
  organization: string;
  created_at: Timestamp;
  /** Application Requests per calendar month (UTC) of the live mode; null: no quota (decision 0019). */
  monthly_request_quota: ColumnType<
    string | null,
    string | number | null | undefined,
    string | number | null
  >;
  /** Set by the operator: live application operations are refused with PAYMENT_FAILED. */
  payment_failed_at: NullableTimestamp;
  /** Set by the operator: every call of the project's keys is refused with PERMISSION_DENIED. */
  disabled_at: NullableTimestamp;
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Application Requests admitted per project, mode and calendar month (decision 0019). */
export interface ProjectUsageTable {
  project_id: string;
  is_test: boolean;
  /** `YYYY-MM`, UTC. */
  period: string;
  /** bigint, read as a string. */
  requests: ColumnType<string, string | number, string | number>;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  kind: "secret" | "publishable";
  mode: "live" | "test";
  read_only: boolean;
  hash: string;
  hint: string;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface EndUsersTable {
  id: string;
  project_id: string;
  /** The mode of the key that created it (decision 0005). */
  is_test: boolean;
  company_name: string;
  source_id: string;
  email: string | null;
  created_at: Timestamp;
}

export interface ConnectionsTable {
  id: string;
  project_id: string;
  end_user_id: string;
  organization: string;
  status: string;
  status_reason: string | null;
  is_test: boolean;
  username: string;
  password_hash: string;
  file_id: string;
  file_identity: string | null;
  company_file_path: string | null;
  company_name: string | null;
  product: string | null;
  xml_version: string | null;
  country: string | null;
  last_request_at: NullableTimestamp;
  last_successful_request_at: NullableTimestamp;
  last_check_in_at: NullableTimestamp;
  last_seen_at: NullableTimestamp;
  last_connection_error_code: string | null;
  retry_at: NullableTimestamp;
  /** How long the connector had been silent when it last checked in (its observed schedule). */
  check_in_gap_ms: number | null;
  /** The last check-ins, epoch ms, newest first (connections/check-in-estimate.ts). */
  recent_check_ins: ColumnType<number[], number[] | undefined, number[]>;
  /** When a replaced session's ticket was last used (a second computer with the same registration). */
  shared_connector_at: NullableTimestamp;
  /** The last check-in with this user name and a password no longer the connection's (migration 0035). */
  login_refused_at: NullableTimestamp;
  /** When a handed-over request last lost its answer to the end of its session (migration 0035). */
  session_interrupted_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AuthSessionsTable {
  id: string;
  project_id: string;
  end_user_id: string;
  connection_id: string;
  client_secret_hash: string;
  password_box: string;
  status: "pending" | "completed" | "canceled" | "superseded";
  is_test: boolean;
  redirect_url: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  completed_at: NullableTimestamp;
}

/** A change of a connection's stored status (migration 0021; the console's history and availability). */
export interface ConnectionStatusChangesTable {
  id: string;
  connection_id: string;
  previous_status: string;
  status: string;
  status_reason: string | null;
  changed_at: Timestamp;
}

/** The application's answer to a Request as it arrived (migration 0021; null XML when too large to keep). */
export interface RequestAnswersTable {
  request_id: string;
  answer_xml: string | null;
  answer_bytes: number;
  received_at: Timestamp;
}

export interface RequestsTable {
  id: string;
  seq: Generated<string>;
  project_id: string;
  /** Its end user's mode (decision 0005). */
  is_test: boolean;
  end_user_id: string;
  connection_id: string | null;
  operation_id: string;
  method: string;
  path: string;
  mode: "sync" | "async";
  status: string;
  outcome: string;
  is_write: boolean;
  /**
   * The request messages (children of `QBXMLMsgsRq`), rendered once at submission; the hand-over
   * wraps them in the document. Rows from before migration 0014 hold the whole document instead
   * (`request_on_error` null).
   */
  request_xml: string | null;
  /** The message set's `onError`; null for a row that holds a whole document (before 0014). */
  request_on_error: string | null;
  /**
   * The secret values `request_xml` holds masked (a JSON array, in document order), sealed with the
   * key-encryption key (platform/sealing.ts, decision 0032); only while the Request waits to be
   * sent: the hand-over's claim and every unsent end clear it (migration 0032).
   */
  request_secrets: ColumnType<string | null, string | null | undefined, string | null>;
  message_set_id: string | null;
  ticket_hash: string | null;
  sent_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  queue_ttl_expires_at: NullableTimestamp;
  idempotency_key_present: boolean;
  previous_request_id: string | null;
  waiting_reason: string | null;
  recovered: boolean;
  xml_version: string | null;
  status_code: number | null;
  status_severity: string | null;
  timeline: Json<TimelineEntryRow[]>;
  warnings: Json<unknown[]>;
  result: Json<unknown> | null;
  error: Json<unknown> | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** A sync caller stopped waiting before the request settled (its request events go to every endpoint). */
  caller_gone_at: NullableTimestamp;
  /** The service instance holding a sync caller's HTTP call (null for async requests). */
  caller_instance_id: string | null;
  /** Made by the service itself (the change feed poller): handed out after developers' requests. */
  background: ColumnType<boolean, boolean | undefined, boolean>;
  /** The diagnosis frozen when the request timed out or expired before sending (else null). */
  diagnosis: Json<unknown> | null;
  /** IDs of the existing records a write changes (its Mod, Del and Void messages); null otherwise. */
  write_targets: ColumnType<string[] | null, string | null | undefined, string | null>;
  /** The typed call's JSON input as validated (query, body; a batch's members); null otherwise (migration 0021). */
  input: ColumnType<unknown, string | null | undefined, string | null>;
  /**
   * Goes in a message set of its own (migration 0034): a passthrough or batch (its own message set),
   * or one sent again alone after the application refused its set as a whole.
   */
  alone: ColumnType<boolean, boolean | undefined, boolean>;
  /** Its place in the message set it was handed over in (migration 0034); null before the hand-over. */
  set_position: number | null;
  /** A batch's members, in order (ledger/batch.ts `BatchPlan`); null for every other Request. */
  batch: ColumnType<unknown, string | null | undefined, string | null>;
  /**
   * What a Request of several message sets keeps between them (migration 0037, decision 0046): its
   * operation's plan and the answers so far; null for a Request of one message set.
   */
  program: ColumnType<unknown, string | null | undefined, string | null>;
  /** How many of its message sets the application has answered (migration 0037). */
  step: ColumnType<number, number | undefined, number>;
}

export interface TimelineEntryRow {
  at: string;
  status: string;
  detail: string | null;
  elapsedMs: number;
}

export interface IdempotencyKeysTable {
  project_id: string;
  /** Keys are scoped per project and mode (decision 0005). */
  is_test: boolean;
  key: string;
  /** Keyed with the key-encryption key (`k1.<keyId>.<hex>`, decision 0032); bare SHA-256 hex without one. */
  fingerprint: string;
  /** The Request an application operation created under this key. */
  request_id: string | null;
  /**
   * Platform operations: the first response (it may hold a credential), sealed under the
   * key-encryption key and the Idempotency-Key together (decision 0032); rows from before, or
   * without `SECRETS_KEY`, are sealed with the Idempotency-Key alone.
   */
  response_box: string | null;
  response_status: number | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface ConnectorSessionsTable {
  ticket_hash: string;
  connection_id: string;
  /** Where the session is in the protocol (connector/session/phases.ts, migration 0033). */
  phase: "opened" | "ready" | "recovering" | "closing" | "closed";
  /** Derived by the database from `phase` (`open` unless `closed`): never written. */
  state: GeneratedAlways<"open" | "closed">;
  /** Text `getLastError` answers (null → `NoOp`). */
  last_error: string | null;
  /** The write-recovery query's message set ID while the session is `recovering`. */
  recovery_message_set_id: string | null;
  /** connectionError calls in this session (the company file could not be opened). */
  connection_errors: number;
  company_file_path: string | null;
  xml_version: string | null;
  created_at: Timestamp;
  last_activity_at: Timestamp;
  last_work_at: Timestamp;
  closed_at: NullableTimestamp;
  /** The instance that holds the session's HTTP calls (migration 0008); null before leases. */
  instance_id: string | null;
  /**
   * When the application first answered in this session (its company file report, accepted or
   * refused), migration 0013. Set for every session that reached `ready`.
   */
  ledger_answered_at: NullableTimestamp;
  /**
   * Whether the company file lets this application see personal data (its report's
   * `IsPersonalDataAccessAllowed`, migration 0035); null when not reported.
   */
  personal_data_allowed: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
}

/** A running (or dead) service process and its lease (requests/instances.ts). */
export interface ServiceInstancesTable {
  id: string;
  host: string;
  pid: number;
  started_at: Timestamp;
  lease_expires_at: Timestamp;
  /** Set by a graceful stop: its sessions may be recovered at once. */
  released_at: NullableTimestamp;
  /** Set by the instance that recovered its sessions after its lease ended. */
  recovered_at: NullableTimestamp;
}

export interface LedgerCursorsTable {
  id: string;
  project_id: string;
  is_test: boolean;
  end_user_id: string;
  connection_id: string;
  operation_id: string;
  filters: Json<Record<string, unknown>>;
  page_size: number;
  /** `pending` until the first page arrives, then `open`, `finished` or `ended` (with a reason). */
  state: "pending" | "open" | "finished" | "ended";
  ended_reason: string | null;
  iterator_id: string | null;
  ticket_hash: string | null;
  pages_served: number;
  records_served: number;
  remaining: number | null;
  last_request_id: string | null;
  repeats: number;
  created_at: Timestamp;
  last_used_at: Timestamp;
}

/** Simulator mode only: the simulated company file behind a connection (migration 0005). */
export interface SimulatedCompanyFilesTable {
  connection_id: string;
  project_id: string;
  company_name: string;
  snapshot: Json<unknown>;
  attached: boolean;
  /** The simulated application's `{xmlVersion, country}` (migration 0014); null: the default. */
  application: ColumnType<
    { xmlVersion: string; country: string } | null,
    string | null | undefined,
    string | null
  >;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  /** The mode of the key that created it; it receives only that mode's events. */
  is_test: boolean;
  url: string;
  description: string | null;
  event_types: Json<string[]>;
  enabled: boolean;
  disabled_reason: string | null;
  include_sync_requests: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: NullableTimestamp;
  secret_rotated_at: NullableTimestamp;
  /** First failed attempt since the last success (auto-disable after 5 days). */
  failing_since: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EventsTable {
  id: string;
  seq: Generated<string>;
  project_id: string;
  is_test: boolean;
  type: string;
  /** JSON text of the event's `data`, exactly as sent. */
  data: string;
  /** A sync request's caller already got the final result (only `includeSyncRequests` endpoints take it). */
  caller_received_result: Generated<boolean>;
  /** Delivered to this endpoint only (`webhook.test`). */
  endpoint_id: string | null;
  created_at: Timestamp;
  fanned_out_at: NullableTimestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  project_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: "pending" | "succeeded" | "failed";
  attempt_count: Generated<number>;
  next_attempt_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  attempts: ColumnType<unknown[], string | undefined, string>;
  lease_token: string | null;
  lease_expires_at: NullableTimestamp;
  created_at: Timestamp;
}

/** A change feed subscription (spec: Change feed subscription), scoped by project and key mode. */
export interface ChangeFeedSubscriptionsTable {
  id: string;
  project_id: string;
  is_test: boolean;
  /** Watched typed resources by path name, alphabetical. */
  resources: Json<string[]>;
  interval_minutes: number;
  enabled: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The poll state of one subscription on one connection (change-feed/poller.ts). */
export interface ChangeFeedPollsTable {
  subscription_id: string;
  connection_id: string;
  /** When the subscription started covering the connection: no window reaches back before it. */
  covered_from: Timestamp;
  /** Service time at which the last completed poll started: the next window starts there (less an overlap). */
  polled_until: Timestamp;
  next_poll_at: Timestamp;
  /** Set while a poll runs (its claim). */
  started_at: NullableTimestamp;
  /** The running poll's Requests, one per query, in query order. */
  request_ids: Json<string[]>;
}

/** A change already reported: record ID and revision (`deleted` for a deletion). */
export interface ChangeFeedSeenTable {
  subscription_id: string;
  connection_id: string;
  object_id: string;
  revision: string;
  seen_at: Timestamp;
}

/** When the service last wrote to a record of a connection (its writes to one record are spaced). */
export interface RecordWritesTable {
  connection_id: string;
  record_id: string;
  written_at: Timestamp;
}

/** One mirrored group of an end user (migration 0036, mirror/). */
export interface MirrorsTable {
  end_user_id: string;
  /** The typed group's path name (`customers`). */
  resource: string;
  project_id: string;
  is_test: boolean;
  state: "filling" | "ready" | "paused" | "error";
  /** `{code, message}` of what sent the mirror to `error` or back to `filling`; null when none. */
  error: Json<{ code: string; message: string }> | null;
  /** Bumps with every new fill: records of an older generation are not in the copy. */
  generation: ColumnType<number, number | undefined, number>;
  /** Bumps with every change of the copy (int8: read as text). */
  version: ColumnType<string, string | number | undefined, string | number>;
  records: ColumnType<number, number | undefined, number>;
  as_of: NullableTimestamp;
  last_change_applied_at: NullableTimestamp;
  /** The company file's UTC offset (`-05:00`), read from its records' timestamps. */
  utc_offset: string | null;
  fill_started_at: NullableTimestamp;
  /** The application cursor of the fill's next page (null: the first page). */
  fill_cursor: string | null;
  fill_pages: ColumnType<number, number | undefined, number>;
  /** Service time from which the next poll's window starts (less the overlap). */
  polled_until: NullableTimestamp;
  next_work_at: Timestamp;
  /** The claim of the work running for the mirror (a fill page or a poll). */
  work_started_at: NullableTimestamp;
  /** `refresh`/`reread`: a poll reading again what other records moved (by ID / the whole group). */
  work_kind: "fill" | "poll" | "refresh" | "reread" | null;
  request_ids: Json<string[]>;
  /** Every succeeded write of the end user completed before this is in the copy (read-your-writes). */
  writes_through: Timestamp;
  /** With `writes_through`: the last write applied (writes are ordered by completion, then ID). */
  writes_through_id: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A mirrored record, or a tombstone (`data` null) of a deleted one. */
export interface MirrorRecordsTable {
  end_user_id: string;
  resource: string;
  id: string;
  /** The record's typed JSON (text); null once the application deleted it. */
  data: string | null;
  /** The record's `updatedAt` in epoch ms (an older answer never replaces a newer one). */
  updated_ms: ColumnType<string, string | number, string | number>;
  generation: number;
  version: ColumnType<string, string | number, string | number>;
}

/** The filters of a list read from the mirror, for its next pages (migration 0036). */
export interface MirrorCursorsTable {
  id: string;
  end_user_id: string;
  resource: string;
  filters: Json<Array<[string, unknown]>>;
  linked: boolean;
  created_at: Timestamp;
}

/** The record each `externalId` the service wrote or read belongs to (migration 0037). */
export interface ExternalIdsTable {
  end_user_id: string;
  /** The typed group's path (`customers`). */
  resource: string;
  /** Lower case. */
  external_id: string;
  record_id: string;
  seen_at: Date;
}

export interface DatabaseSchema {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  end_users: EndUsersTable;
  connections: ConnectionsTable;
  auth_sessions: AuthSessionsTable;
  requests: RequestsTable;
  request_answers: RequestAnswersTable;
  connection_status_changes: ConnectionStatusChangesTable;
  idempotency_keys: IdempotencyKeysTable;
  connector_sessions: ConnectorSessionsTable;
  ledger_cursors: LedgerCursorsTable;
  simulated_company_files: SimulatedCompanyFilesTable;
  service_instances: ServiceInstancesTable;
  webhook_endpoints: WebhookEndpointsTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  change_feed_subscriptions: ChangeFeedSubscriptionsTable;
  change_feed_polls: ChangeFeedPollsTable;
  change_feed_seen: ChangeFeedSeenTable;
  record_writes: RecordWritesTable;
  project_usage: ProjectUsageTable;
  mirrors: MirrorsTable;
  mirror_records: MirrorRecordsTable;
  external_ids: ExternalIdsTable;
  mirror_cursors: MirrorCursorsTable;
}
