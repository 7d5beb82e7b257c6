/**
 * The request headers of application operations, documented once with their schemas (spec:
 * Headers on application operations). The checks themselves live in `requests/call-options.ts`
 * and `requests/idempotency-key.ts`; these describe them for OpenAPI.
 */
import { DEFAULT_QUEUE_TTL_SECONDS, DEFAULT_TIMEOUT_SECONDS } from "../requests/call-options.ts";
import type { HeaderDoc } from "./route.ts";

export const END_USER_HEADER: HeaderDoc = {
  name: "Svc-End-User-Id",
  required: true,
  description: "The end user (`eu_...`) whose company file is used",
  schema: { type: "string", pattern: "^eu_[0-9a-hjkmnp-tv-z]{26}$" },
};

/** `Svc-Timeout-Seconds` with the operation's default. */
export function timeoutHeader(defaultSeconds = DEFAULT_TIMEOUT_SECONDS): HeaderDoc {
  return {
    name: "Svc-Timeout-Seconds",
    required: false,
    description: `Sync wait in seconds, 1 to 300 (default ${defaultSeconds})`,
    schema: { type: "integer", minimum: 1, maximum: 300, default: defaultSeconds },
  };
}

export const PREFER_HEADER: HeaderDoc = {
  name: "Prefer",
  required: false,
  description: "`respond-async` answers 202 with the Request",
  schema: { type: "string", enum: ["respond-async"] },
};

export const QUEUE_TTL_HEADER: HeaderDoc = {
  name: "Svc-Queue-Ttl-Seconds",
  required: false,
  description: `Async only, 10 to 86400 (default ${DEFAULT_QUEUE_TTL_SECONDS})`,
  schema: { type: "integer", minimum: 10, maximum: 86400, default: DEFAULT_QUEUE_TTL_SECONDS },
};

export const IDEMPOTENCY_HEADER: HeaderDoc = {
  name: "Idempotency-Key",
  required: false,
  description: "1 to 255 printable ASCII characters, kept 7 days: a repeat replays the first answer",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
};

/** `Svc-Max-Staleness-Seconds` on list and retrieve of a mirrorable group (issue 26, mirror/read.ts). */
export const MAX_STALENESS_HEADER_DOC: HeaderDoc = {
  name: "Svc-Max-Staleness-Seconds",
  required: false,
  description:
    "Answer from the end user's mirror when it is at most this many seconds old (0 to 86400); absent: live. A mirrored answer carries `Svc-Data-As-Of` and `Age`",
  schema: { type: "integer", minimum: 0, maximum: 86400 },
};

/** Headers of an application read. */
export const APPLICATION_HEADERS: readonly HeaderDoc[] = [
  END_USER_HEADER,
  timeoutHeader(),
  PREFER_HEADER,
  QUEUE_TTL_HEADER,
];

/** Headers of an application write. */
export const APPLICATION_WRITE_HEADERS: readonly HeaderDoc[] = [...APPLICATION_HEADERS, IDEMPOTENCY_HEADER];
