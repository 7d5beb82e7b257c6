/**
 * The error catalogue: one entry per code of the spec's "All codes" list (neutral names). Each entry
 * carries the HTTP status (the spec's status table, or our documented choice where the spec is
 * silent; see docs/decisions/0002-error-statuses.md), the error type, the retry rule (which also
 * gives `retryable` and `Svc-Should-Retry`), the default outcome, the end-user message and ordered
 * fixes. Nothing else in the service invents error fields.
 */

export const ERROR_TYPES = [
  "INVALID_REQUEST_ERROR",
  "AUTHENTICATION_ERROR",
  "PERMISSION_ERROR",
  "BILLING_ERROR",
  "RATE_LIMIT_ERROR",
  "INTEGRATION_CONNECTION_ERROR",
  "INTEGRATION_ERROR",
  "OUTCOME_UNKNOWN_ERROR",
  "INTERNAL_ERROR",
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/** The spec's retry rules, one per code. */
export type RetryRule =
  "retry_same_request" | "poll_request" | "never_resend_check_first" | "change_request_or_environment";

export const OUTCOMES = ["applied", "not_applied", "pending", "unknown", "not_applicable"] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const FIX_ACTORS = ["developer", "end_user", "support"] as const;
export type FixActor = (typeof FIX_ACTORS)[number];
export interface Fix {
  actor: FixActor;
  action: string;
}

export interface CatalogueEntry {
  httpStatus: number | null;
  type: ErrorType;
  retry: RetryRule;
  outcome: Outcome;
  message: string;
  userFacingMessage: string;
  fixes: readonly Fix[];
}

const dev = (action: string): Fix => ({ actor: "developer", action });
const user = (action: string): Fix => ({ actor: "end_user", action });
const support = (action: string): Fix => ({ actor: "support", action });

const INVALID = "INVALID_REQUEST_ERROR";
const CONN = "INTEGRATION_CONNECTION_ERROR";
const INTEG = "INTEGRATION_ERROR";
const CHANGE = "change_request_or_environment";
const RETRY = "retry_same_request";
const GENERIC_USER = "Something went wrong while processing this request. Please try again later.";
const CHECK_INPUT = dev("Correct the request as described in `message` and `param`, then send it again.");

function entry(
  httpStatus: number | null,
  type: ErrorType,
  retry: RetryRule,
  outcome: Outcome,
  message: string,
  userFacingMessage: string,
  fixes: Fix[],
): CatalogueEntry {
  return { httpStatus, type, retry, outcome, message, userFacingMessage, fixes };
}

const invalid = (httpStatus: number, message: string, ...fixes: Fix[]): CatalogueEntry =>
  entry(
    httpStatus,
    INVALID,
    CHANGE,
    "not_applied",
    message,
    GENERIC_USER,
    fixes.length ? fixes : [CHECK_INPUT],
  );

export const catalogue = {
  // Invalid request
  INVALID_JSON: invalid(
    400,
    "The request body is not valid JSON.",
    dev("Send a well-formed JSON object body with `Content-Type: application/json`."),
  ),
  INVALID_PARAMETER: invalid(400, "A parameter has an invalid value."),
  UNKNOWN_PARAMETER: invalid(
    400,
    "The request contains a parameter this operation does not accept.",
    dev("Remove the parameter named in `param`; check its spelling against the API reference."),
  ),
  UNKNOWN_HEADER: invalid(
    400,
    "The request contains an unknown `Svc-` header.",
    dev("Remove the header named in `param` or correct its spelling."),
  ),
  DECIMAL_PRECISION_EXCEEDED: invalid(
    400,
    "A decimal value has more decimal places than the field allows.",
    dev(
      "Round the value yourself to the number of places the field allows (2 for amounts, 5 for prices, costs and rates); the service never rounds silently.",
    ),
  ),
  STRING_TOO_LONG: invalid(
    400,
    "A text value is longer than the field allows.",
    dev("Shorten the value named in `param` to the maximum length given in `message`."),
  ),
  UNSUPPORTED_CHARACTER: invalid(
    400,
    "A text value contains a character the application cannot store (Windows-1252 only).",
    dev(
      "Replace the character at `details.index`; `details.suggestion` proposes a replacement when one exists.",
    ),
  ),
  FIELD_NOT_CLEARABLE: invalid(
    400,
    "This field cannot be cleared with null.",
    dev("Omit the field to leave it unchanged, or send a value."),
  ),
  END_USER_ID_MISSING: invalid(
    400,
    "The `Svc-End-User-Id` header is required for application operations.",
    dev("Send the end user's ID (`eu_...`) in the `Svc-End-User-Id` header."),
  ),
  PAYLOAD_TOO_LARGE: invalid(
    413,
    "The request body is larger than 20 MiB.",
    dev("Split the work into smaller requests."),
  ),
  IDEMPOTENCY_KEY_INVALID: invalid(
    400,
    "The `Idempotency-Key` header must be 1 to 255 printable ASCII characters.",
    dev("Use a UUID or another printable ASCII key of at most 255 characters."),
  ),
  IDEMPOTENCY_KEY_REUSED: invalid(
    422,
    "This `Idempotency-Key` was already used with a different request.",
    dev("Use a new key for a new request; reuse a key only to retry the identical request."),
  ),
  CURSOR_INVALID: invalid(
    400,
    "The cursor is malformed, belongs to another list, or was already repeated twice.",
    dev("Use the `nextCursor` of the latest page, or start the list again without a cursor."),
  ),
  CURSOR_PARAMS_MISMATCH: invalid(
    400,
    "The filters differ from those of the request that created the cursor.",
    dev("Send the cursor alone (optionally with `limit`) or with exactly the first request's filters."),
  ),
  CURSOR_EXPIRED: invalid(
    410,
    "The cursor has expired.",
    dev("Start the list again without a cursor; see `details.reason`."),
  ),
  RESOURCE_MISSING: invalid(
    404,
    "No such resource.",
    dev("Check the ID and that it belongs to the project of the API key."),
  ),
  REQUEST_NOT_CANCELABLE: invalid(
    409,
    "The request was already handed to the connector and can no longer be canceled.",
    dev("Wait for the request to finish with `GET /v1/requests/{id}?waitSeconds=60`."),
  ),
  PASSTHROUGH_INVALID_XML: invalid(
    400,
    "The passthrough XML is malformed or not a valid message for the application.",
    dev(
      "Fix the XML named in `message`; the application rejects the whole message set when one element is invalid or out of order.",
    ),
  ),
  LEDGER_FIELD_UNSUPPORTED_BY_VERSION: invalid(
    422,
    "A field is not supported by the application's message version.",
    dev("Remove the field, or ask the end user to update the application to `details.minimumXmlVersion`."),
    user("Update your accounting application to a newer version."),
  ),
  LEDGER_REGION_UNSUPPORTED: invalid(
    422,
    "This operation is not available in the application's regional edition.",
    dev("Use an operation supported by the end user's regional edition."),
  ),

  // Authentication and permission
  API_KEY_MISSING: entry(
    401,
    "AUTHENTICATION_ERROR",
    CHANGE,
    "not_applied",
    "No API key was provided.",
    GENERIC_USER,
    [dev("Send `Authorization: Bearer <secret key>`.")],
  ),
  API_KEY_INVALID: entry(
    401,
    "AUTHENTICATION_ERROR",
    CHANGE,
    "not_applied",
    "The API key is invalid or revoked.",
    GENERIC_USER,
    [dev("Check the key, or create a new one with `ledger-bridge keys create`.")],
  ),
  PUBLISHABLE_KEY_INVALID: entry(
    401,
    "AUTHENTICATION_ERROR",
    CHANGE,
    "not_applied",
    "The publishable key is invalid or revoked.",
    GENERIC_USER,
    [dev("Send a current `pk_live_` or `pk_test_` key of this project.")],
  ),
  PUBLISHABLE_KEY_PROJECT_MISMATCH: entry(
    403,
    "PERMISSION_ERROR",
    CHANGE,
    "not_applied",
    "The publishable key belongs to another project than the secret key.",
    GENERIC_USER,
    [dev("Use the publishable key of the same project as the secret key.")],
  ),
  TEST_COMPANY_FILE_LIMIT_REACHED: entry(
    403,
    "PERMISSION_ERROR",
    CHANGE,
    "not_applied",
    "The organisation has reached its cap on test company files.",
    GENERIC_USER,
    [dev("Delete unused test end users, or raise `TEST_COMPANY_FILE_LIMIT`.")],
  ),
  API_KEY_READ_ONLY: entry(
    403,
    "PERMISSION_ERROR",
    CHANGE,
    "not_applied",
    "A read-only API key cannot perform writes.",
    GENERIC_USER,
    [dev("Use a full-access secret key for writes.")],
  ),
  PERMISSION_DENIED: entry(
    403,
    "PERMISSION_ERROR",
    CHANGE,
    "not_applied",
    "The project is not allowed to perform this operation.",
    GENERIC_USER,
    [
      dev(
        "The service's operator disabled the project (`message` says when and why): ask them to enable it again (`ledger-bridge projects enable`).",
      ),
    ],
  ),

  // Billing and limits
  BILLING_REQUIRED: entry(
    402,
    "BILLING_ERROR",
    CHANGE,
    "not_applied",
    "The project's monthly quota of application requests is used up.",
    GENERIC_USER,
    [
      dev(
        "Wait until the quota resets at `details.resetsAt`, or ask the service's operator to raise the project's monthly quota (`ledger-bridge projects set-quota`); `details` gives `quota`, `used` and `requested` (a batch counts as its members).",
      ),
    ],
  ),
  PAYMENT_FAILED: entry(
    402,
    "BILLING_ERROR",
    CHANGE,
    "not_applied",
    "The last payment for the project failed.",
    GENERIC_USER,
    [
      dev(
        "Settle the payment with the service's operator, who clears it with `ledger-bridge projects set-billing --payment ok`; test keys keep working meanwhile.",
      ),
    ],
  ),
  RATE_LIMITED: entry(
    429,
    "RATE_LIMIT_ERROR",
    RETRY,
    "not_applied",
    "Too many requests for this project in the current window.",
    "The service is busy. Please try again in a moment.",
    [dev("Wait `Retry-After` seconds, then retry; spread calls over time.")],
  ),
  CONNECTION_QUEUE_FULL: entry(
    429,
    "RATE_LIMIT_ERROR",
    RETRY,
    "not_applied",
    "The connection's queue is full.",
    "Your accounting application has too much work queued. Please try again later.",
    [
      dev("Wait for queued requests to finish before adding more."),
      user("Make sure the Web Connector is running so queued work can be processed."),
    ],
  ),
  WEBHOOK_ENDPOINT_LIMIT_REACHED: entry(
    422,
    "INVALID_REQUEST_ERROR",
    CHANGE,
    "not_applied",
    "The project has reached its cap on webhook endpoints.",
    GENERIC_USER,
    [dev("Delete an unused endpoint or subscribe an existing one to more event types.")],
  ),

  // Connection
  INTEGRATION_CONNECTION_NOT_SET_UP: entry(
    422,
    CONN,
    CHANGE,
    "not_applied",
    "The end user has not connected a company file yet.",
    "Your accounting application is not connected yet. Please complete the setup.",
    [
      dev("Create an auth session and send its `authFlowUrl` to the end user."),
      user("Open the setup link and follow the steps."),
    ],
  ),
  INTEGRATION_CONNECTION_NOT_ACTIVE: entry(
    503,
    CONN,
    RETRY,
    "not_applied",
    "The end user's connector has not checked in recently, so the request cannot be delivered now.",
    "Your accounting application is not reachable right now. Please make sure your computer is on and the Web Connector is running.",
    [
      user("Turn on the computer with the accounting application and start the Web Connector."),
      dev(
        "Retry later, or send the request with `Prefer: respond-async` to queue it until the connector checks in.",
      ),
    ],
  ),
  INTEGRATION_CONNECTION_DISABLED: entry(
    403,
    CONN,
    CHANGE,
    "not_applied",
    "The end user's connection is disabled.",
    "This connection has been disabled. Please contact the provider of the application.",
    [dev("Re-enable the connection or reset the end user's company file.")],
  ),
  LEDGER_CONNECTION_ERROR: entry(
    503,
    CONN,
    RETRY,
    "not_applied",
    "The connector could not reach the accounting application.",
    "Your accounting application could not be reached. Please check that it is installed and running.",
    [user("Open the accounting application and the company file, then try again."), dev("Retry later.")],
  ),
  LEDGER_CANNOT_START: entry(
    503,
    CONN,
    RETRY,
    "not_applied",
    "The connector could not start the accounting application.",
    "Your accounting application could not be started. Please open it yourself and try again.",
    [
      user("Open the accounting application and the company file, and leave them open."),
      support("Check that the application is installed for the Windows user running the Web Connector."),
    ],
  ),
  LEDGER_STARTING: entry(
    503,
    CONN,
    RETRY,
    "not_applied",
    "The accounting application is still starting.",
    "Your accounting application is still starting. Please wait a moment.",
    [dev("Retry in a few seconds.")],
  ),
  LEDGER_MODAL_DIALOG_OPEN: entry(
    503,
    CONN,
    RETRY,
    "not_applied",
    "A dialog box is open in the accounting application and blocks access.",
    "A dialog window is open in your accounting application. Please close it so the sync can continue.",
    [
      user("Close the open dialog window in the accounting application."),
      dev("Retry after the end user has closed the dialog."),
    ],
  ),
  LEDGER_NOT_RESPONDING: entry(
    503,
    CONN,
    RETRY,
    "not_applied",
    "The accounting application does not respond.",
    "Your accounting application is not responding. Please check that it is not busy or frozen.",
    [
      user("Check the accounting application for open windows or a frozen screen; restart it if needed."),
      dev(
        "Retry after `Retry-After` seconds, or send the request with `Prefer: respond-async` to queue it until the application answers again.",
      ),
    ],
  ),
  LEDGER_WRONG_COMPANY_FILE_OPEN: entry(
    409,
    CONN,
    CHANGE,
    "not_applied",
    "A different company file is open in the accounting application.",
    "A different company file is open. Please open the company file you connected, or close the open one.",
    [
      user("Open the company file you connected during setup."),
      dev(
        "If the end user moved to another file on purpose, call `POST /v1/end-users/{id}/reset-company-file`.",
      ),
    ],
  ),
  LEDGER_COMPANY_FILE_MISMATCH: entry(
    409,
    CONN,
    CHANGE,
    "not_applied",
    "The open company file is connected to another end user of this project.",
    "The company file that is open belongs to another account. Please open your own company file.",
    [
      user("Open the company file you connected during setup, not the one of another account."),
      dev(
        "The open file is connected to another end user of this project (`details.otherEndUserId` names it when the call was waiting). If both end users are the same company, delete the one you no longer need or reset its company file (`POST /v1/end-users/{id}/reset-company-file`, `mode: identity`); this end user then adopts the file at its next check-in.",
      ),
    ],
  ),
  LEDGER_COMPANY_FILE_NOT_FOUND: entry(
    409,
    CONN,
    CHANGE,
    "not_applied",
    "The company file could not be found at its stored path.",
    "Your company file could not be found. Was it moved or renamed?",
    [
      user("Open the company file in the accounting application."),
      dev(
        "Call `POST /v1/end-users/{id}/reset-company-file` with `mode: path` to use the file that is open.",
      ),
    ],
  ),
  LEDGER_FILE_MODE_CONFLICT: entry(
    503,
    CONN,
    RETRY,
    "not_applied",
    "The company file is open in single-user mode or held by another program.",
    "Your company file is open in a mode that blocks the sync. Please switch to multi-user mode or close other programs using it.",
    [user("Switch the company file to multi-user mode, or close other programs that use it.")],
  ),
  LEDGER_ADMIN_REQUIRED: entry(
    403,
    CONN,
    CHANGE,
    "not_applied",
    "Only the company file's administrator can grant access the first time.",
    "Please log in to your company file as the administrator once to allow this connection.",
    [user("Open the company file as Admin and accept the access request of the Web Connector application.")],
  ),
  LEDGER_ACCESS_NOT_GRANTED: entry(
    403,
    CONN,
    CHANGE,
    "not_applied",
    "The application has not been granted access to the company file.",
    "Access to your company file was not granted. Please allow access in the Integrated Applications preferences.",
    [
      user(
        "In the accounting application, open Preferences, Integrated Applications, and allow access for this application.",
      ),
    ],
  ),
  LEDGER_VERSION_UNSUPPORTED: entry(
    422,
    CONN,
    CHANGE,
    "not_applied",
    "The accounting application's version does not support the required message version.",
    "Your accounting application is too old for this integration. Please update it.",
    [user("Update the accounting application to a supported version.")],
  ),

  // Application
  LEDGER_REQUEST_ERROR: entry(
    400,
    INTEG,
    CHANGE,
    "not_applied",
    "The accounting application rejected the request.",
    "Your accounting application could not process this request.",
    [dev("Read `message` and `integrationCode` and correct the request.")],
  ),
  LEDGER_OBJECT_NOT_FOUND: entry(
    404,
    INTEG,
    CHANGE,
    "not_applied",
    "The record does not exist in the company file.",
    "The requested record could not be found.",
    [dev("Check the ID; the record may have been deleted.")],
  ),
  LEDGER_REFERENCE_NOT_FOUND: entry(
    422,
    INTEG,
    CHANGE,
    "not_applied",
    "A referenced record does not exist in the company file.",
    "A record referenced by this request could not be found.",
    [dev("Check the referenced IDs named in `message`.")],
  ),
  LEDGER_DUPLICATE_NAME: entry(
    409,
    INTEG,
    CHANGE,
    "not_applied",
    "The name is already in use in the company file.",
    "This name is already in use. Please choose another one.",
    [dev("Choose a unique name, or update the existing record.")],
  ),
  LEDGER_REVISION_NUMBER_STALE: entry(
    409,
    INTEG,
    CHANGE,
    "not_applied",
    "The revision number is out of date: the record changed since it was read.",
    "This record was changed in the meantime. Please reload it and try again.",
    [dev("Retrieve the record again and send its current `revisionNumber`.")],
  ),
  LEDGER_OBJECT_IN_USE: entry(
    422,
    INTEG,
    CHANGE,
    "not_applied",
    "The record is in use and cannot be deleted.",
    "This record is in use and cannot be deleted.",
    [dev("Make the record inactive instead of deleting it.")],
  ),
  LEDGER_FEATURE_NOT_ENABLED: entry(
    422,
    INTEG,
    CHANGE,
    "not_applied",
    "The feature needed for this request is turned off in the company file.",
    "A feature needed for this is turned off in your accounting application.",
    [user("Turn on the feature in the accounting application's preferences.")],
  ),
  LEDGER_INSUFFICIENT_PERMISSION: entry(
    403,
    INTEG,
    CHANGE,
    "not_applied",
    "The company file user lacks permission for this action.",
    "Your company file user is not allowed to do this.",
    [user("Grant the integrated application's user the needed permission in the accounting application.")],
  ),
  LEDGER_RESPONSE_TOO_LARGE: entry(
    422,
    INTEG,
    CHANGE,
    "not_applicable",
    "The answer is too large.",
    GENERIC_USER,
    [dev("Narrow the filters or lower `limit`.")],
  ),
  LEDGER_OPERATION_UNSUPPORTED: entry(
    422,
    INTEG,
    CHANGE,
    "not_applied",
    "The application does not support this operation.",
    GENERIC_USER,
    [dev("Use one of `details.alternatives`.")],
  ),
  LEDGER_RESPONSE_UNREADABLE: entry(
    502,
    INTEG,
    RETRY,
    "unknown",
    "The application's answer could not be read.",
    GENERIC_USER,
    [
      dev("Retry reads; for writes, check the record in the application before sending again."),
      support("Report the request ID so the answer can be examined."),
    ],
  ),

  // Timing and outcome
  REQUEST_TIMEOUT_NOT_SENT: entry(
    504,
    "INTEGRATION_CONNECTION_ERROR",
    RETRY,
    "not_applied",
    "The request was not handed to the connector before the timeout; it was canceled.",
    "Your accounting application did not respond in time. Please try again.",
    [
      dev("Retry the request, or use `Prefer: respond-async` to queue it until the connector checks in."),
      user("Make sure the Web Connector is running."),
    ],
  ),
  REQUEST_EXPIRED: entry(
    null,
    "INTEGRATION_CONNECTION_ERROR",
    RETRY,
    "not_applied",
    "The request's queue TTL elapsed before it could be handed to the connector.",
    "Your accounting application was not reachable in time.",
    [dev("Send the request again, or raise `Svc-Queue-Ttl-Seconds`.")],
  ),
  REQUEST_CANCELED: entry(
    null,
    INVALID,
    CHANGE,
    "not_applied",
    "The request was canceled before it was sent.",
    GENERIC_USER,
    [dev("Send a new request if the work is still needed.")],
  ),
  LEDGER_REQUEST_TIMEOUT: entry(
    504,
    "INTEGRATION_CONNECTION_ERROR",
    "poll_request",
    "pending",
    "The request was sent to the application but did not finish before the timeout; it keeps running.",
    "Your accounting application is taking longer than usual.",
    [dev("Poll `GET /v1/requests/{details.requestId}?waitSeconds=60`; never resend.")],
  ),
  LEDGER_WRITE_OUTCOME_UNKNOWN: entry(
    502,
    "OUTCOME_UNKNOWN_ERROR",
    "never_resend_check_first",
    "unknown",
    "The connection broke after the write was sent; whether the application applied it is not known yet.",
    "We could not confirm whether your change was saved. Please check before trying again.",
    [
      dev(
        "Do not resend. The service asks the application for the stored result at its next session; follow the request with `GET /v1/requests/{id}` or the `request.outcome_resolved` event.",
      ),
      user("Check in the accounting application whether the change was saved."),
    ],
  ),
  LEDGER_READ_INTERRUPTED: entry(
    502,
    "INTEGRATION_CONNECTION_ERROR",
    RETRY,
    "not_applicable",
    "The connection broke while the application was answering a read.",
    "The connection to your accounting application was interrupted. Please try again.",
    [dev("Retry the read.")],
  ),

  // Server
  INTERNAL_ERROR: entry(
    500,
    "INTERNAL_ERROR",
    RETRY,
    "unknown",
    "An internal error occurred.",
    GENERIC_USER,
    [
      dev("Retry with the same Idempotency-Key; report the `requestId` if it persists."),
      support("Look up the `requestId` in the service logs."),
    ],
  ),
  SERVICE_UNAVAILABLE: entry(
    503,
    "INTERNAL_ERROR",
    RETRY,
    "not_applied",
    "The service is temporarily unavailable.",
    "The service is temporarily unavailable. Please try again shortly.",
    [dev("Retry after `Retry-After` seconds.")],
  ),
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof catalogue;

/** Whether a retry rule lets a client retry automatically (`retryable`, `Svc-Should-Retry`). */
export function isRetryable(rule: RetryRule): boolean {
  return rule === "retry_same_request";
}

/** Documentation address of a code. */
export function docsUrlFor(code: ErrorCode, baseUrl: string): string {
  return `${baseUrl.replace(/\/$/, "")}/docs/errors#${code.toLowerCase().replaceAll("_", "-")}`;
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(catalogue, value);
}
