import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { findSession, moveSessionPhase, openSessions } from "../store/connector-sessions.ts";
import { OPEN_PHASES, SESSION_PHASES } from "./session/phases.ts";
import { hashSecret } from "../platform/secrets.ts";
import { findConnectionById } from "../store/connections.ts";
import {
  answerWith,
  applicationOf,
  handSetup,
  openSession,
  type HandSetup,
} from "../testing/hand-session.ts";
import { startSystem, type System } from "../testing/system.ts";
import { NOOP, TEXTS } from "./session.ts";

/**
 * The connector session state machine through HTTP and SOAP, driven call by call (the simulated
 * connector would always do the right thing). Time rules use the service's FakeClock. One service
 * for the file; every test has its own end user, connection and company file.
 */
const HOLD_MS = 150;

let system: System | undefined;
before(async () => {
  system = await startSystem(null, {
    // The offline window is not under test: jumps of the fake clock must not make the connector look away.
    config: {
      CONNECTOR_HOLD_MS: String(HOLD_MS),
      RATE_LIMIT_MAX: "1000000",
      CONNECTION_OFFLINE_AFTER_MS: "86400000",
    },
  });
});
after(() => system?.close());

type Setup = HandSetup;
const setUp = (): Promise<Setup> => handSetup(system, "Hand Co");

