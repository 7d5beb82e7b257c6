import assert from "node:assert/strict";
import { test } from "node:test";
import { sweepOnce } from "../../src/requests/sweeper.ts";
import { createApiKey, createProject } from "../../src/tenancy/api-keys.ts";
import type { ConnectionHistoryResource } from "../../src/connections/history.ts";
import type { RequestMessagesResource } from "../../src/requests/messages.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import { bringOnline, connectionOf, E2E_CONFIG, json, stopConnector, type ErrorBody } from "./helpers.ts";
import { queueRead, untilStatus } from "./waiting-helpers.ts";

/**
 * The operator's views (issue 18, decision 0028) through the public API: a connection's status
 * history with its availability strip (`GET /v1/end-users/{id}/connection-history`) and a
 * Request's XML message and answer with secrets masked (`GET /v1/requests/{id}/messages`). The
 * service clock is a FakeClock; the background sweep is pushed out of the way and run by hand.
 */
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const CONFIG = {
  config: { ...E2E_CONFIG.config, SWEEP_INTERVAL_MS: String(365 * DAY) },
};

async function history(sys: System, endUserId: string, query = ""): Promise<ConnectionHistoryResource> {
  const response = await sys.call("GET", `/v1/end-users/${endUserId}/connection-history${query}`);
  assert.equal(response.status, 200, await response.clone().text());
  return json<ConnectionHistoryResource>(response);
}

async function rejected(response: Response, code: string, param: string): Promise<void> {
  const text = await response.clone().text();
  assert.equal(response.status, code === "RESOURCE_MISSING" ? 404 : 400, text);
  const { error } = await json<ErrorBody>(response);
  assert.equal(error.code, code, text);
  assert.equal(error.param, param, text);
}

const states = (h: ConnectionHistoryResource): string[] => h.availability.segments.map((s) => s.state);

test("a connection's status history and availability strip follow its connector, and age out", async (t) => {
  const sys = await startSystem(t, CONFIG);
  const clock = sys.fakeClock;
  assert.ok(clock);
  const eu = await sys.connectEndUser({ companyName: "History Co" });
  const before = await history(sys, eu.endUserId);
  assert.equal(before.status, "pending_setup");
  assert.deepEqual(before.changes, []);

  await bringOnline(sys, eu);
  await clock.advance(60 * MINUTE);
  await stopConnector(sys, eu);
  // Silent past the offline window: the API reads it offline before the sweep stores it, and the
  // strip counts the silence from where that reading does (last seen + the window).
  await clock.advance(10 * MINUTE);
  const unstored = await history(sys, eu.endUserId);
  assert.equal(unstored.status, "offline");
  assert.deepEqual(
    unstored.changes.map((c) => `${c.previousStatus}>${c.status}`),
    ["pending_setup>online"],
  );
  assert.deepEqual(states(unstored).slice(-2), ["online", "offline"]);
  const silenceStarts = Date.parse(unstored.availability.segments.at(-1)?.from ?? "");
  assert.ok(unstored.availability.seconds.offline > 0);

  assert.equal((await sweepOnce(sys.deps)).connectionsOffline, 1);
  const stored = await history(sys, eu.endUserId);
  assert.deepEqual(
    stored.changes.map((c) => [c.previousStatus, c.status, c.statusReason]),
    [
      ["online", "offline", "INTEGRATION_CONNECTION_NOT_ACTIVE"],
      ["pending_setup", "online", null],
    ],
  );
  assert.deepEqual(
    stored.availability,
    unstored.availability,
    "stored, the silence is dated where the reads began to show it (not at the sweep)",
  );
  assert.equal(Date.parse(stored.changes[0]?.changedAt ?? ""), silenceStarts);

  await clock.advance(30 * MINUTE);
  await bringOnline(sys, eu);
  await clock.advance(MINUTE);
  const back = await history(sys, eu.endUserId);
  assert.deepEqual(
    back.changes.map((c) => c.status),
    ["online", "offline", "online"],
    "newest first",
  );
  assert.deepEqual(states(back).slice(-3), ["online", "offline", "online"]);
  const [wentOnline, wentOffline] = back.changes.map((c) => Date.parse(c.changedAt));
  assert.equal(back.availability.seconds.offline, ((wentOnline ?? 0) - (wentOffline ?? 0)) / 1000);
  assert.ok(back.availability.seconds.offline >= 30 * 60, "at least the half hour it was away");
  const window = Date.parse(back.to) - Date.parse(back.from);
  const total = Object.values(back.availability.seconds).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - window / 1000) <= 3, "the segments cover the window");
  const limited = await history(sys, eu.endUserId, "?limit=1");
  assert.equal(limited.changes.length, 1);
  assert.equal(limited.hasMoreChanges, true);

  // Eight days later: the window (7 days) holds no change, and the strip is the status now.
  await stopConnector(sys, eu);
  await clock.advance(8 * DAY);
  const later = await history(sys, eu.endUserId);
  assert.deepEqual(later.changes, []);
  assert.equal(Date.parse(later.to) - Date.parse(later.from), 7 * DAY);
  // The history is kept for CONNECTION_HISTORY_RETENTION_MS (30 days), then the sweep deletes it.
  assert.equal((await history(sys, eu.endUserId, "?days=30")).changes.length, 3);
  await clock.advance(23 * DAY);
  const swept = await sweepOnce(sys.deps);
  // The three changes and the silence this same sweep stored, dated where it began 31 days ago
  // (three minutes after the connector's last call): all older than the retention.
  assert.equal(swept.statusChangesDeleted, 4);
  assert.deepEqual((await history(sys, eu.endUserId, "?days=30")).changes, []);
});

