import type { Clock } from "../platform/clock.ts";
import { eventBody } from "../store/events.ts";
import type { AttemptRecord, DeliveryWork } from "../store/webhook-dispatch.ts";
import { blockedRedirectReason, checkDestination, type Resolver } from "./destination-guard.ts";
import { parseRetryAfter } from "./schedule.ts";
import { signatureHeaders, signingSecrets } from "./signer.ts";
import type { Transport } from "./transport.ts";

/**
 * One delivery attempt (spec: Webhook delivery, attempts): guard the destination, sign, POST, and
 * classify what happened. Expected failures are values, not exceptions (house style §2.4):
 *
 * | what happened | `error` | `statusCode` |
 * |---|---|---|
 * | 2xx | null | the status |
 * | 3xx | `redirect_not_followed` (or `blocked_destination: redirect to …` for a non-public target) | the status |
 * | other status | `non_2xx_status` | the status |
 * | no answer within the attempt timeout | `timeout` | null |
 * | DNS failure, refused, reset, TLS failure | `network_error: <code> …` | null |
 * | a destination that is not public | `blocked_destination: …` | null |
 */
export interface AttemptEnvironment {
  clock: Clock;
  resolve: Resolver;
  transport: Transport;
  allowLoopback: boolean;
  timeoutMs: number;
  userAgent: string;
}

export interface AttemptOutcome {
  /** The attempt as recorded (`attempt` is filled in by the caller). */
  record: Omit<AttemptRecord, "attempt">;
  /** A `Retry-After` the receiver sent with a failure, in milliseconds. */
  retryAfterMs: number | null;
}

/** Spec: "responseExcerpt (first 512 chars)". */
export const RESPONSE_EXCERPT_CHARS = 512;

/** Abort reason once an attempt is over (a shared value: an abort without one builds a DOMException). */
const FINISHED = new Error("attempt finished");

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
]);

/**
 * Makes one attempt. Returns null when `shutdown` aborted it midway (nothing is recorded: the
 * delivery is released and attempted again later).
 */
export async function attemptDelivery(
  env: AttemptEnvironment,
  work: DeliveryWork,
  shutdown: AbortSignal,
  traceHeaders?: Record<string, string>,
): Promise<AttemptOutcome | null> {
  const started = env.clock.now();
  const at = new Date(started).toISOString();
  const done = (
    fields: Pick<AttemptRecord, "statusCode" | "responseExcerpt" | "error">,
    retryAfterMs: number | null = null,
  ): AttemptOutcome => ({
    record: { at, latencyMs: Math.max(0, Math.round(env.clock.now() - started)), ...fields },
    retryAfterMs,
  });

  let url: URL;
  try {
    url = new URL(work.url);
  } catch {
    return done({ statusCode: null, responseExcerpt: null, error: "blocked_destination: invalid URL" });
  }
  const destination = await checkDestination(url, env.resolve, env.allowLoopback);
  if (!destination.ok) return done({ statusCode: null, responseExcerpt: null, error: destination.error });

  const body = eventBody(work.event);
  const signed = signatureHeaders(
    signingSecrets(work, env.clock.now()),
    work.event.id,
    Math.floor(env.clock.now() / 1000),
    body,
  );
  const timeout = new AbortController();
  const stop = (): void => timeout.abort(new Error("shutting down"));
  shutdown.addEventListener("abort", stop, { once: true });
  let timedOut = false;
  const timer = env.clock.sleep(env.timeoutMs, timeout.signal).then(() => {
    if (timeout.signal.aborted) return;
    timedOut = true;
    timeout.abort(new Error("attempt timeout"));
  });
  try {
    const response = await env.transport.send({
      url,
      address: destination.address,
      headers: {
        ...traceHeaders,
        ...signed,
        "content-type": "application/json",
        "user-agent": env.userAgent,
      },
      body,
      signal: timeout.signal,
    });
    const excerpt = Array.from(response.bodyStart).slice(0, RESPONSE_EXCERPT_CHARS).join("");
    const status = response.statusCode;
    if (status >= 200 && status < 300)
      return done({ statusCode: status, responseExcerpt: excerpt, error: null });
    const retryAfterMs = parseRetryAfter(response.headers["retry-after"], env.clock.now());
    if (status >= 300 && status < 400) {
      const location = response.headers.location;
      const target = Array.isArray(location) ? location[0] : location;
      const blocked = target ? blockedRedirectReason(target, url, env.allowLoopback) : null;
      return done(
        { statusCode: status, responseExcerpt: excerpt, error: blocked ?? "redirect_not_followed" },
        retryAfterMs,
      );
    }
    return done({ statusCode: status, responseExcerpt: excerpt, error: "non_2xx_status" }, retryAfterMs);
  } catch (error) {
    if (shutdown.aborted) return null;
    if (timedOut) return done({ statusCode: null, responseExcerpt: null, error: "timeout" });
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && TIMEOUT_CODES.has(code))
      return done({ statusCode: null, responseExcerpt: null, error: "timeout" });
    const message = error instanceof Error ? error.message : String(error);
    const label = typeof code === "string" ? `${code} ${message}` : message;
    return done({ statusCode: null, responseExcerpt: null, error: `network_error: ${label}`.slice(0, 300) });
  } finally {
    shutdown.removeEventListener("abort", stop);
    timeout.abort(FINISHED);
    await timer;
  }
}