async function queue(s: Setup, body: string): Promise<string> {
  const res = await s.sys.call("POST", `/v1/end-users/${s.eu.endUserId}/passthrough/ledger_desktop`, {
    body,
    headers: { prefer: "respond-async" },
  });
  assert.equal(res.status, 202, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

interface RequestView {
  status: string;
  outcome: string;
  recovered: boolean;
  error: { code: string; integrationCode: string | null } | null;
  timeline: { status: string }[];
}

async function request(s: Setup, id: string): Promise<RequestView> {
  return (await (await s.sys.call("GET", `/v1/requests/${id}`)).json()) as RequestView;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    assert.ok(Date.now() - started < 30_000, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until the service holds a sendRequestXML (its idle timer sleeps on the fake clock). */
async function holding(s: Setup, before: number): Promise<void> {
  await s.sys.fakeClock?.untilSleepers(before + 1);
}

const READ = "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>";
const WRITE = (name: string): string =>
  `<CustomerAddRq><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`;

void describe("a ticket whose session the service ended", () => {
  const endings: {
    name: string;
    end: (s: Setup, ticket: string) => Promise<void>;
    text: string;
    closeText?: string;
  }[] = [
    {
      name: "a second authenticate with the same login",
      end: async (s) => void (await s.hand.authenticate()),
      text: TEXTS.replaced,
    },
    {
      name: "ticket expiry on the injected clock",
      end: async (s) => s.sys.fakeClock?.advance(s.sys.deps.config.CONNECTOR_TICKET_TTL_MS + 1),
      text: TEXTS.expired,
    },
    {
      name: "a held sendRequestXML dropped by the connector",
      end: async (s, ticket) => {
        const hangUp = new AbortController();
        const before = s.sys.fakeClock?.sleeperCount ?? 0;
        const held = s.hand.send(ticket, s.eu.companyFilePath, hangUp.signal).catch(() => "aborted");
        await holding(s, before);
        hangUp.abort();
        assert.equal(await held, "aborted");
        await until(
          "the session closed",
          async () => (await openSessions(s.sys.deps.db, s.eu.connectionId)).length === 0,
        );
      },
      text: TEXTS.hungUp,
    },
    {
      name: "the end of an idle session",
      end: async (s, ticket) => {
        const before = s.sys.fakeClock?.sleeperCount ?? 0;
        const held = s.hand.send(ticket, s.eu.companyFilePath);
        await holding(s, before);
        await s.sys.fakeClock?.advance(s.sys.deps.config.CONNECTOR_IDLE_CLOSE_MS);
        const closing = await held;
        assert.match(closing, /<HostQueryRq \/>/);
        assert.equal(await s.hand.receive(ticket, await answerWith(await applicationOf(s), closing)), 100);
      },
      text: TEXTS.ended,
      // The session ended cleanly: a late closeConnection is acknowledged as such.
      closeText: "OK",
    },
  ];

  for (const ending of endings) {
    void it(`${ending.name}: getLastError explains, receive is negative, send is "", close is polite`, async () => {
      const s = await setUp();
      const ticket = await openSession(s);
      await ending.end(s, ticket);
      assert.equal(await s.hand.lastError(ticket), ending.text);
      assert.ok((await s.hand.receive(ticket, "<QBXML />")) < 0, "receiveResponseXML is negative");
      assert.equal(await s.hand.send(ticket, s.eu.companyFilePath), "");
      // Never NoOp: that would make the connector pause and ask again, forever.
      assert.notEqual(await s.hand.lastError(ticket), NOOP);
      assert.equal(await s.hand.close(ticket), ending.closeText ?? ending.text);
      assert.equal(await s.hand.lastError(ticket), ending.text);
    });
  }

  void it("an unknown ticket is told so by getLastError and closeConnection", async () => {
    const s = await setUp();
    assert.equal(await s.hand.send("no-such-ticket"), "");
    assert.equal(await s.hand.lastError("no-such-ticket"), TEXTS.unknownTicket);
    assert.equal(await s.hand.receive("no-such-ticket", "<QBXML />"), -1);
    assert.equal(await s.hand.close("no-such-ticket"), TEXTS.unknownTicket);
  });
});

void it("a closed session is final: a write that raced its close does not rewrite what its connector is told", async () => {
  const s = await setUp();
  const ticket = await openSession(s);
  await s.hand.authenticate(); // a newer check-in replaces the session
  assert.equal(await s.hand.lastError(ticket), TEXTS.replaced);
  // What a hold ending on its timer writes from its snapshot, or a late closing answer: the
  // transitions start only from open phases, so neither moves a closed session.
  const db = s.sys.deps.db;
  assert.equal(await moveSessionPhase(db, hashSecret(ticket), OPEN_PHASES, null, { last_error: null }), null);
  assert.equal(
    await moveSessionPhase(db, hashSecret(ticket), ["closing"], "closed", { last_error: TEXTS.ended }),
    null,
  );
  assert.equal(await s.hand.lastError(ticket), TEXTS.replaced);
  assert.equal(await s.hand.close(ticket), TEXTS.replaced);
});

void describe("receiveResponseXML", () => {
  void it("with nothing handed over answers a negative value and getLastError says why", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    assert.equal(await s.hand.receive(ticket, '<?xml version="1.0" ?><QBXML><QBXMLMsgsRs /></QBXML>'), -2);
    assert.equal(await s.hand.lastError(ticket), TEXTS.unexpectedAnswer);
    assert.equal(await s.hand.close(ticket), TEXTS.unexpectedAnswer);
  });

  void it("an HRESULT instead of an answer fails the read with the mapped code and stops the session", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const id = await queue(s, READ);
    assert.match(await s.hand.send(ticket), /<CustomerQueryRq/);
    const dialog = "A modal dialog box is showing in the application.";
    assert.equal(await s.hand.receive(ticket, "", "0x80040414", dialog), -3);
    const failed = await request(s, id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.error?.code, "LEDGER_MODAL_DIALOG_OPEN");
    assert.equal(failed.error?.integrationCode, "0x80040414");
    assert.match(await s.hand.lastError(ticket), /close it so the sync can continue.*0x80040414/);
  });

  void it("a write refused unprocessed is not applied; after any other failure its outcome is unknown", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const refused = await queue(s, WRITE("Refused"));
    assert.match(await s.hand.send(ticket), /newMessageSetID/);
    assert.equal(await s.hand.receive(ticket, "", "0x80040400", "parse error"), -3);
    const notApplied = await request(s, refused);
    assert.equal(notApplied.status, "failed");
    assert.equal(notApplied.outcome, "not_applied");
    assert.equal(notApplied.error?.code, "LEDGER_REQUEST_ERROR");

    const next = await s.hand.ticket();
    await s.hand.send(next, s.eu.companyFilePath);
    const maybe = await queue(s, WRITE("Maybe"));
    assert.match(await s.hand.send(next), /newMessageSetID/);
    assert.equal(await s.hand.receive(next, "", "0x80040401", "Could not access the application."), -3);
    const unknown = await request(s, maybe);
    assert.equal(unknown.status, "outcome_unknown");
    assert.equal(unknown.outcome, "unknown");
  });

  void it("a zero HRESULT with an answer is an answer", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const id = await queue(s, READ);
    const xml = await s.hand.send(ticket);
    assert.equal(
      await s.hand.receive(ticket, await answerWith(await applicationOf(s), xml), "0x00000000"),
      50,
    );
    assert.equal((await request(s, id)).status, "succeeded");
  });
});

