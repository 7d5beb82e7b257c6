import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resourceByPath } from "../../src/ledger/resources/definitions.ts";
import { exampleBody } from "../../src/ledger/resources/examples.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  countRequests,
  bringOnline,
  callAsEndUser,
  E2E_CONFIG,
  passthroughPath,
  type JsonAnswer,
} from "./helpers.ts";

/**
 * Version and region gating (spec "Versioning"; decision 0016) through HTTP, the SOAP protocol and
 * the simulated application: each end user's connector reports its application's message version
 * and edition, the connection keeps them, and a call using an element the connection cannot take
 * is refused with 422 before anything is queued, typed (naming the body's field) or passthrough
 * (naming its element, `param` the body). What the connection can take reaches the application.
 */
let sys: System;
let us16: ConnectedEndUser;
let us13: ConnectedEndUser;
let us14: ConnectedEndUser;
let uk: ConnectedEndUser;
let ca13: ConnectedEndUser;
type Json = Record<string, unknown>;

const call = (
  eu: ConnectedEndUser,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<JsonAnswer> => callAsEndUser(sys, eu, method, path, body);

async function passthrough(eu: ConnectedEndUser, xml: string): Promise<{ status: number; text: string }> {
  const response = await sys.call("POST", passthroughPath(eu.endUserId), { body: xml });
  return { status: response.status, text: await response.text() };
}

const requestCount = (): Promise<number> => countRequests(sys);

/** Asserts a refusal before queueing: the status, the code, and no Request row. */
async function refused(answer: Promise<JsonAnswer>, code: string): Promise<Json> {
  const before = await requestCount();
  const { status, body } = await answer;
  assert.equal(status, 422, JSON.stringify(body));
  const error = body.error as Json;
  assert.equal(error.code, code, JSON.stringify(error));
  assert.equal(await requestCount(), before, "nothing was queued");
  return error;
}

const FORM_1099_QUERY = `<Form1099CategoryAccountMappingQueryRq><FormType>1099-MISC</FormType></Form1099CategoryAccountMappingQueryRq>`;

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  us16 = await sys.connectEndUser({ companyName: "Home 16 Co" });
  us13 = await sys.connectEndUser({ companyName: "Home 13 Co", application: { xmlVersion: "13.0" } });
  us14 = await sys.connectEndUser({ companyName: "Home 14 Co", application: { xmlVersion: "14.0" } });
  uk = await sys.connectEndUser({ companyName: "Abroad Ltd", application: { country: "UK" } });
  ca13 = await sys.connectEndUser({
    companyName: "North Co",
    application: { xmlVersion: "13.0", country: "CA" },
  });
  for (const eu of [us16, us13, us14, uk, ca13]) await bringOnline(sys, eu);
});
after(() => sys.close());

describe("the connection keeps what its connector reported", () => {
  test("the negotiated message version and the company file's edition", async () => {
    const seen = async (eu: ConnectedEndUser): Promise<unknown> => {
      const response = await sys.call("GET", `/v1/end-users/${eu.endUserId}`);
      const body = (await response.json()) as { integrationConnections: { companyFile: Json | null }[] };
      const file = body.integrationConnections[0]?.companyFile;
      return file && { xmlVersion: file.xmlVersion, country: file.country };
    };
    assert.deepEqual(await seen(us16), { xmlVersion: "16.0", country: "US" });
    assert.deepEqual(await seen(us13), { xmlVersion: "13.0", country: "US" });
    assert.deepEqual(await seen(us14), { xmlVersion: "14.0", country: "US" });
    assert.deepEqual(await seen(uk), { xmlVersion: "16.0", country: "UK" });
    assert.deepEqual(await seen(ca13), { xmlVersion: "13.0", country: "CA" });
  });
});

