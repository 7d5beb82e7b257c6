import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem } from "../../src/testing/system.ts";
import { E2E_CONFIG, bringOnline, json, passthroughPath, stopConnector } from "./helpers.ts";

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

test("LEDGER_PERSONAL_DATA_WITHHELD: a company file that withholds personal data from the application; card numbers null with a warning each, records kept", async (t) => {
  const sys = await startSystem(t, E2E_CONFIG);
  // Its own application, so that the administrator's choice is this company file's alone.
  const eu = await sys.connectEndUser({ companyName: "Private Co", application: { xmlVersion: "16.0" } });
  await bringOnline(sys, eu);
  const created = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: {
      name: "Card Holder",
      creditCard: { number: "4111111111111111", expirationMonth: 12, expirationYear: 2031 },
    },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const { id } = await json<{ id: string }>(created);
  const plain = await sys.call("POST", "/v1/ledger-desktop/customers", {
    endUserId: eu.endUserId,
    body: { name: "No Card Ltd" },
  });
  assert.equal(plain.status, 201, await plain.text());

  const warningsOf = async (response: Response): Promise<Warning[]> => {
    const requestId = response.headers.get("svc-request-id") ?? "";
    return (await json<{ warnings: Warning[] }>(await sys.call("GET", `/v1/requests/${requestId}`))).warnings;
  };
  const retrieve = () => sys.call("GET", `/v1/ledger-desktop/customers/${id}`, { endUserId: eu.endUserId });

  const allowed = await retrieve();
  const before = await json<{ creditCard: { number: string | null } | null }>(allowed.clone());
  assert.equal(before.creditCard?.number, "••••••••••••1111", "allowed: the number is read (masked)");
  assert.deepEqual(await warningsOf(allowed), []);

  // The administrator takes the right to personal data away; the next session's report says so.
  await stopConnector(sys, eu);
  eu.ledger.setPersonalDataAccess(false);
  eu.connector.start();
  const withheld = await retrieve();
  assert.equal(withheld.status, 200, await withheld.clone().text());
  const record = await json<{
    name: string;
    creditCard: { number: string | null; expirationYear: number } | null;
  }>(withheld.clone());
  assert.equal(record.name, "Card Holder");
  assert.equal(record.creditCard?.number, null, "withheld by the application");
  assert.equal(record.creditCard?.expirationYear, 2031, "what is not personal data is still read");
  assert.deepEqual(
    (await warningsOf(withheld)).map((w) => [w.code, w.path, w.statusCode]),
    [["LEDGER_PERSONAL_DATA_WITHHELD", "creditCard.number", null]],
  );

  const listed = await sys.call(
    "GET",
    "/v1/ledger-desktop/customers?fullNames=Card%20Holder&fullNames=No%20Card%20Ltd",
    {
      endUserId: eu.endUserId,
    },
  );
  assert.equal(listed.status, 200, await listed.clone().text());
  const page = await json<{ data: { name: string }[] }>(listed.clone());
  assert.deepEqual(
    page.data.map((c) => c.name).sort(),
    ["Card Holder", "No Card Ltd"],
    "no record is dropped",
  );
  const index = page.data.findIndex((c) => c.name === "Card Holder");
  assert.deepEqual(
    (await warningsOf(listed)).map((w) => w.path),
    [`data[${index}].creditCard.number`],
    "a customer without a card has nothing withheld",
  );
});
