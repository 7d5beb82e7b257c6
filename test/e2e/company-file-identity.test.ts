import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  bringOnline,
  connectionOf,
  eventually,
  json,
  passthroughPath,
  READ,
  stopConnector,
  type RequestResource,
  type ErrorBody,
} from "./helpers.ts";

/**
 * Which company file is open, told by its FileID marker at the first `sendRequestXML` of a session
 * (decision 0019), through HTTP, SOAP and the simulated application:
 *
 * - LEDGER_COMPANY_FILE_MISMATCH: the file carries the marker of another end user's connection in
 *   the project (one computer, several companies' files): refused, even on a first session, which
 *   would otherwise adopt it and send this end user's requests into the other's books;
 * - LEDGER_WRONG_COMPANY_FILE_OPEN: another file is open that no connection of the project claims.
 *
 * Both leave the connection `company_file_mismatch` and answer 409.
 */

/** A sync read that waits for the connector's next session, which then runs. */
async function readThroughNextSession(sys: System, eu: ConnectedEndUser): Promise<Response> {
  await stopConnector(sys, eu);
  const pending = sys.call("POST", passthroughPath(eu.endUserId), { body: READ });
  await eventually("queued", async () => {
    const list = await json<{ data: RequestResource[] }>(await sys.call("GET", "/v1/requests?limit=1"));
    return list.data[0]?.status === "queued";
  });
  await eu.connector.runSession();
  return pending;
}

function documentsProcessed(eu: ConnectedEndUser): number {
  return eu.connector.events.filter((e) => e.type === "request_processed").length;
}

test("another end user's company file is LEDGER_COMPANY_FILE_MISMATCH; an unknown one LEDGER_WRONG_COMPANY_FILE_OPEN", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const alpha = await sys.connectEndUser({ companyName: "Alpha" });
  await bringOnline(sys, alpha);
  const beta = await sys.connectEndUser({ companyName: "Beta" });
  await bringOnline(sys, beta);
  const unknown = "C:\\Company Files\\Nobody.qbw";
  sys.ledger.createCompanyFile(unknown, { companyName: "Nobody", seed: "empty" });

  await t.test("Beta's connector finds Alpha's file open", async () => {
    sys.ledger.setFault({ kind: "wrong_company_file", path: alpha.companyFilePath });
    const processedBefore = documentsProcessed(beta);
    const waiting = await readThroughNextSession(sys, beta);
    assert.equal(waiting.status, 409, await waiting.clone().text());
    const { error } = await json<ErrorBody>(waiting);
    assert.equal(error.code, "LEDGER_COMPANY_FILE_MISMATCH");
    assert.equal(error.details.otherEndUserId, alpha.endUserId);
    assert.equal(documentsProcessed(beta), processedBefore, "nothing ran in Alpha's books");
    const connection = await connectionOf(sys, beta.endUserId);
    assert.deepEqual(
      [connection.status, connection.statusReason],
      ["company_file_mismatch", "LEDGER_COMPANY_FILE_MISMATCH"],
    );
    // Refused at admission from now on, until a session opens Beta's own file.
    const refused = await sys.call("POST", passthroughPath(beta.endUserId), { body: READ });
    assert.equal(refused.status, 409);
    const refusal = (await json<ErrorBody>(refused)).error;
    assert.equal(refusal.code, "LEDGER_COMPANY_FILE_MISMATCH");
    const recorded = await json<RequestResource>(await sys.call("GET", `/v1/requests/${refusal.requestId}`));
    assert.deepEqual(
      recorded.timeline.map((e) => e.status),
      ["failed"],
    );
    sys.ledger.setFault(null);
    await bringOnline(sys, beta);
    assert.equal((await sys.call("POST", passthroughPath(beta.endUserId), { body: READ })).status, 200);
  });

  await t.test("Beta's connector finds a file no end user connected", async () => {
    sys.ledger.setFault({ kind: "wrong_company_file", path: unknown });
    const waiting = await readThroughNextSession(sys, beta);
    assert.equal(waiting.status, 409, await waiting.clone().text());
    assert.equal((await json<ErrorBody>(waiting)).error.code, "LEDGER_WRONG_COMPANY_FILE_OPEN");
    const connection = await connectionOf(sys, beta.endUserId);
    assert.deepEqual(
      [connection.status, connection.statusReason],
      ["company_file_mismatch", "LEDGER_WRONG_COMPANY_FILE_OPEN"],
    );
    sys.ledger.setFault(null);
    await bringOnline(sys, beta);
  });

  await t.test("a new end user's first session with Alpha's file open does not adopt it", async () => {
    const gamma = await sys.connectEndUser({ companyName: "Gamma" });
    // The end user runs the new connector while Alpha's file is the one open.
    sys.ledger.openCompanyFile(alpha.companyFilePath);
    await gamma.connector.runSession();
    const connection = await connectionOf(sys, gamma.endUserId);
    assert.deepEqual(
      [connection.status, connection.statusReason],
      ["company_file_mismatch", "LEDGER_COMPANY_FILE_MISMATCH"],
    );
    const refused = await sys.call("POST", passthroughPath(gamma.endUserId), { body: READ });
    assert.equal(refused.status, 409);
    assert.equal((await json<ErrorBody>(refused)).error.code, "LEDGER_COMPANY_FILE_MISMATCH");
    // Its own file open, the next session adopts it.
    sys.ledger.openCompanyFile(gamma.companyFilePath);
    await bringOnline(sys, gamma);
    assert.equal((await sys.call("POST", passthroughPath(gamma.endUserId), { body: READ })).status, 200);
    assert.equal((await connectionOf(sys, alpha.endUserId)).status, "online", "Alpha was never touched");
  });
});