test("connection history: bad input is refused with its param; another project's end user is missing", async (t) => {
  const sys = await startSystem(t, CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Strict Co" });
  const path = `/v1/end-users/${eu.endUserId}/connection-history`;
  await rejected(await sys.call("GET", `${path}?days=0`), "INVALID_PARAMETER", "days");
  await rejected(await sys.call("GET", `${path}?days=31`), "INVALID_PARAMETER", "days");
  await rejected(await sys.call("GET", `${path}?days=2.5`), "INVALID_PARAMETER", "days");
  await rejected(await sys.call("GET", `${path}?limit=abc`), "INVALID_PARAMETER", "limit");
  await rejected(await sys.call("GET", `${path}?since=1`), "UNKNOWN_PARAMETER", "since");
  const theirs = await createProject(sys.deps, { name: "Theirs" });
  await rejected(await sys.call("GET", path, { key: theirs.keys.secretLive }), "RESOURCE_MISSING", "id");
  // A read-only key reads it.
  const readOnlyKey = await createApiKey(sys.deps, sys.project.project.id, {
    kind: "secret",
    mode: "live",
    readOnly: true,
  });
  const readOnly = await sys.call("GET", path, { key: readOnlyKey.secret });
  assert.equal(readOnly.status, 200, await readOnly.clone().text());
  // An end user with no connection yet answers an empty history.
  const bare = await json<{ id: string }>(
    await sys.call("POST", "/v1/end-users", { body: { companyName: "Bare Co", sourceId: "bare-1" } }),
  );
  const empty = await history(sys, bare.id);
  assert.equal(empty.connectionId, null);
  assert.deepEqual(empty.availability.segments, []);
});

const CARD = "4111111111111111";

test("a Request's XML message and answer, with the card number masked; another project's Request is missing", async (t) => {
  const sys = await startSystem(t, CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Cards Co" });
  await bringOnline(sys, eu);
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "Card Holder", creditCard: { number: CARD, expirationMonth: 12, expirationYear: 2031 } },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const requestId = created.headers.get("svc-request-id");
  assert.ok(requestId);
  const response = await sys.call("GET", `/v1/requests/${requestId}/messages`);
  const text = await response.clone().text();
  assert.equal(response.status, 200, text);
  assert.ok(!text.includes(CARD) && !text.includes(CARD.slice(0, 8)), "the card number is never shown");
  const messages = await json<RequestMessagesResource>(response);
  assert.equal(messages.requestId, requestId);
  assert.deepEqual(messages.input, {
    json: {
      body: {
        name: "Card Holder",
        creditCard: { number: "••••••••••••1111", expirationMonth: 12, expirationYear: 2031 },
      },
    },
    redactedValues: 1,
  });
  assert.match(messages.message.xml ?? "", /<CustomerAddRq>/);
  assert.match(messages.message.xml ?? "", /<CreditCardNumber>•{12}1111<\/CreditCardNumber>/);
  assert.match(messages.message.xml ?? "", /newMessageSetID="/, "the document as handed over");
  assert.ok(messages.message.redactedValues >= 1);
  assert.match(messages.answer.xml ?? "", /<CustomerAddRs statusCode="0"/);
  assert.match(messages.answer.xml ?? "", /<Name>Card Holder<\/Name>/);
  assert.ok((messages.answer.bytes ?? 0) > 0);
  assert.ok(messages.answer.receivedAt);

  // A typed read's input is its query as validated.
  const listed = await sys.call("GET", "/v1/ledger-desktop/customers?limit=5&nameContains=Card", {
    endUserId: eu.endUserId,
  });
  assert.equal(listed.status, 200, await listed.clone().text());
  const read = await json<RequestMessagesResource>(
    await sys.call("GET", `/v1/requests/${listed.headers.get("svc-request-id")}/messages`),
  );
  assert.deepEqual(read.input.json, { query: { limit: 5, nameContains: "Card" } });
  assert.match(read.message.xml ?? "", /<NameFilter>/);

  const theirs = await createProject(sys.deps, { name: "Theirs" });
  const foreign = await sys.call("GET", `/v1/requests/${requestId}/messages`, {
    key: theirs.keys.secretLive,
  });
  await rejected(foreign, "RESOURCE_MISSING", "id");
  const test_ = await sys.call("GET", `/v1/requests/${requestId}/messages`, {
    key: sys.project.keys.secretTest,
  });
  await rejected(test_, "RESOURCE_MISSING", "id");
  await rejected(
    await sys.call("GET", `/v1/requests/${requestId}/messages?raw=1`),
    "UNKNOWN_PARAMETER",
    "raw",
  );
});

test("a waiting Request shows its message and no answer yet; an answer larger than REQUEST_ANSWER_KEEP_BYTES keeps its size only", async (t) => {
  const sys = await startSystem(t, { config: { ...CONFIG.config, REQUEST_ANSWER_KEEP_BYTES: "200" } });
  const eu = await sys.connectEndUser({ companyName: "Waiting Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const queued = await queueRead(sys, eu);
  const waiting = await json<RequestMessagesResource>(
    await sys.call("GET", `/v1/requests/${queued}/messages`),
  );
  assert.match(waiting.message.xml ?? "", /<CustomerQueryRq>/);
  assert.match(waiting.message.note ?? "", /Not sent yet/);
  assert.equal(waiting.input.json, null, "a passthrough's input is its XML");
  assert.equal(waiting.answer.xml, null);
  assert.equal(waiting.answer.note, "Not sent to the application.");

  await bringOnline(sys, eu);
  await untilStatus(sys, queued, "succeeded");
  const done = await json<RequestMessagesResource>(await sys.call("GET", `/v1/requests/${queued}/messages`));
  assert.equal(done.message.note, null);
  assert.equal(done.answer.xml, null);
  assert.ok((done.answer.bytes ?? 0) > 200, "its size is kept");
  assert.match(done.answer.note ?? "", /more than REQUEST_ANSWER_KEEP_BYTES/);
  assert.equal((await connectionOf(sys, eu.endUserId)).status, "online");
});
