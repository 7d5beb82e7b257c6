import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { pino } from "pino";
import { startSystem, type ConnectedEndUser } from "../../src/testing/system.ts";
import { startWebhookReceiver, verifySignature } from "../../src/testing/webhook-receiver.ts";
import type { ChangeFeedChangesData } from "../../src/webhooks/event-types.ts";
import { bringOnline, eventually, json, passthroughPath } from "./helpers.ts";
import { storeDump } from "./store-dump.ts";
import { SYSTEM_CONFIG, endpointFor, ofType } from "./webhook-helpers.ts";

/**
 * Secrets on every path out and at rest (issue 23 rows 2 and 6, decision 0032), through HTTP, the
 * SOAP connector and the simulated application: card numbers and social security numbers sent in
 * typed creates, a batch, an idempotent replay and passthrough XML reach the company file in full,
 * yet no API answer (the sync answers, the Request, its list and messages view, list pages,
 * passthrough answers), no webhook or change feed event, no log line of the service (at trace
 * level) and no stored column (every table dumped as text) holds one. Runs on PGlite and, with
 * DATABASE_URL, on PostgreSQL.
 */
const CARDS = {
  customer: "4111111111111111",
  payment: "5500005555555559",
  batch: "340000000000009",
  passthrough: "6011000990139424",
  replay: "4012888888881881",
} as const;
const SSN = "123-45-6789";
/** Everything that must never be seen in full, with a prefix that a mask never keeps. */
const FULL = [...Object.values(CARDS), SSN];
const prefixes = FULL.map((value) => value.slice(0, value.length - 4));

/** The first secret found in `text` (whole or its leading part), or null. */
function leaked(text: string): string | null {
  for (const value of FULL) if (text.includes(value)) return value;
  for (const prefix of prefixes) if (text.includes(prefix)) return `${prefix}…`;
  return null;
}

function assertNoSecret(text: string, where: string): void {
  const found = leaked(text);
  assert.equal(found, null, `${where} holds ${found}:\n${text.slice(0, 2000)}`);
}

/** A logger at trace level whose lines the test reads. */
function capturedLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: "trace" }, sink), lines };
}

const card = (number: string) => ({ number, expirationMonth: 12, expirationYear: 2031 });

const paymentCard = (number: string) => ({
  request: { number, expirationMonth: 11, expirationYear: 2030, name: "Card Holder" },
  response: {
    statusCode: 0,
    statusMessage: "Approved",
    creditCardTransactionId: "TX-1",
    merchantAccountNumber: "M-1",
    paymentStatus: "completed",
    transactionAuthorizedAt: "2026-03-02T10:00:00-05:00",
  },
});

async function answered(response: Response, status: number, where: string): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, status, `${where}: ${text}`);
  assertNoSecret(text, where);
  return text;
}

/** The other user of the company file (a session on the simulated application itself). */
async function companyFileHolds(eu: ConnectedEndUser, query: string): Promise<string> {
  const opened = await eu.ledger.beginSession({
    companyFilePath: eu.companyFilePath,
    appName: "Auditor",
    ownerId: "{00000000-0000-0000-0000-00000000a0d1}",
    fileId: "{00000000-0000-0000-0000-00000000f11e}",
    stampFileId: false,
  });
  assert.ok(opened.ok);
  try {
    const result = await opened.session.processRequest(
      `<?xml version="1.0" encoding="utf-8"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError">${query}</QBXMLMsgsRq></QBXML>`,
    );
    assert.ok(result.ok, JSON.stringify(result));
    return result.response;
  } finally {
    opened.session.end();
  }
}

