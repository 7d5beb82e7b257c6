import { catalogue, isRetryable, type ErrorCode, type Outcome } from "./catalogue.ts";

/** Code-specific `details` shapes (spec "Details keys"); codes not listed take a free object. */
export interface DetailsMap {
  UNSUPPORTED_CHARACTER: {
    codePoint: number;
    character: string | null;
    index: number;
    suggestion: string | null;
  };
  LEDGER_FIELD_UNSUPPORTED_BY_VERSION: { minimumXmlVersion: string; xmlVersion: string };
  /** The company file's edition (`qbXMLCountry`), decision 0016. */
  LEDGER_REGION_UNSUPPORTED: { country: string };
  LEDGER_OPERATION_UNSUPPORTED: { alternatives: string[] };
  CURSOR_EXPIRED: {
    reason: "idle_timeout" | "session_ended" | "ledger_restarted" | "evicted";
    pagesServed: number;
    recordsServed: number;
  };
  LEDGER_WRITE_OUTCOME_UNKNOWN: { requestId?: string; members?: unknown[] };
  LEDGER_REQUEST_TIMEOUT: { requestId: string };
  RATE_LIMITED: { retryAfterSeconds: number };
}
export type DetailsFor<C extends ErrorCode> = C extends keyof DetailsMap
  ? DetailsMap[C]
  : Record<string, unknown>;

export interface ServiceErrorOptions<C extends ErrorCode> {
  param?: string | null;
  details?: DetailsFor<C>;
  /** Internal cause, logged but never rendered. */
  cause?: unknown;
  /** Native application status code, HRESULT or connector code. */
  integrationCode?: string | null;
  outcome?: Outcome;
  /** Overrides the catalogue's developer message (never holds secrets). */
  message?: string;
  /** Overrides the catalogue's end-user message (for example the application's own hint). */
  userFacingMessage?: string;
  /** Seconds for `Retry-After` (429 and retryable 503). */
  retryAfterSeconds?: number;
}

/** The one error class of the service: a catalogue code plus what varies per occurrence. */
export class ServiceError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly param: string | null;
  readonly details: DetailsFor<C> | Record<string, never>;
  readonly integrationCode: string | null;
  readonly outcome: Outcome;
  readonly userFacingMessage: string;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: C, options: ServiceErrorOptions<C> = {}) {
    const entry = catalogue[code];
    super(
      options.message ?? entry.message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "ServiceError";
    this.code = code;
    this.param = options.param ?? null;
    this.details = options.details ?? {};
    this.integrationCode = options.integrationCode ?? null;
    this.outcome = options.outcome ?? entry.outcome;
    this.userFacingMessage = options.userFacingMessage ?? entry.userFacingMessage;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get httpStatus(): number | null {
    return catalogue[this.code].httpStatus;
  }

  get retryable(): boolean {
    return isRetryable(catalogue[this.code].retry);
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

/** Turns any thrown value into a ServiceError; unknown values become INTERNAL_ERROR (cause kept for logs). */
export function coerceError(value: unknown): ServiceError {
  if (value instanceof ServiceError) return value as ServiceError;
  return new ServiceError("INTERNAL_ERROR", { cause: value });
}

/** The spec's error body, as rendered and as stored on a Request. */
export interface ErrorBody {
  type: string;
  code: ErrorCode;
  message: string;
  userFacingMessage: string;
  httpStatusCode: number | null;
  integrationCode: string | null;
  requestId: string;
  cause: string;
  fixes: { actor: string; action: string }[];
  docsUrl: string;
  retryable: boolean;
  outcome: Outcome;
  param: string | null;
  details: Record<string, unknown>;
}
