/**
 * When the store does not answer (decision 0019): the one place that tells a store outage from any
 * other failure. An outage is the store's fault, not the call's: the HTTP edge answers it with 503
 * SERVICE_UNAVAILABLE and `Retry-After` (api/errors.ts), never 500 INTERNAL_ERROR.
 *
 * What counts as "does not answer", on either engine:
 *
 * - no connection could be had: refused, reset, unreachable, the pool exhausted past
 *   `STORE_CONNECT_TIMEOUT_MS`, the database refusing connections (shutting down, too many
 *   connections, not accepting connections) — every failure of the pool's `connect` is wrapped here
 *   by the PostgreSQL driver (store/database.ts);
 * - the connection broke under a statement: terminated by an administrator or a restart (SQLSTATE
 *   class 08, 57P01–57P03), or the client noticed the socket die;
 * - the statement ran out of time: `statement_timeout` (57014, `STORE_STATEMENT_TIMEOUT_MS`);
 * - the server lacks resources (class 53: disk full, out of memory, too many connections; class 58:
 *   I/O error);
 * - the embedded engine is closed (PGlite after `close()`, or the store after `destroy()`).
 *
 * Anything else (a constraint violated, a syntax error, a bug) stays an internal error.
 */
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
}

/** SQLSTATE codes and classes of an outage (PostgreSQL Appendix A). */
const OUTAGE_STATES: ReadonlySet<string> = new Set(["57P01", "57P02", "57P03", "57014", "25P03"]);
const OUTAGE_CLASSES: ReadonlySet<string> = new Set(["08", "53", "58"]);

/** Node's socket and name-resolution error codes. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Messages of node-postgres, its pool, Kysely and PGlite that mean the store went away. */
const OUTAGE_MESSAGES: readonly RegExp[] = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^timeout exceeded when trying to connect$/,
  /^Cannot use a pool after calling end on the pool$/,
  /^Query read timeout$/,
  /^driver has already been destroyed$/,
  /^PGlite is closed$/,
];

/** Whether `error` (or what caused it) says the store does not answer. */
export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== "object" || error === null) return false;
  if (error instanceof StoreUnavailableError) return true;
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof code === "string") {
    if (OUTAGE_STATES.has(code) || SOCKET_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && OUTAGE_CLASSES.has(code.slice(0, 2))) return true;
  }
  if (typeof message === "string" && OUTAGE_MESSAGES.some((pattern) => pattern.test(message))) return true;
  if (error instanceof AggregateError && error.errors.some((e) => isStoreUnavailable(e, depth + 1)))
    return true;
  return isStoreUnavailable(cause, depth + 1);
}

/** `error` as a {@link StoreUnavailableError} when it is an outage, else unchanged. */
export function classifyStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isStoreUnavailable(error)) return error;
  return new StoreUnavailableError("The store does not answer.", { cause: error });
}
