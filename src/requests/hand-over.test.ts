import assert from "node:assert/strict";
import { test } from "node:test";
import { readAnswer } from "../ledger/xml/answer.ts";
import { handOverDocument } from "../ledger/xml/message-set.ts";
import { documentsParsed } from "../ledger/xml/parse.ts";
import { SimulatedLedgerApplication } from "../simulator/ledger/index.ts";
import { findRequestById } from "../store/requests.ts";
import { buildTestApp, type TestApp } from "../testing/harness.ts";
import { connectionOf, queueRequest, type QueueTarget } from "../testing/queue.ts";
import { completeFromAnswer, interruptSent, nextWork, resolveRecovery } from "./engine.ts";

/**
 * A Request keeps its messages as data until the hand-over, which builds the document once with the
 * session's version and the write's message set ID (issue 14); rows stored before that (migration
 * 0014: the whole document, `request_on_error` null) are still handed over correctly. Each answer
 * is parsed once on its way to the Request: the decoders read the engine's tree.
 */
const ADD = `<CustomerAddRq requestID="1"><CustomerAdd><Name>Kept &amp; Sent</Name></CustomerAdd></CustomerAddRq>`;

/** A whole document exactly as the service stored it before migration 0014. */
const LEGACY_DOCUMENT = `<?xml version="1.0" encoding="utf-8"?>\n<?qbxml version="16.0"?>\n<QBXML>\n<QBXMLMsgsRq onError="continueOnError">\n${ADD}\n</QBXMLMsgsRq>\n</QBXML>\n`;

async function handOut(
  h: TestApp,
  target: QueueTarget,
  version: string,
): Promise<{ id: string; xml: string }> {
  const work = await nextWork(h.deps, target.connectionId, target.ticketHash, version);
  assert.equal(work?.kind, "request");
  return work?.kind === "request" ? { id: work.rows[0]?.id ?? "", xml: work.xml } : { id: "", xml: "" };
}

/** The simulated application behind a company file, answering on message version 13.0 or later. */
async function application(): Promise<(xml: string) => Promise<string>> {
  const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0" });
  ledger.createCompanyFile("C:\\Hand Over.qbw", { companyName: "Hand Over", seed: "sample" });
  ledger.openCompanyFile("C:\\Hand Over.qbw");
  const begun = await ledger.beginSession({
    companyFilePath: "C:\\Hand Over.qbw",
    appName: "test",
    ownerId: "{00000000-0000-0000-0000-000000000001}",
    fileId: "{00000000-0000-0000-0000-000000000002}",
    stampFileId: false,
  });
  assert.ok(begun.ok);
  return async (xml) => {
    const result = await begun.session.processRequest(xml);
    assert.ok(result.ok, JSON.stringify(result));
    return result.response;
  };
}

/** Stores a Request's message set as the service stores it since migration 0014. */
async function storeMessages(h: TestApp, id: string, messagesXml: string, onError: string): Promise<void> {
  await h.deps.db
    .updateTable("requests")
    .set({ request_xml: messagesXml, request_on_error: onError })
    .where("id", "=", id)
    .execute();
}

test("a Request stored as a whole document before the upgrade is handed over like one stored as messages", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  // Before migration 0014 the whole document was stored; the migration leaves `request_on_error` null.
  const legacy = await queueRequest(h, target, { write: { xml: LEGACY_DOCUMENT, targets: [] } });
  const current = await queueRequest(h, target, { write: { xml: LEGACY_DOCUMENT, targets: [] } });
  await storeMessages(h, current, ADD, "continueOnError");
  const answer = await application();

  for (const id of [legacy, current]) {
    // The session speaks 13.0: the stored version is not kept, and the write carries its set ID.
    const work = await handOut(h, target, "13.0");
    assert.equal(work.id, id);
    const sent = await findRequestById(h.deps.db, id);
    assert.ok(sent?.message_set_id);
    assert.equal(
      work.xml,
      handOverDocument({ onError: "continueOnError", messagesXml: ADD }, "13.0", sent.message_set_id),
    );
    assert.match(work.xml, /<\?qbxml version="13\.0"\?>/);
    assert.match(
      work.xml,
      new RegExp(`<QBXMLMsgsRq onError="continueOnError" newMessageSetID="${sent.message_set_id}">`),
    );
    const done = await completeFromAnswer(
      h.deps,
      sent,
      { responseXml: await answer(work.xml), hresult: "", message: "" },
      target.ticketHash,
    );
    assert.equal(done?.status, "succeeded", JSON.stringify(done?.error));
    assert.match(JSON.stringify(done?.result), /CustomerAddRs requestID/);
  }
});

test("an answer is parsed once: the summary and the decoder read the same tree", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  const answer = await application();
  // A typed read (the health check) and a passthrough write.
  const read = await queueRequest(h, target);
  await storeMessages(h, read, `<CompanyQueryRq requestID="health-check"></CompanyQueryRq>`, "stopOnError");
  await queueRequest(h, target, { write: { xml: LEGACY_DOCUMENT, targets: [] } });
  for (const expected of ["succeeded", "succeeded"]) {
    const work = await handOut(h, target, "16.0");
    const sent = await findRequestById(h.deps.db, work.id);
    assert.ok(sent);
    const responseXml = await answer(work.xml);
    const before = documentsParsed();
    const done = await completeFromAnswer(
      h.deps,
      sent,
      { responseXml, hresult: "", message: "" },
      target.ticketHash,
    );
    assert.equal(documentsParsed() - before, 1, `${sent.operation_id}: one parse of the answer`);
    assert.equal(done?.status, expected, JSON.stringify(done?.error));
    if (sent.operation_id === "endUsers.passthrough") assert.deepEqual(done?.result, { xml: responseXml });
  }
});

test("a recovery answer is parsed once by the caller and resolves the write from that tree", async (t) => {
  const h = await buildTestApp(t);
  const target = await connectionOf(h);
  const answer = await application();
  await queueRequest(h, target, { write: { xml: LEGACY_DOCUMENT, targets: [] } });
  const work = await handOut(h, target, "16.0");
  const sent = await findRequestById(h.deps.db, work.id);
  assert.ok(sent?.message_set_id);
  // The application applied the write and kept its answer; the answer never reached the service.
  await answer(work.xml);
  const lost = await interruptSent(h.deps, sent, "test: the answer was lost");
  assert.equal(lost?.status, "outcome_unknown");
  const id = sent.message_set_id;
  const stored = await answer(
    `<?xml version="1.0"?>\n<?qbxml version="16.0"?>\n<QBXML>\n<QBXMLMsgsRq onError="continueOnError" oldMessageSetID="${id}" newMessageSetID="${id}">\n</QBXMLMsgsRq>\n</QBXML>\n`,
  );
  const before = documentsParsed();
  const parsed = readAnswer(stored);
  assert.ok(parsed);
  const resolved = await resolveRecovery(h.deps, lost, parsed, "test-ticket");
  assert.equal(documentsParsed() - before, 1, "the recovery answer is read once");
  assert.ok(resolved && resolved !== "unresolved");
  assert.equal(resolved.status, "succeeded");
  assert.equal(resolved.recovered, true);
  assert.deepEqual(resolved.result, { xml: stored });
});
