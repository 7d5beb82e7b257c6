import type { ApplicationSession } from "../../src/simulator/application.ts";
import assert from "node:assert/strict";
import { hashSecret } from "../../src/platform/secrets.ts";
import { openSessions } from "../../src/store/connector-sessions.ts";
import type { SessionReport, SimulatedWebConnector } from "../../src/simulator/web-connector.ts";
import { SoapByHand } from "../../src/testing/soap-by-hand.ts";
import type { ConnectedEndUser, System } from "../../src/testing/system.ts";

/** Polls (real time, bounded) until `check` returns a value; the bound only ends a failing wait (a loaded CI machine is slow). */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    assert.ok(Date.now() - started < timeoutMs, `timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

export async function connectionOf(
  sys: System,
  endUserId: string,
  key?: string,
): Promise<{ status: string; statusReason: string | null }> {
  const response = await sys.call("GET", `/v1/end-users/${endUserId}`, key === undefined ? {} : { key });
  const body = (await response.json()) as {
    integrationConnections: { status: string; statusReason: string | null }[];
  };
  const connection = body.integrationConnections[0];
  assert.ok(connection, "end user has a connection");
  return connection;
}

/** Starts the simulated connector and waits until the connection is online. */
export async function bringOnline(sys: System, eu: ConnectedEndUser): Promise<void> {
  eu.connector.start();
  await eventually(
    "connection online",
    async () => (await connectionOf(sys, eu.endUserId, eu.key)).status === "online",
  );
}

/** Moves the service's fake clock forward in steps until `pending` settles (real-time bounded). */
export async function advanceUntil<T>(
  sys: System,
  pending: Promise<T>,
  stepMs = 1000,
  maxSteps = 400,
): Promise<T> {
  let settled = false;
  const tracked = pending.finally(() => {
    settled = true;
  });
  for (let i = 0; i < maxSteps && !settled; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (!settled) await sys.fakeClock?.advance(stepMs);
  }
  return tracked;
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

export const passthroughPath = (endUserId: string): string =>
  `/v1/end-users/${endUserId}/passthrough/ledger_desktop`;

export const customerAdd = (name: string): string =>
  `<CustomerAddRq><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`;

/** The API's error object as the e2e files read it (spec "Errors"). */
export interface ErrorBody {
  error: {
    code: string;
    type: string;
    httpStatusCode: number;
    retryable: boolean;
    outcome: string;
    requestId: string;
    message: string;
    param: string | null;
    fixes: { actor: string; action: string }[];
    details: Record<string, unknown>;
  };
}

export interface RequestResource {
  id: string;
  status: string;
  outcome: string;
  recovered: boolean;
  previousRequestId: string | null;
  waitingReason: string | null;
  error: { code: string } | null;
  result: { xml?: string } | null;
  timeline: { status: string }[];
  connectionId: string | null;
  sentAt: string | null;
  queuePosition: number | null;
}

/** Stops the simulated connector and waits until the service has seen it hang up. */
export async function stopConnector(sys: System, eu: ConnectedEndUser): Promise<void> {
  // A held sendRequestXML that is hung up ends its session once the service notices; until then
  // the service could still hand it a request. With no call held, nothing can be handed over.
  const held = eu.connector.callInFlight === "sendRequestXML";
  await eu.connector.stop();
  // Only a session of the connector's last ticket can end here; one whose ticket it never received
  // (stopped inside authenticate) is left to idle out.
  const ticket = lastTicket(eu.connector);
  if (ticket === undefined) return;
  const digest = hashSecret(ticket);
  const ended = async (): Promise<boolean> =>
    !(await openSessions(sys.deps.db, eu.connectionId)).some((session) => session.ticket_hash === digest);
  if (held && (await eventually("the service saw the connector hang up", ended, 10_000).catch(() => false)))
    return;
  if (await ended()) return;
  // Still open when the hold ended ("" written) just before the connector hung up, or when it was
  // stopped in another call or between calls (receiveResponseXML answered, the next ask never
  // made): the service has no hang-up to notice, and the session would stay open until it idles
  // out. The connector is gone either way, so its session is closed as the connector would close it.
  await SoapByHand.for(sys, eu).close(ticket);
  // A bound, not a timing claim: on a loaded 2-core machine this can take seconds.
  await eventually("the connector's session ended", ended);
}

/** The ticket of the connector's latest session (from its last authenticate). */
function lastTicket(connector: SimulatedWebConnector): string | undefined {
  const auth = connector.calls.filter((c) => c.type === "call" && c.call.method === "authenticate").at(-1);
  return auth?.type === "call" && Array.isArray(auth.result) ? auth.result[0] : undefined;
}

/** End-to-end configuration: short real-time holds; polling tests must not hit the rate limit. */
export const E2E_CONFIG = { config: { CONNECTOR_HOLD_MS: "300", RATE_LIMIT_MAX: "1000000" } };

/** Waits until the newest request of the project is in `status` (real-time bounded). */
export async function newestRequestIs(sys: System, status: string): Promise<void> {
  await eventually(`newest request ${status}`, async () => {
    const list = (await (await sys.call("GET", "/v1/requests?limit=1")).json()) as {
      data: { status: string }[];
    };
    return list.data[0]?.status === status;
  });
}

/** The smallest read: one customer. */
export const READ = "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>";

/** A Request with its error, read through the API. */
export async function requestById(
  sys: System,
  id: string,
): Promise<RequestResource & { error: { code: string; integrationCode: string | null } | null }> {
  return json(await sys.call("GET", `/v1/requests/${id}`));
}

/** Queues an async passthrough call and returns its Request ID. */
export async function queueAsync(sys: System, endUserId: string, body: string): Promise<string> {
  const res = await sys.call("POST", passthroughPath(endUserId), {
    body,
    headers: { prefer: "respond-async" },
  });
  assert.equal(res.status, 202, await res.clone().text());
  return (await json<RequestResource>(res)).id;
}

/**
 * A promise that must settle within `ms` of real time, else the test fails naming `what`: a bound
 * generous enough for a loaded machine, against behaviour that would otherwise never end.
 */
export async function within<T>(what: string, ms: number, pending: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The report of the simulated connector's last finished session. */
export function lastReport(connector: SimulatedWebConnector): SessionReport | undefined {
  const last = connector.events.filter((e) => e.type === "session_ended").at(-1);
  return last?.type === "session_ended" ? last.report : undefined;
}

/** A JSON answer: its status and parsed body (`{}` when empty), its `Svc-Request-Id` and `Location`. */
export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
  /** `Svc-Request-Id` (a Request's ID for an application operation; "" when absent). */
  requestId: string;
  location: string | null;
}

/** Calls an application operation as the end user `eu` and reads its JSON answer. */
export async function callAsEndUser(
  sys: System,
  eu: ConnectedEndUser,
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer> {
  const response = await sys.call(method, path, {
    endUserId: eu.endUserId,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
    requestId: response.headers.get("svc-request-id") ?? "",
    location: response.headers.get("location"),
  };
}

/** Asserts an answer's status (showing its body when it differs); returns the body. */
export function assertAnswered(answer: JsonAnswer, status: number, label: string): Record<string, unknown> {
  assert.equal(answer.status, status, `${label}: ${JSON.stringify(answer.body).slice(0, 2000)}`);
  return answer.body;
}

/** Number of Request rows in the system's store (every project and mode). */
export async function countRequests(sys: System): Promise<number> {
  const row = await sys.deps.db
    .selectFrom("requests")
    .select(sys.deps.db.fn.countAll<string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Asserts a refusal: its status, catalogue code and `param`; returns the error body. */
export function assertRefused(
  answer: { status: number; body: Record<string, unknown> },
  status: number,
  code: string,
  param: string,
  label = "",
): Record<string, unknown> {
  assert.equal(answer.status, status, `${label} ${JSON.stringify(answer.body)}`);
  const error = answer.body.error as Record<string, unknown>;
  assert.deepEqual([error.code, error.param], [code, param], `${label} ${JSON.stringify(error)}`);
  return error;
}

/** The XML message the service handed the application for a Request (whitespace between tags dropped). */
export async function sentMessageOf(sys: System, requestId: string): Promise<string> {
  assert.match(requestId, /^req_/, "an application operation answers with its Request's ID");
  const response = await sys.call("GET", `/v1/requests/${requestId}/messages`);
  assert.equal(response.status, 200);
  const body = (await response.json()) as { message: { xml: string | null } };
  assert.ok(body.message.xml, "the message is kept");
  return body.message.xml.replace(/>\s+</g, "><");
}

/**
 * Another user of the end user's company file: a session of its own on the simulated application,
 * not through the service (changes the service learns of only by asking).
 */
export async function otherUserOf(sys: System, eu: ConnectedEndUser): Promise<ApplicationSession> {
  const opened = await eu.ledger.beginSession({
    companyFilePath: eu.companyFilePath,
    appName: "Another user",
    ownerId: "{00000000-0000-0000-0000-00000000c0fe}",
    fileId: "{00000000-0000-0000-0000-00000000f11e}",
    stampFileId: false,
  });
  assert.ok(opened.ok, `another user's session on ${sys.url}`);
  return opened.session;
}

