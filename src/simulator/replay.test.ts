import assert from "node:assert/strict";
import { test } from "node:test";
import { ReplayApplication, comparable, readBundle, replayEntries, type BundleDocument } from "./replay.ts";
import { begin, requestXml, setup } from "./ledger/test-support.ts";

/**
 * The replay application on its own (the end-to-end replay is test/e2e/support-bundle-replay.test.ts):
 * an HRESULT the bundle recorded is played back, the comparison masks secrets and ignores the IDs
 * the service picks anew, and a recovery query gets the answer this replay gave.
 */
const CARD_ADD = (number: string, requestId: string) =>
  `<CustomerAddRq requestID="${requestId}"><CustomerAdd><Name>Card Co</Name><CreditCardInfo><CreditCardNumber>${number}</CreditCardNumber></CreditCardInfo></CustomerAdd></CustomerAddRq>`;

function bundleOf(
  requests: Array<{
    id: string;
    message: string;
    answer: string | null;
    error?: { code: string; integrationCode: string; message: string };
    timeline?: string[];
  }>,
): BundleDocument {
  return {
    bundleVersion: 1,
    endUser: { id: "eu_1" },
    requests: requests.map((r, i) => ({
      request: {
        id: r.id,
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        operationId: "endUsers.passthrough",
        method: "POST",
        path: "/v1/end-users/eu_1/passthrough/ledger_desktop",
        mode: "sync",
        status: r.error ? "failed" : "succeeded",
        outcome: r.error ? "not_applied" : "applied",
        sentAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        completedAt: null,
        recovered: false,
        timeline: (r.timeline ?? ["queued", "sent", "succeeded"]).map((status) => ({
          status,
          detail: null,
          elapsedMs: 0,
        })),
        error: r.error ?? null,
        waitingReason: null,
        timings: { ledgerMs: null },
      },
      messages: { input: { json: null }, message: { xml: r.message }, answer: { xml: r.answer } },
      sessionId: null,
    })),
  };
}

test("a recorded HRESULT is played back; secrets and the service's IDs do not count", async () => {
  const { app } = await setup();
  const recorded = requestXml(
    CARD_ADD("••••••••••••1111", "1"),
    'onError="stopOnError" newMessageSetID="old-set"',
  );
  const bundle = bundleOf([
    {
      id: "req_refused",
      message: recorded,
      answer: null,
      error: {
        code: "LEDGER_APPLICATION_BUSY",
        integrationCode: "0x80040414",
        message: "A modal dialog box is showing",
      },
    },
  ]);
  const replay = new ReplayApplication({
    fallback: app,
    entries: replayEntries(bundle),
    loseAnswer: () => {},
  });
  const session = await begin(replay);
  // The service sends the card in full, under new set and request IDs: the same message.
  const sent = requestXml(
    CARD_ADD("4111111111111111", "7"),
    'onError="stopOnError" newMessageSetID="new-set"',
  );
  assert.equal(comparable(sent), comparable(recorded));
  const result = await session.processRequest(sent);
  assert.deepEqual(result, { ok: false, hresult: "0x80040414", message: "A modal dialog box is showing" });
  assert.deepEqual(replay.played, ["req_refused"]);
  assert.deepEqual(replay.divergences, []);
});

test("a lost answer is kept for the recovery query; a message not held is a divergence", async () => {
  const { app } = await setup();
  const add = (name: string) =>
    `<CustomerAddRq requestID="1"><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`;
  const answer =
    '<?xml version="1.0" ?><QBXML><QBXMLMsgsRs newMessageSetID="old"><CustomerAddRs requestID="1" statusCode="0" statusSeverity="Info" statusMessage="Status OK"><CustomerRet><ListID>80000099-1</ListID><Name>Lost Co</Name></CustomerRet></CustomerAddRs></QBXMLMsgsRs></QBXML>';
  const bundle = bundleOf([
    {
      id: "req_lost",
      message: requestXml(add("Lost Co"), 'onError="stopOnError" newMessageSetID="old"'),
      answer,
      timeline: ["queued", "sent", "outcome_unknown", "succeeded"],
    },
  ]);
  const lost: boolean[] = [];
  const replay = new ReplayApplication({
    fallback: app,
    entries: replayEntries(bundle),
    loseAnswer: (write) => lost.push(write),
  });
  const session = await begin(replay);
  const first = await session.processRequest(
    requestXml(add("Lost Co"), 'onError="stopOnError" newMessageSetID="s1"'),
  );
  assert.deepEqual(lost, [true], "the connector is told to lose the answer of a write");
  assert.ok(
    first.ok && first.response.includes("80000099-1") && first.response.includes('newMessageSetID="s1"'),
  );
  const recovery = await session.processRequest(
    requestXml("", 'onError="stopOnError" oldMessageSetID="s1" newMessageSetID="s1"'),
  );
  assert.ok(
    recovery.ok && recovery.response.includes("80000099-1"),
    "the recovery query gets the same answer",
  );
  assert.match(recovery.ok ? recovery.response : "", /messageSetStatusCode="0"/);

  const other = await session.processRequest(requestXml(add("Unrecorded Co"), 'onError="stopOnError"'));
  assert.ok(other.ok && other.response.includes("Unrecorded Co"), "the simulator answered it");
  assert.equal(replay.divergences.length, 1);
  assert.match(replay.divergences[0]?.sent ?? "", /Unrecorded Co/);
  assert.equal(replay.divergences[0]?.expected, null, "the bundle holds nothing more");
});

test("a file that is not a bundle this replay reads is refused, naming the first place", () => {
  const good = bundleOf([{ id: "req_1", message: "<CustomerQueryRq />", answer: null }]);
  assert.deepEqual(readBundle(JSON.stringify(good)), good);
  const refused = (text: string, message: RegExp) => assert.throws(() => readBundle(text), message);
  refused("{", /not a support bundle: not JSON/);
  refused(JSON.stringify({ ...good, bundleVersion: 2 }), /bundleVersion: /);
  refused(JSON.stringify({ ...good, requests: [{ request: null }] }), /requests\.0\.request: /);
  const noTimeline = structuredClone(good) as unknown as {
    requests: Array<{ request: Record<string, unknown> }>;
  };
  delete noTimeline.requests[0]?.request.timeline;
  refused(JSON.stringify(noTimeline), /requests\.0\.request\.timeline: /);
  refused(JSON.stringify({ ...good, endUser: "eu_1" }), /endUser: /);
});
