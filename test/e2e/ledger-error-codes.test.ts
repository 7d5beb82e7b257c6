import assert from "node:assert/strict";
import { test } from "node:test";
import { catalogue, type ErrorCode } from "../../src/errors/catalogue.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  connectionOf,
  json,
  passthroughPath,
  queueAsync,
  requestById,
  stopConnector,
  within,
  type ErrorBody,
} from "./helpers.ts";

/**
 * Six catalogue codes that only the application or its connector can cause, each produced end to
 * end: a simulated application in the state that makes the real one answer so (its HRESULT at the
 * open, or its status code for one request, or an answer that cannot be read), the simulated
 * connector carrying it over SOAP, and the caller reading it over HTTP — the error body with the
 * catalogue's status, type and outcome, and the Request that stores the same error.
 */

type RequestWithLedger = Awaited<ReturnType<typeof requestById>> & {
  outcome: string;
  ledger: { xmlVersion: string | null; statusCode: number | null; statusSeverity: string | null };
  error: { code: string; integrationCode: string | null; httpStatusCode: number | null } | null;
};

/** Asserts the error body carries the catalogue's fields for `code`; returns it. */
async function assertError(
  response: Response,
  code: ErrorCode,
  integrationCode: string | null,
): Promise<ErrorBody["error"] & { integrationCode: string | null }> {
  const text = await response.clone().text();
  const entry = catalogue[code];
  assert.equal(response.status, entry.httpStatus, text);
  const { error } = await json<{ error: ErrorBody["error"] & { integrationCode: string | null } }>(response);
  assert.equal(error.code, code, text);
  assert.equal(error.httpStatusCode, entry.httpStatus, text);
  assert.equal(error.type, entry.type, text);
  assert.equal(error.integrationCode, integrationCode, text);
  assert.equal(error.param, null, "an application's refusal names no parameter of the call");
  assert.deepEqual(error.details, {}, "the spec defines no details for this code");
  assert.equal(response.headers.get("svc-request-id"), error.requestId);
  return error;
}

/** The Request behind an error answer, read through the API. */
async function storedRequest(sys: System, requestId: string): Promise<RequestWithLedger> {
  assert.match(requestId, /^req_/, "an application operation's error names its Request");
  return (await requestById(sys, requestId)) as RequestWithLedger;
}

/**
 * The connector's next check-in fails to open the company file the way `breakIt` makes the
 * application fail; then a sync call is answered at once with the connection's error.
 */
async function failedOpen(
  sys: System,
  eu: ConnectedEndUser,
  breakIt: () => void,
): Promise<{ response: Response; connectionErrors: string[] }> {
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  breakIt();
  await queueAsync(sys, eu.endUserId, READ); // a reason for the next check-in to open a session
  eu.connector.clearEvents();
  const report = await eu.connector.runSession();
  assert.equal(report.outcome, "connection_failed", report.message);
  const connectionErrors = eu.connector.calls.flatMap((c) =>
    c.call.method === "connectionError" ? [c.call.hresult] : [],
  );
  // No check-in happens meanwhile and the service clock stands still: only a fast failure answers.
  const response = await within(
    "the sync call's answer",
    30_000,
    sys.call("POST", passthroughPath(eu.endUserId), { body: READ }),
  );
  return { response, connectionErrors };
}