/** Runs request messages as another user; returns the response document (no message may fail). */
export async function asOtherUser(session: ApplicationSession, messages: string): Promise<string> {
  const result = await session.processRequest(
    `<?xml version="1.0" encoding="utf-8"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError">${messages}</QBXMLMsgsRq></QBXML>`,
  );
  assert.ok(result.ok, JSON.stringify(result));
  assert.doesNotMatch(result.response, /statusSeverity="Error"/, result.response);
  return result.response;
}

/** The text of the first `<name>` element of an XML document. */
export function xmlText(xml: string, name: string): string {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  assert.ok(match, `${name} in ${xml.slice(0, 300)}`);
  return match[1] as string;
}

/**
 * A Request once it has settled for good (succeeded or failed: its stored answer recovered, all its
 * message sets run), asking the end user's connector to check in while it has not.
 */
export async function settledRequest(
  sys: System,
  eu: ConnectedEndUser,
  requestId: string | null,
): Promise<RequestResource & { result: Record<string, unknown> }> {
  assert.ok(requestId, "a Request ID");
  return eventually("the Request completed", async () => {
    const row = await json<RequestResource & { result: Record<string, unknown> }>(
      await sys.call("GET", `/v1/requests/${requestId}`),
    );
    if (row.status !== "succeeded" && row.status !== "failed") {
      void eu.connector.checkInNow();
      return null;
    }
    return row;
  });
}