test("a card number reaches the company file in full, and no answer, event, log line or stored column", async (t) => {
  const { logger, lines } = capturedLogger();
  const sys = await startSystem(t, {
    ...SYSTEM_CONFIG,
    logger,
    changeFeed: true,
    config: { ...SYSTEM_CONFIG.config, CHANGE_FEED_TICK_MS: "5000", CHANGE_FEED_OVERLAP_SECONDS: "120" },
  });
  const receiver = await startWebhookReceiver(t);
  const endpoint = await endpointFor(sys, receiver.url, {
    eventTypes: ["request.*", "change_feed.changes"],
    includeSyncRequests: true,
  });
  const eu = await sys.connectEndUser({ companyName: "Cards Co" });
  await bringOnline(sys, eu);
  const as = { endUserId: eu.endUserId };

  // A change feed subscription: its background Requests read the customers (and their cards) back.
  await sys.fakeClock?.advance(Math.max(0, Date.now() - sys.clock.now()) + 1000);
  const subscription = await json<{ id: string }>(
    await sys.call("POST", "/v1/change-feed-subscriptions", {
      body: { resources: ["customers"], intervalMinutes: 1 },
    }),
  );
  await eventually("the connection has a poll", async () =>
    sys.deps.db
      .selectFrom("change_feed_polls")
      .select("polled_until")
      .where("subscription_id", "=", subscription.id)
      .executeTakeFirst(),
  );
  // The application's times have whole seconds: records are made from its next second on.
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 50));

  // A typed create (sync): the answer holds the card masked.
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    ...as,
    body: { name: "Card Holder", creditCard: card(CARDS.customer) },
  });
  const customer = JSON.parse(await answered(created, 201, "the create's answer")) as {
    id: string;
    creditCard: { number: string };
  };
  assert.equal(customer.creditCard.number, "••••••••••••1111");

  // An async create with a card transaction, then read as the Request resource.
  const queued = await sys.call("POST", "/v1/ledger-desktop/receive-payments", {
    ...as,
    headers: { prefer: "respond-async" },
    body: {
      customerId: customer.id,
      totalAmount: "10.00",
      isAutoApply: true,
      creditCardTransaction: paymentCard(CARDS.payment),
    },
  });
  const paymentRequest = JSON.parse(await answered(queued, 202, "the async create's answer")) as {
    id: string;
  };
  const payment = await eventually("the payment settled", async () => {
    const read = await sys.call("GET", `/v1/requests/${paymentRequest.id}`);
    const body = JSON.parse(await answered(read, 200, "GET /v1/requests/{id}")) as {
      status: string;
      result: { creditCardTransaction: { request: { number: string } } } | null;
    };
    return body.status === "succeeded" ? body : null;
  });
  assert.equal(payment.result?.creditCardTransaction.request.number, "••••••••••••5559");

  // A batch member, an employee's social security number, and an idempotent create replayed.
  const batch = await sys.call("POST", "/v1/ledger-desktop/batch", {
    ...as,
    body: {
      requests: [
        {
          operationId: "ledger.customers.create",
          body: { name: "Batch Holder", creditCard: card(CARDS.batch) },
        },
      ],
    },
  });
  assert.match(await answered(batch, 200, "the batch answer"), /"number":"•{11}0009"/);
  const employee = await sys.call("POST", "/v1/ledger-desktop/employees", {
    ...as,
    body: { firstName: "Pat", lastName: "Payroll", ssn: SSN },
  });
  assert.match(await answered(employee, 201, "the employee create"), /"ssn":"•{7}6789"/);
  const once = {
    ...as,
    headers: { "idempotency-key": "card-create-1" },
    body: { name: "Replay Holder", creditCard: card(CARDS.replay) },
  };
  const first = await sys.call("POST", "/v1/ledger-desktop/customers", once);
  await answered(first, 201, "the first call");
  const replayed = await sys.call("POST", "/v1/ledger-desktop/customers", once);
  assert.equal(replayed.headers.get("svc-request-id"), first.headers.get("svc-request-id"), "replayed");
  await answered(replayed, 201, "the replay");

  // Passthrough XML in and out: the answer comes back masked.
  const passthrough = await sys.call("POST", passthroughPath(eu.endUserId), {
    body:
      "<CustomerAddRq><CustomerAdd><Name>Raw Holder</Name><CreditCardInfo>" +
      `<CreditCardNumber>${CARDS.passthrough}</CreditCardNumber><ExpirationMonth>1</ExpirationMonth>` +
      "<ExpirationYear>2032</ExpirationYear></CreditCardInfo></CustomerAdd></CustomerAddRq>",
  });
  assert.match(
    await answered(passthrough, 200, "the passthrough answer"),
    /<CreditCardNumber>•{12}9424<\/CreditCardNumber>/,
  );

  // Reads: a list page, a passthrough query, the Request list and every Request's messages view.
  await answered(
    await sys.call("GET", "/v1/ledger-desktop/customers?limit=50", as),
    200,
    "the customers list",
  );
  await answered(
    await sys.call("POST", passthroughPath(eu.endUserId), {
      body: "<CustomerQueryRq><NameFilter><MatchCriterion>Contains</MatchCriterion><Name>Holder</Name></NameFilter></CustomerQueryRq>",
    }),
    200,
    "the passthrough query",
  );
  const requests = await sys.call("GET", "/v1/requests?limit=100");
  const listed = JSON.parse(await answered(requests, 200, "GET /v1/requests")) as { data: { id: string }[] };
  for (const { id } of listed.data) {
    await answered(await sys.call("GET", `/v1/requests/${id}`), 200, `GET /v1/requests/${id}`);
    await answered(await sys.call("GET", `/v1/requests/${id}/messages`), 200, `messages of ${id}`);
  }

  // The change feed's next poll reads the customers back and reports the new ones.
  await sys.fakeClock?.advance(60_000);
  await receiver.waitFor("a change feed event", (r) =>
    ofType(r, "change_feed.changes").some((w) =>
      (w.event.data as unknown as ChangeFeedChangesData).changes.some((c) => c.id === customer.id),
    ),
  );
  await eventually("the poll ended", async () => {
    const poll = await sys.deps.db
      .selectFrom("change_feed_polls")
      .select("started_at")
      .where("subscription_id", "=", subscription.id)
      .executeTakeFirst();
    return poll?.started_at === null;
  });
  for (const webhook of receiver.received) {
    verifySignature(endpoint.secret, webhook);
    assertNoSecret(webhook.body, `the ${webhook.event.type} webhook`);
  }
  assert.ok(ofType(receiver.received, "request.succeeded").length > 0, "request events were received");

  // The application got every value in full.
  const file = await companyFileHolds(eu, "<CustomerQueryRq/><ReceivePaymentQueryRq/><EmployeeQueryRq/>");
  for (const value of FULL) assert.ok(file.includes(value), `the company file holds ${value}`);

  // Nothing the service wrote or keeps holds one.
  assertNoSecret(lines.join(""), "the service's log");
  assert.ok(lines.length > 20, "the log was captured");
  assertNoSecret(await storeDump(sys.deps.db), "the store");
});