test("LEDGER_COMPANY_FILE_NOT_FOUND: the file was moved and the application runs without a file open (0x80040406, then 0x80040417)", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Moved Co" });
  const { response, connectionErrors } = await failedOpen(sys, eu, () => {
    eu.ledger.moveCompanyFile(eu.companyFilePath, "D:\\Elsewhere\\Moved Co.qbw");
    eu.ledger.closeCompanyFile({ applicationStaysOpen: true });
  });
  // The remembered path is gone; the service tries the file open now, and there is none.
  assert.deepEqual(connectionErrors, ["0x80040406", "0x80040417"]);
  const error = await assertError(response, "LEDGER_COMPANY_FILE_NOT_FOUND", "0x80040417");
  assert.equal(error.outcome, "not_applicable", "the call is a read");
  const stored = await storedRequest(sys, error.requestId);
  assert.equal(stored.status, "failed");
  assert.equal(stored.outcome, "not_applicable");
  assert.equal(stored.sentAt, null, "nothing was handed to the connector");
  assert.equal(stored.error?.code, "LEDGER_COMPANY_FILE_NOT_FOUND");
  assert.equal(stored.error?.integrationCode, "0x80040417");
  const connection = await connectionOf(sys, eu.endUserId);
  assert.equal(connection.statusReason, "LEDGER_COMPANY_FILE_NOT_FOUND");
});

test("LEDGER_COMPANY_FILE_NOT_FOUND: the file was moved and the application is closed (0x80040406, then 0x80040416); the first failure is what the end user must fix", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Moved Closed Co" });
  const { response, connectionErrors } = await failedOpen(sys, eu, () => {
    eu.ledger.moveCompanyFile(eu.companyFilePath, "D:\\Elsewhere\\Moved Closed Co.qbw");
    eu.ledger.closeCompanyFile();
  });
  // With the application closed there is no open file to fall back on: that is not the cause.
  assert.deepEqual(connectionErrors, ["0x80040406", "0x80040416"]);
  const error = await assertError(response, "LEDGER_COMPANY_FILE_NOT_FOUND", "0x80040406");
  const stored = await storedRequest(sys, error.requestId);
  assert.equal(stored.error?.code, "LEDGER_COMPANY_FILE_NOT_FOUND");
  const connection = await connectionOf(sys, eu.endUserId);
  assert.equal(connection.statusReason, "LEDGER_COMPANY_FILE_NOT_FOUND");
});

test("LEDGER_ADMIN_REQUIRED: a first access that only the administrator can grant (0x80040418)", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Admin Co" });
  const { response, connectionErrors } = await failedOpen(sys, eu, () =>
    eu.ledger.setFault({ kind: "admin_required" }),
  );
  assert.deepEqual(connectionErrors, ["0x80040418"], "no other path can cure a permission refusal");
  const error = await assertError(response, "LEDGER_ADMIN_REQUIRED", "0x80040418");
  assert.equal(error.outcome, "not_applicable", "the call is a read");
  assert.ok(
    error.fixes.some((fix) => fix.actor === "end_user"),
    "the end user is told what to do",
  );
  const stored = await storedRequest(sys, error.requestId);
  assert.equal(stored.status, "failed");
  assert.equal(stored.error?.code, "LEDGER_ADMIN_REQUIRED");
  assert.equal(stored.error?.integrationCode, "0x80040418");
  assert.equal((await connectionOf(sys, eu.endUserId)).status, "ledger_unavailable");
});

test("LEDGER_VERSION_UNSUPPORTED: an application older than message version 13.0 is refused at its first answer", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  // Its own application, so that it can be replaced by an older one.
  const eu = await sys.connectEndUser({ companyName: "Old Co", application: { xmlVersion: "16.0" } });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  eu.ledger.installVersion("12.0");
  await queueAsync(sys, eu.endUserId, READ);
  eu.connector.clearEvents();
  const report = await eu.connector.runSession();
  // The company file opened; the service refused what the application can speak.
  assert.equal(report.outcome, "closed_with_error", report.message);
  assert.match(report.message, /too old/);
  const sent = eu.connector.calls.find((c) => c.call.method === "sendRequestXML");
  assert.ok(sent?.call.method === "sendRequestXML" && sent.call.qbXMLMajorVers === "12");
  const response = await within(
    "the sync call's answer",
    30_000,
    sys.call("POST", passthroughPath(eu.endUserId), { body: READ }),
  );
  // No HRESULT: the service itself found the versions apart.
  const error = await assertError(response, "LEDGER_VERSION_UNSUPPORTED", null);
  const stored = await storedRequest(sys, error.requestId);
  assert.equal(stored.status, "failed");
  assert.equal(stored.error?.code, "LEDGER_VERSION_UNSUPPORTED");
  const connection = await connectionOf(sys, eu.endUserId);
  assert.equal(connection.status, "ledger_unavailable");
  assert.equal(connection.statusReason, "LEDGER_VERSION_UNSUPPORTED");
});

