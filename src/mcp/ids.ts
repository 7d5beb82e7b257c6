import { ServiceError } from "../errors/service-error.ts";
import { isId } from "../platform/ids.ts";

/**
 * The IDs an agent hands the MCP server, checked before they enter a URL (issue 23, decision
 * 0033). A record ID goes into the path as one segment; `encodeURIComponent` leaves `.` and `..`
 * as they are, and URL normalisation then removes them with the segment before, so the call the
 * service received was another route than the preview showed. So an ID is refused unless it is one
 * of the forms the service can mean:
 *
 * - an application record ID (spec: "strings of 1 to 36 characters", e.g. `80000001-1234567890`):
 *   never a dot segment, never a character that ends, escapes or splits a path segment (`/`, `\`,
 *   `?`, `#`, `%`), no whitespace and no control character — none of which the application's IDs
 *   carry;
 * - a platform ID (`eu_…`, `req_…`): exactly its prefix and 26 Crockford characters, as the service
 *   itself checks them.
 */

// eslint-disable-next-line no-control-regex
const UNSAFE_IN_RECORD_ID = /[/\\?#%\s\u0000-\u001f\u007f-\u009f]/u;

/** The same rule as a JSON Schema `pattern`, for describe_operation. */
export const RECORD_ID_PATTERN = "^(?!\\.\\.?$)[^/\\\\?#%\\s\\u0000-\\u001f\\u007f-\\u009f]+$";

/** True when `value` may be sent as a record ID (its length is the core validator's to check). */
export function isSafeRecordId(value: string): boolean {
  return value !== "." && value !== ".." && !UNSAFE_IN_RECORD_ID.test(value);
}

/** Refuses a record ID that is not one of the application's ID forms, naming `param`. */
export function checkRecordId(value: unknown, param: string): void {
  if (typeof value === "string" && !isSafeRecordId(value)) {
    throw new ServiceError("INVALID_PARAMETER", {
      param,
      message: `\`${param}\` is not a record ID: record IDs are 1 to 36 characters, never \`.\` or \`..\`, without \`/\`, \`\\\`, \`?\`, \`#\`, \`%\`, whitespace or control characters. Nothing was sent.`,
    });
  }
}

const LABELS: Readonly<Record<"endUser" | "request", string>> = {
  endUser: "an end user ID (`eu_` + 26 characters)",
  request: "a Request ID (`req_` + 26 characters)",
};

/** Refuses anything but a well-formed platform ID of `kind`, naming `param`. */
export function checkPlatformId(kind: "endUser" | "request", value: string, param: string): void {
  if (!isId(kind, value)) {
    throw new ServiceError("INVALID_PARAMETER", {
      param,
      message: `\`${param}\` must be ${LABELS[kind]}. Nothing was sent.`,
    });
  }
}