void describe("sendRequestXML again before the answer (the answer was lost)", () => {
  void it("a read fails LEDGER_READ_INTERRUPTED and the next request is handed over in the same call", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const first = await queue(s, READ);
    const second = await queue(s, "<AccountQueryRq><MaxReturned>1</MaxReturned></AccountQueryRq>");
    assert.match(await s.hand.send(ticket), /<CustomerQueryRq/);
    // The very call that reveals the lost answer is handed the next request (no hold, no "").
    assert.match(await s.hand.send(ticket), /<AccountQueryRq/);
    const interrupted = await request(s, first);
    assert.equal(interrupted.status, "failed");
    assert.equal(interrupted.error?.code, "LEDGER_READ_INTERRUPTED");
    assert.deepEqual(
      interrupted.timeline.map((e) => e.status),
      ["queued", "sent", "failed"],
    );
    assert.equal((await request(s, second)).status, "sent");
  });

  void it("a write becomes outcome_unknown and its recovery query is handed over at once", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const app = await applicationOf(s);
    const file = s.sys.ledger.companyFile(s.eu.companyFilePath);
    const before = file.count("Customer");
    const id = await queue(s, WRITE("Lost Answer Ltd"));
    const write = await s.hand.send(ticket);
    const messageSetId = /newMessageSetID="([^"]+)"/.exec(write)?.[1];
    assert.ok(messageSetId);
    await answerWith(app, write); // applied; the answer never reaches the service
    assert.equal(file.count("Customer"), before + 1);
    const recovery = await s.hand.send(ticket);
    assert.match(recovery, new RegExp(`oldMessageSetID="${messageSetId}"`));
    assert.equal((await request(s, id)).status, "outcome_unknown");
    assert.equal(await s.hand.receive(ticket, await answerWith(app, recovery)), 50);
    const done = await request(s, id);
    assert.equal(done.status, "succeeded");
    assert.equal(done.recovered, true);
    assert.equal(done.outcome, "applied");
    assert.equal(file.count("Customer"), before + 1, "never sent twice");
  });

  void it("a recovery answer that proves nothing leaves the write unknown and stops the session", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const id = await queue(s, WRITE("Unproven"));
    await s.hand.send(ticket);
    assert.match(await s.hand.send(ticket), /oldMessageSetID/);
    assert.equal(await s.hand.receive(ticket, "", "0x80040414", "dialog"), -3);
    assert.equal((await request(s, id)).status, "outcome_unknown");
    const next = await s.hand.ticket();
    await s.hand.send(next, s.eu.companyFilePath).catch(() => "");
    assert.match(await s.hand.send(next), /oldMessageSetID/);
    assert.equal(await s.hand.receive(next, "<not-a-response/>"), -3);
    assert.equal((await request(s, id)).status, "outcome_unknown", "an unreadable answer proves nothing");
  });
});

void describe("an idle session ends cleanly", () => {
  void it("with the closing query answered by 100, and no error text", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const before = s.sys.fakeClock?.sleeperCount ?? 0;
    const held = s.hand.send(ticket);
    await holding(s, before);
    await s.sys.fakeClock?.advance(s.sys.deps.config.CONNECTOR_IDLE_CLOSE_MS);
    const closing = await held;
    assert.equal(await s.hand.receive(ticket, await answerWith(await applicationOf(s), closing)), 100);
    assert.equal(await s.hand.close(ticket), "OK");
    assert.equal((await openSessions(s.sys.deps.db, s.eu.connectionId)).length, 0);
  });

  void it("but goes on when work arrived while the closing query was out", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const app = await applicationOf(s);
    const before = s.sys.fakeClock?.sleeperCount ?? 0;
    const held = s.hand.send(ticket);
    await holding(s, before);
    await s.sys.fakeClock?.advance(s.sys.deps.config.CONNECTOR_IDLE_CLOSE_MS);
    const closing = await held;
    const id = await queue(s, READ);
    assert.equal(await s.hand.receive(ticket, await answerWith(app, closing)), 50);
    assert.match(await s.hand.send(ticket), /<CustomerQueryRq/);
    assert.equal((await request(s, id)).status, "sent");
  });
});

