import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  answerWith,
  applicationOf,
  handSetup,
  openSession,
  type HandSetup,
} from "../testing/hand-session.ts";
import { startSystem, type ConnectedEndUser, type System } from "../testing/system.ts";

/**
 * The at-most-once branches of the answer path, driven call by call over SOAP (the simulated
 * connector would always do the right thing): an unreadable answer, an interrupted read, a
 * write that was sent and refused and is then retried with its Idempotency-Key. The company file
 * counts what was applied.
 */
let system: System | undefined;
before(async () => {
  system = await startSystem(null, {
    config: { CONNECTOR_HOLD_MS: "150", RATE_LIMIT_MAX: "1000000", CONNECTION_OFFLINE_AFTER_MS: "86400000" },
  });
});
after(() => system?.close());

type Setup = HandSetup;
const setUp = (): Promise<Setup> => handSetup(system, "Once Co");

const PASSTHROUGH = (eu: ConnectedEndUser): string =>
  `/v1/end-users/${eu.endUserId}/passthrough/ledger_desktop`;

async function queue(s: Setup, body: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await s.sys.call("POST", PASSTHROUGH(s.eu), {
    body,
    headers: { prefer: "respond-async", ...headers },
  });
  assert.equal(res.status, 202, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

interface RequestView {
  id: string;
  status: string;
  outcome: string;
  sentAt: string | null;
  error: { code: string; outcome: string } | null;
  timeline: { status: string }[];
}

async function request(s: Setup, id: string): Promise<RequestView> {
  return (await (await s.sys.call("GET", `/v1/requests/${id}`)).json()) as RequestView;
}

const READ = "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>";
const WRITE = (name: string): string =>
  `<CustomerAddRq><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`;

void describe("an answer that cannot be read", () => {
  void it("to a write: outcome_unknown, then its recovery query, never the write again", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const app = await applicationOf(s);
    const file = s.sys.ledger.companyFile(s.eu.companyFilePath);
    const beforeCount = file.count("Customer");
    const id = await queue(s, WRITE("Garbled Answer Ltd"));
    const write = await s.hand.send(ticket);
    const messageSetId = /newMessageSetID="([^"]+)"/.exec(write)?.[1];
    assert.ok(messageSetId);
    await answerWith(app, write); // applied; what reaches the service is garbage
    assert.equal(await s.hand.receive(ticket, "<QBXML><garbled"), 50);
    const unknown = await request(s, id);
    assert.equal(unknown.status, "outcome_unknown");
    assert.equal(unknown.outcome, "unknown");
    assert.equal(unknown.error?.code, "LEDGER_RESPONSE_UNREADABLE");
    const next = await s.hand.send(ticket);
    assert.match(next, new RegExp(`oldMessageSetID="${messageSetId}"`), "the recovery query, not the write");
    assert.doesNotMatch(next, /CustomerAddRq/, "the write is not in it");
    assert.equal(await s.hand.receive(ticket, await answerWith(app, next)), 50);
    const done = await request(s, id);
    assert.equal(done.status, "succeeded");
    assert.equal(done.outcome, "applied");
    assert.equal(file.count("Customer"), beforeCount + 1, "applied exactly once");
  });

  void it("to a read: failed LEDGER_RESPONSE_UNREADABLE, outcome not_applicable", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const id = await queue(s, READ);
    assert.match(await s.hand.send(ticket), /<CustomerQueryRq/);
    assert.equal(await s.hand.receive(ticket, "not xml at all"), 50);
    const failed = await request(s, id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.outcome, "not_applicable");
    assert.equal(failed.error?.code, "LEDGER_RESPONSE_UNREADABLE");
  });
});

void describe("a read whose session broke", () => {
  void it("replaced by a newer check-in: failed LEDGER_READ_INTERRUPTED, not_applicable, not re-sent", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const id = await queue(s, READ);
    assert.match(await s.hand.send(ticket), /<CustomerQueryRq/);
    const next = await s.hand.ticket(); // the connector started over without answering
    const interrupted = await request(s, id);
    assert.equal(interrupted.status, "failed");
    assert.equal(interrupted.outcome, "not_applicable");
    assert.equal(interrupted.error?.code, "LEDGER_READ_INTERRUPTED");
    assert.equal(await s.hand.send(next, s.eu.companyFilePath), "", "nothing is handed over again");
    assert.equal(await s.hand.receive(ticket, "<QBXML/>"), -1, "the old session's late answer is refused");
    assert.equal((await request(s, id)).status, "failed");
  });
});

void describe("an idempotent retry after a write that was sent and refused", () => {
  void it("replays the refusal: same Request, nothing queued or sent, nothing applied", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const file = s.sys.ledger.companyFile(s.eu.companyFilePath);
    const count = file.count("Customer");
    // The request processor refuses the message set without running it (a parse error HRESULT).
    const headers = { "idempotency-key": "refused-once" };
    const refused = await queue(s, WRITE("Refused Ltd"), headers);
    assert.match(await s.hand.send(ticket), /<CustomerAddRq/);
    assert.equal(await s.hand.receive(ticket, "", "0x80040400", "could not parse"), -3);
    const ended = await request(s, refused);
    assert.equal(ended.status, "failed");
    assert.equal(ended.outcome, "not_applied");
    assert.ok(ended.sentAt, "it reached the application");

    const again = await s.sys.call("POST", PASSTHROUGH(s.eu), {
      body: WRITE("Refused Ltd"),
      headers: { prefer: "respond-async", ...headers },
    });
    assert.equal(again.status, 202);
    const replay = (await again.json()) as RequestView;
    assert.equal(replay.id, refused, "the same Request, not a new attempt");
    assert.equal(replay.status, "failed");
    const sync = await s.sys.call("POST", PASSTHROUGH(s.eu), { body: WRITE("Refused Ltd"), headers });
    assert.equal(sync.headers.get("svc-request-id"), refused);
    // The refusal ended that session; the next one is handed nothing.
    const next = await s.hand.ticket();
    assert.equal(await s.hand.send(next, s.eu.companyFilePath), "", "nothing was queued for the connector");
    assert.equal(file.count("Customer"), count, "nothing applied");
    const list = (await (await s.sys.call("GET", `/v1/requests?endUserId=${s.eu.endUserId}`)).json()) as {
      data: unknown[];
    };
    assert.equal(list.data.length, 1, "no Request beyond the first attempt");
  });
});