test("LEDGER_FEATURE_NOT_ENABLED: estimates turned off in the company file (status 3250)", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Features Co" });
  await bringOnline(sys, eu);
  eu.ledger.setFault({ kind: "feature_off", objects: ["Estimate"] });
  const response = await sys.call("GET", "/v1/ledger-desktop/estimates?limit=5", { endUserId: eu.endUserId });
  const error = await assertError(response, "LEDGER_FEATURE_NOT_ENABLED", "3250");
  const stored = await storedRequest(sys, error.requestId);
  assert.equal(stored.status, "failed");
  assert.equal(stored.outcome, "not_applicable", "a read");
  assert.equal(stored.error?.code, "LEDGER_FEATURE_NOT_ENABLED");
  assert.equal(stored.ledger.statusCode, 3250);
  assert.equal(stored.ledger.statusSeverity, "Error");
  assert.equal(stored.ledger.xmlVersion, "16.0");
  // Other features still answer.
  const customers = await sys.call("GET", "/v1/ledger-desktop/customers?limit=1", {
    endUserId: eu.endUserId,
  });
  assert.equal(customers.status, 200, await customers.text());
});

test("LEDGER_INSUFFICIENT_PERMISSION: the company file user may only read (status 3260); nothing is written", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Roles Co" });
  await bringOnline(sys, eu);
  eu.ledger.setFault({ kind: "restricted_user" });
  const response = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "Not Allowed Ltd" },
  });
  const error = await assertError(response, "LEDGER_INSUFFICIENT_PERMISSION", "3260");
  assert.equal(error.outcome, "not_applied");
  const stored = await storedRequest(sys, error.requestId);
  assert.equal(stored.status, "failed");
  assert.equal(stored.outcome, "not_applied");
  assert.equal(stored.error?.code, "LEDGER_INSUFFICIENT_PERMISSION");
  assert.equal(stored.ledger.statusCode, 3260);
  assert.equal(stored.ledger.statusSeverity, "Error");
  // Reads are still allowed, and they show the write changed nothing.
  const list = await sys.call("GET", "/v1/ledger-desktop/customers?fullNames=Not%20Allowed%20Ltd", {
    endUserId: eu.endUserId,
  });
  assert.equal(list.status, 200, await list.clone().text());
  assert.deepEqual((await json<{ data: unknown[] }>(list)).data, []);
});

test("LEDGER_RESPONSE_UNREADABLE: an answer cut short reaches a read's caller as 502; the Request keeps the error", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Garbled Co" });
  await bringOnline(sys, eu);
  eu.ledger.setFault({ kind: "truncated_answer", bytes: 120 });
  const response = await sys.call("GET", "/v1/ledger-desktop/customers?limit=1", { endUserId: eu.endUserId });
  const error = await assertError(response, "LEDGER_RESPONSE_UNREADABLE", null);
  assert.equal(error.retryable, true, "a read can be asked again");
  assert.equal(response.headers.get("svc-should-retry"), "true");
  const stored = await storedRequest(sys, error.requestId);
  assert.equal(stored.status, "failed");
  assert.equal(stored.outcome, "not_applicable");
  assert.equal(stored.error?.code, "LEDGER_RESPONSE_UNREADABLE");
  assert.equal(stored.ledger.statusCode, null, "no status could be read");
  // Once the application answers whole again, the same read succeeds.
  eu.ledger.setFault(null);
  const again = await sys.call("GET", "/v1/ledger-desktop/customers?limit=1", { endUserId: eu.endUserId });
  assert.equal(again.status, 200, await again.text());
});