void describe("connectionError", () => {
  void it("retries the file that is open once when the remembered one is wrong, then says done", async () => {
    const s = await setUp();
    await s.hand.close(await openSession(s)); // the connection now remembers the company file path
    await queue(s, READ); // work waits, so authenticate opens a session
    const [ticket, path] = await s.hand.authenticate();
    assert.equal(path, s.eu.companyFilePath);
    assert.ok(ticket);
    assert.equal(await s.hand.connectionError(ticket, "0x8004040A", "Another file is open."), "");
    assert.equal(await s.hand.connectionError(ticket, "0x8004040A", "Another file is open."), "done");
    const connection = await findConnectionById(s.sys.deps.db, s.eu.connectionId);
    assert.equal(connection?.status, "company_file_mismatch");
    assert.equal(connection?.status_reason, "LEDGER_WRONG_COMPANY_FILE_OPEN");
    assert.equal(connection?.last_connection_error_code, "0x8004040A");
    assert.equal(connection?.company_file_path, s.eu.companyFilePath, "the remembered path is kept");
    assert.match(await s.hand.lastError(ticket), /0x8004040A/);
  });

  void it("says done at once when no other path can help", async () => {
    const s = await setUp();
    const ticket = await s.hand.ticket();
    assert.equal(await s.hand.connectionError(ticket, "0x80040408", "Could not start."), "done");
    assert.equal(
      (await findConnectionById(s.sys.deps.db, s.eu.connectionId))?.status_reason,
      "LEDGER_CANNOT_START",
    );
  });

  void it("a sync call then fails fast with the connection's error instead of waiting for its timeout", async () => {
    const s = await setUp();
    await s.hand.close(await openSession(s));
    await queue(s, READ);
    const ticket = await s.hand.ticket();
    assert.equal(await s.hand.connectionError(ticket, "0x80040408", "Could not start."), "done");
    const res = await s.sys.call("POST", `/v1/end-users/${s.eu.endUserId}/passthrough/ledger_desktop`, {
      body: READ,
    });
    assert.equal(res.status, 503, await res.clone().text());
    const body = (await res.json()) as { error: { code: string; integrationCode: string } };
    assert.equal(body.error.code, "LEDGER_CANNOT_START");
    assert.equal(body.error.integrationCode, "0x80040408");
  });

  void it("keeps the company file path the connector reports, so the next authenticate names it", async () => {
    const s = await setUp();
    await s.hand.close(await openSession(s));
    const moved = "D:\\Moved\\Hand Co.qbw";
    await queue(s, READ);
    const [ticket] = await s.hand.authenticate();
    assert.ok(ticket);
    assert.equal(await s.hand.connectionError(ticket, "0x80040406", "File not found."), "");
    assert.match(await s.hand.send(ticket, moved), /<CustomerQueryRq/);
    await s.hand.close(ticket);
    await queue(s, READ);
    assert.deepEqual((await s.hand.authenticate()).slice(1), [moved]);
  });
});

void describe("the connector's ask right after an answer (claimed without reading the session, decision 0027)", () => {
  void it("hands over the next request at once", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    const first = await queue(s, READ);
    const second = await queue(s, READ);
    const app = await applicationOf(s);
    const document = await s.hand.send(ticket);
    assert.match(document, /CustomerQueryRq/);
    assert.equal(await s.hand.receive(ticket, await answerWith(app, document)), 50);
    assert.equal((await request(s, first)).status, "succeeded");
    assert.match(await s.hand.send(ticket), /CustomerQueryRq/);
    assert.equal((await request(s, second)).status, "sent");
  });

  for (const change of [
    {
      name: "closed by another instance",
      apply: { phase: "closed" as const, closed_at: new Date(), last_error: TEXTS.replaced },
    },
    { name: "taken over by another instance", apply: { phase: null, instance_id: "inst_elsewhere" } },
  ]) {
    void it(`hands over nothing once the session was ${change.name} in between`, async () => {
      const s = await setUp();
      const ticket = await openSession(s);
      await queue(s, READ);
      const second = await queue(s, READ);
      const app = await applicationOf(s);
      const document = await s.hand.send(ticket);
      assert.equal(await s.hand.receive(ticket, await answerWith(app, document)), 50);
      // Behind this instance's back (it remembers the session as it was at the answer).
      const { phase, ...written } = change.apply;
      await moveSessionPhase(s.sys.deps.db, hashSecret(ticket), SESSION_PHASES, phase, written);
      const next = s.hand.send(ticket);
      if (phase === "closed") assert.equal(await next, "", "a closed session gets nothing");
      // A session another instance holds is taken back by this one the usual way (read first), then served.
      else assert.match(await next, /CustomerQueryRq/);
      assert.equal(
        (await request(s, second)).status,
        phase === "closed" ? "queued" : "sent",
        "handed over only through a session read first",
      );
      const session = await findSession(s.sys.deps.db, hashSecret(ticket));
      if (phase !== "closed")
        assert.equal(
          session?.instance_id,
          s.sys.deps.instanceId,
          "this instance took the session back first",
        );
    });
  }

  void it("hands over nothing once a newer check-in replaced the session in between", async () => {
    const s = await setUp();
    const ticket = await openSession(s);
    await queue(s, READ);
    const second = await queue(s, READ);
    const app = await applicationOf(s);
    const document = await s.hand.send(ticket);
    assert.equal(await s.hand.receive(ticket, await answerWith(app, document)), 50);
    // The connector's session is replaced before its next ask (a second computer checks in).
    await s.hand.authenticate();
    assert.equal(await s.hand.send(ticket), "", "the replaced session gets nothing");
    assert.equal(await s.hand.lastError(ticket), TEXTS.replaced);
    assert.equal((await request(s, second)).status, "queued", "the next request waits for the new session");
  });
});
