import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import { E2E_CONFIG, bringOnline, json, passthroughPath } from "./helpers.ts";

/**
 * Warning codes of the Request (spec: Request `warnings`) that only an answer of the application
 * can cause, produced end to end. LEDGER_MARKUP_REPAIRED: a value the end user edited in the
 * application's window carries a control character, which the application writes into its answer
 * as it is and XML forbids; the service repairs the markup, gives that value as null with a warning
 * at its path, and keeps the record.
 */

interface Warning {
  code: string;
  statusCode: number | null;
  message: string;
  path: string | null;
}

test("LEDGER_MARKUP_REPAIRED: a control character in a stored value; the value is null with a warning at its path, the record is kept", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  const eu = await sys.connectEndUser({ companyName: "Pasted Co" });
  await bringOnline(sys, eu);
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "Pasted Ltd", companyName: "Pasted Limited" },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const { id } = await json<{ id: string }>(created);
  // The end user pastes text with a control character (U+0001) into the record's company name.
  eu.ledger.companyFile(eu.companyFilePath).editInWindow(id, "CompanyName", "Pasted\u0001Limited");

  const warningsOf = async (response: Response): Promise<Warning[]> => {
    const requestId = response.headers.get("svc-request-id") ?? "";
    assert.match(requestId, /^req_/);
    return (await json<{ warnings: Warning[] }>(await sys.call("GET", `/v1/requests/${requestId}`))).warnings;
  };

  const retrieved = await sys.call("GET", `/v1/ledger-desktop/customers/${id}`, { endUserId: eu.endUserId });
  assert.equal(retrieved.status, 200, await retrieved.clone().text());
  const record = await json<{ id: string; name: string; companyName: string | null }>(retrieved.clone());
  assert.equal(record.id, id);
  assert.equal(record.name, "Pasted Ltd", "the rest of the record is read");
  assert.equal(record.companyName, null, "the repaired value is withheld, never guessed");
  const [warning, ...more] = await warningsOf(retrieved);
  assert.deepEqual(more, []);
  assert.equal(warning?.code, "LEDGER_MARKUP_REPAIRED");
  assert.equal(warning?.path, "companyName");
  assert.equal(warning?.statusCode, null);

  const listed = await sys.call("GET", "/v1/ledger-desktop/customers?fullNames=Pasted%20Ltd", {
    endUserId: eu.endUserId,
  });
  assert.equal(listed.status, 200, await listed.clone().text());
  const page = await json<{ data: { id: string; companyName: string | null }[] }>(listed.clone());
  assert.deepEqual(
    page.data.map((c) => [c.id, c.companyName]),
    [[id, null]],
  );
  assert.deepEqual(
    (await warningsOf(listed)).map((w) => [w.code, w.path]),
    [["LEDGER_MARKUP_REPAIRED", "data[0].companyName"]],
  );

  // The passthrough returns the repaired document (U+FFFD in place of the character), with the warning.
  const raw = await sys.call("POST", passthroughPath(eu.endUserId), {
    body: `<CustomerQueryRq><ListID>${id}</ListID></CustomerQueryRq>`,
  });
  assert.equal(raw.status, 200, await raw.clone().text());
  const text = await raw.clone().text();
  assert.ok(text.includes("Pasted\\ufffdLimited") || text.includes("Pasted\ufffdLimited"), text);
  assert.deepEqual(
    (await warningsOf(raw)).map((w) => [w.code, w.path]),
    [["LEDGER_MARKUP_REPAIRED", null]],
  );

  // Once the end user corrects the value, nothing is repaired.
  eu.ledger.companyFile(eu.companyFilePath).editInWindow(id, "CompanyName", "Pasted Limited");
  const clean = await sys.call("GET", `/v1/ledger-desktop/customers/${id}`, { endUserId: eu.endUserId });
  assert.equal((await json<{ companyName: string }>(clean.clone())).companyName, "Pasted Limited");
  assert.deepEqual(await warningsOf(clean), []);
});