describe("message versions", () => {
  test("passthrough: a 14.0 element reaches a 14.0 application; a 13.0 connection refuses it naming 14.0", async () => {
    const accepted = await passthrough(us14, FORM_1099_QUERY);
    assert.equal(accepted.status, 200, accepted.text);
    assert.match(accepted.text, /<Form1099CategoryAccountMappingQueryRs [^>]*statusSeverity="(Info|Warn)"/);

    const before = await requestCount();
    const answer = await passthrough(us13, FORM_1099_QUERY);
    assert.equal(answer.status, 422, answer.text);
    const error = (JSON.parse(answer.text) as { error: Json }).error;
    assert.equal(error.code, "LEDGER_FIELD_UNSUPPORTED_BY_VERSION");
    assert.equal(error.param, "body");
    assert.deepEqual(error.details, { minimumXmlVersion: "14.0", xmlVersion: "13.0" });
    assert.match(
      String(error.message),
      /`Form1099CategoryAccountMappingQueryRq\/FormType` needs message version 14\.0/,
    );
    assert.equal(await requestCount(), before, "nothing was queued");

    // A whole message only 16.0 has, in a set whose first message any version takes.
    const newer = await refused(
      callAsEndUser(sys, us14, "POST", passthroughPath(us14.endUserId), {
        xml: `<HostQueryRq/><AlertQueryRq><OwnerID>0</OwnerID></AlertQueryRq>`,
      }),
      "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
    );
    assert.equal(newer.param, "xml");
    assert.deepEqual(newer.details, { minimumXmlVersion: "16.0", xmlVersion: "14.0" });
    assert.match(String(newer.message), /`AlertQueryRq`/);
  });

  test("typed: a field first in 16.0 names its JSON path and the version that has it; 16.0 takes it", async () => {
    // References the 16.0 file holds; the older connections are refused before their files are asked.
    const vendor = await call(us16, "POST", "/v1/ledger-desktop/vendors", { name: "Class Paper Co" });
    const klass = await call(us16, "POST", "/v1/ledger-desktop/classes", { name: "East" });
    assert.equal(vendor.status, 201, JSON.stringify(vendor.body));
    assert.equal(klass.status, 201, JSON.stringify(klass.body));
    const body = { vendorId: vendor.body.id, classId: klass.body.id };
    for (const eu of [us13, us14, ca13]) {
      const error = await refused(
        call(eu, "POST", "/v1/ledger-desktop/bills", body),
        "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
      );
      assert.equal(error.param, "classId");
      assert.equal((error.details as Json).minimumXmlVersion, "16.0");
      assert.match(String(error.message), /`classId` \(`BillAddRq\/BillAdd\/ClassRef`\)/);
    }
    // A batch member is gated the same way, and the refusal names the member's field.
    const before = await requestCount();
    const batched = await refused(
      call(us13, "POST", "/v1/ledger-desktop/batch", {
        requests: [
          { operationId: "ledger.customers.create", body: { name: "Fine on 13.0" } },
          { operationId: "ledger.bills.create", body },
        ],
      }),
      "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
    );
    assert.equal(batched.param, "requests[1].body.classId");
    assert.equal(await requestCount(), before, "no member was queued");
    const created = await call(us16, "POST", "/v1/ledger-desktop/bills", body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((created.body.class as Json).id, klass.body.id);
  });

  test("typed: what 13.0 has goes through on a 13.0 connection", async () => {
    const created = await call(us13, "POST", "/v1/ledger-desktop/customers", { name: "Old Faithful" });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const listed = await call(us13, "GET", "/v1/ledger-desktop/customers?limit=5");
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
  });
});

describe("regional editions", () => {
  test("typed: a US-only field on a UK or CA file is refused naming the field; a US file takes it", async () => {
    const body = { name: "Eligible Supplies", isEligibleFor1099: true };
    for (const eu of [uk, ca13]) {
      const error = await refused(
        call(eu, "POST", "/v1/ledger-desktop/vendors", body),
        "LEDGER_REGION_UNSUPPORTED",
      );
      assert.equal(error.param, "isEligibleFor1099");
      assert.equal(error.type, "INVALID_REQUEST_ERROR");
      assert.match(
        String(error.message),
        /`isEligibleFor1099` \(`VendorAddRq\/VendorAdd\/IsVendorEligibleFor1099`\)/,
      );
    }
    const ukError = await refused(
      call(uk, "POST", "/v1/ledger-desktop/vendors", body),
      "LEDGER_REGION_UNSUPPORTED",
    );
    assert.deepEqual(ukError.details, { country: "UK" });
    const created = await call(us16, "POST", "/v1/ledger-desktop/vendors", body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.isEligibleFor1099, true);
    // Without the US-only field the UK file takes the vendor.
    const plain = await call(uk, "POST", "/v1/ledger-desktop/vendors", { name: "Plain Supplies" });
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
  });

  test("typed: an operation the edition lacks as a whole is refused on a UK file", async () => {
    const checks = resourceByPath("sales-tax-payment-checks");
    assert.ok(checks?.create);
    const error = await refused(
      call(uk, "POST", "/v1/ledger-desktop/sales-tax-payment-checks", exampleBody(checks.create)),
      "LEDGER_REGION_UNSUPPORTED",
    );
    assert.equal(error.param, null);
    assert.match(String(error.message), /`SalesTaxPaymentCheckAddRq` is not available in the UK edition/);
  });

  test("passthrough: a US-only message on a UK file is refused with param body; a US file answers it", async () => {
    const before = await requestCount();
    const answer = await passthrough(uk, `<ItemSitesQueryRq/>`);
    assert.equal(answer.status, 422, answer.text);
    const error = (JSON.parse(answer.text) as { error: Json }).error;
    assert.equal(error.code, "LEDGER_REGION_UNSUPPORTED");
    assert.equal(error.param, "body");
    assert.match(String(error.message), /`ItemSitesQueryRq`/);
    assert.equal(await requestCount(), before);
    const home = await passthrough(us16, `<ItemSitesQueryRq/>`);
    assert.equal(home.status, 200, home.text);
    assert.match(home.text, /<ItemSitesQueryRs /);
  });
});
