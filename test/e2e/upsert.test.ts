import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  bringOnline,
  countRequests,
  eventually,
  json,
  settledRequest,
  type RequestResource,
} from "./helpers.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";

/**
 * Upsert by key (issue 27, item 2; decision 0046) through HTTP, the SOAP protocol and the simulated
 * application: `PUT /v1/ledger-desktop/{group}/by-key` finds the record by full name or by the
 * externalId the service has seen, and modifies it, or adds it — one Request of several message
 * sets that keeps the head of its queue between them, so that two upserts of one key never create
 * two records; every set is sent once, a lost answer is recovered before the next set is decided.
 */
let sys: System;
let eu: ConnectedEndUser;
type Json = Record<string, unknown>;

/** Every request document the simulated application processed, in order. */
const documents: string[] = [];

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  checkEveryAnswer(sys);
  watchApplication(sys, (xml) => void documents.push(xml));
  eu = await sys.connectEndUser({ companyName: "Upsert Co" });
  await bringOnline(sys, eu);
});
after(() => sys.close());

async function upsert(group: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await sys.call("PUT", `/v1/ledger-desktop/${group}/by-key`, {
    endUserId: eu.endUserId,
    body,
    headers,
  });
  return {
    status: response.status,
    body: (await response.json()) as Json,
    requestId: response.headers.get("svc-request-id"),
  };
}

const file = () => sys.ledger.companyFile(eu.companyFilePath);

/** The company file's customers with this name (a job's name is its last segment). */
const customersNamed = (name: string) =>
  file()
    .recordsOf("Customer")
    .filter((r) => r.fields.some((f) => f.name === "Name" && f.text === name));
const fieldOf = (record: { fields: { name: string; text?: string }[] }, name: string) =>
  record.fields.find((f) => f.name === name)?.text;

describe("upsert by key", () => {
  test("by full name: the first call adds the record, the second modifies it (its revision read by the service)", async () => {
    const seen = documents.length;
    const first = await upsert("customers", {
      key: { fullName: "Upsert Alpha" },
      fields: { companyName: "Alpha Ltd" },
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.objectType, "upsert");
    assert.equal(first.body.action, "created");
    const created = first.body.data as Json;
    assert.equal(created.name, "Upsert Alpha");
    assert.equal(created.companyName, "Alpha Ltd");
    // Two message sets, one after the other: the query by full name, then the add.
    const sets = documents.slice(seen);
    assert.equal(sets.length, 2, sets.join("\n---\n"));
    assert.match(sets[0] ?? "", /<CustomerQueryRq[^>]*>\s*<FullName>Upsert Alpha<\/FullName>/);
    assert.match(sets[1] ?? "", /<CustomerAddRq/);

    // A field only the Add takes (the opening balance) is set when the record is created, not sent to the Mod.
    const modsBefore = documents.length;
    const second = await upsert("customers", {
      key: { fullName: "Upsert Alpha" },
      fields: { companyName: "Alpha Holdings", openingBalance: "99.00" },
    });
    const mod = documents.slice(modsBefore).find((xml) => /<CustomerModRq/.test(xml)) ?? assert.fail("a Mod");
    assert.doesNotMatch(mod, /OpenBalance/);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.action, "updated");
    const updated = second.body.data as Json;
    assert.equal(updated.id, created.id);
    assert.equal(updated.companyName, "Alpha Holdings");
    assert.notEqual(updated.revisionNumber, created.revisionNumber);
    assert.equal(customersNamed("Upsert Alpha").length, 1);
    assert.equal(
      fieldOf(customersNamed("Upsert Alpha")[0] ?? assert.fail(), "CompanyName"),
      "Alpha Holdings",
    );

    // The Request is one Request: its timeline shows each set handed over and answered.
    const request = await json<
      Omit<RequestResource, "timeline"> & { timeline: { status: string; detail: string | null }[] }
    >(await sys.call("GET", `/v1/requests/${second.requestId}`));
    assert.equal(request.status, "succeeded");
    assert.equal(request.timeline.filter((entry) => entry.status === "sent").length, 2);
    assert.ok(
      request.timeline.some((entry) =>
        /Message set 1 answered: found .*: it is modified/.test(entry.detail ?? ""),
      ),
      JSON.stringify(request.timeline),
    );
  });

  test("a job's full name: added under its parent, found by its full name afterwards; a missing parent is named", async () => {
    await upsert("customers", { key: { fullName: "Upsert Parent" } });
    const job = await upsert("customers", { key: { fullName: "Upsert Parent:Kitchen" }, fields: {} });
    assert.equal(job.status, 200, JSON.stringify(job.body));
    assert.equal(job.body.action, "created");
    const data = job.body.data as Json;
    assert.equal(data.fullName, "Upsert Parent:Kitchen");
    const again = await upsert("customers", {
      key: { fullName: "Upsert Parent:Kitchen" },
      fields: { jobDescription: "Remodel" },
    });
    assert.equal(again.body.action, "updated", JSON.stringify(again.body));
    assert.equal((again.body.data as Json).id, data.id);

    const orphan = await upsert("customers", { key: { fullName: "No Such Parent:Job" } });
    assert.equal(orphan.status, 404, JSON.stringify(orphan.body));
    const error = orphan.body.error as Json;
    assert.equal(error.code, "LEDGER_OBJECT_NOT_FOUND");
    assert.equal(error.param, "key.fullName");
    assert.equal(customersNamed("Job").length, 0);
  });

  test("by externalId: found through the service's index of what it wrote and read, never the caller's word", async () => {
    const externalId = randomUUID();
    const first = await upsert("customers", {
      key: { externalId },
      fields: { name: "Upsert External", companyName: "Ext One" },
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.action, "created");
    assert.equal((first.body.data as Json).externalId, externalId);
    const second = await upsert("customers", {
      key: { externalId: externalId.toUpperCase() },
      fields: { name: "Upsert External", companyName: "Ext Two" },
    });
    assert.equal(second.body.action, "updated", JSON.stringify(second.body));
    assert.equal((second.body.data as Json).id, (first.body.data as Json).id);
    assert.equal(customersNamed("Upsert External").length, 1);

    // A record created by a plain create with an externalId is in the index from its answer.
    const other = randomUUID();
    const plain = await sys.call("POST", "/v1/ledger-desktop/customers", {
      endUserId: eu.endUserId,
      body: { name: "Plain With External", externalId: other },
    });
    assert.equal(plain.status, 201);
    const found = await upsert("customers", {
      key: { externalId: other },
      fields: { name: "Plain With External", companyName: "Found" },
    });
    assert.equal(found.body.action, "updated", JSON.stringify(found.body));
    assert.equal(customersNamed("Plain With External").length, 1);
  });

  test("two concurrent upserts of one key never create two records (the queue serializes them)", async () => {
    for (const key of [{ fullName: "Upsert Race" }, { externalId: randomUUID() }]) {
      const name = "fullName" in key ? key.fullName : `Upsert Race ${key.externalId.slice(0, 8)}`;
      const fields = (n: number) => ({
        ...("fullName" in key ? {} : { name }),
        companyName: `Racer ${n}`,
      });
      const answers = await Promise.all(
        [1, 2, 3].map((n) => upsert("customers", { key, fields: fields(n) })),
      );
      for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(
        answers.map((a) => a.body.action).sort(),
        ["created", "updated", "updated"],
        JSON.stringify(answers.map((a) => a.body)),
      );
      assert.equal(new Set(answers.map((a) => (a.body.data as Json).id)).size, 1);
      assert.equal(customersNamed(name).length, 1, `one ${name}`);
    }
  });

  test("a dropped answer on the write set: recovered, applied once", async () => {
    const before = file().count("Customer");
    eu.connector.setFault({ kind: "lose_answer_after_write" });
    const pending = upsert(
      "customers",
      { key: { fullName: "Upsert Lost Write" }, fields: { companyName: "Lost" } },
      { "idempotency-key": "upsert-lost-write", "svc-timeout-seconds": "300" },
    );
    await eventually("the application applied the add", async () => file().count("Customer") === before + 1);
    // The connector's next session finds the write without its answer.
    void eu.connector.checkInNow();
    const answer = await pending;
    // The caller is told at once that the outcome is unknown (the spec's rule for a lost write).
    assert.equal(answer.status, 502, JSON.stringify(answer.body));
    assert.equal((answer.body.error as Json).code, "LEDGER_WRITE_OUTCOME_UNKNOWN");
    // The session's recovery query reads the application's stored answer: the upsert completes.
    const settled = await settledRequest(sys, eu, answer.requestId);
    assert.equal(settled.status, "succeeded");
    assert.equal(settled.recovered, true);
    assert.equal(settled.result.action, "created");
    assert.equal(customersNamed("Upsert Lost Write").length, 1);
    assert.equal(file().count("Customer"), before + 1);
    // The same key replays the recovered Request: nothing is sent again.
    const replay = await upsert(
      "customers",
      { key: { fullName: "Upsert Lost Write" }, fields: { companyName: "Lost" } },
      { "idempotency-key": "upsert-lost-write" },
    );
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(replay.body.action, "created");
    assert.equal(file().count("Customer"), before + 1);
  });

  test("a lost answer between the sets: recovered before the next set is decided, nothing applied twice", async () => {
    await upsert("customers", { key: { fullName: "Upsert Between" }, fields: { companyName: "Before" } });
    const seen = documents.length;
    // The find's answer is lost (the connector asks again without answering it).
    eu.connector.setFault({ kind: "send_again_without_answer", match: "read" });
    const answer = await upsert(
      "customers",
      { key: { fullName: "Upsert Between" }, fields: { companyName: "After" } },
      { "idempotency-key": "upsert-lost-find", "svc-timeout-seconds": "300" },
    );
    // A set of the Request was sent and its answer lost: the caller is told the outcome is unknown…
    assert.equal(answer.status, 502, JSON.stringify(answer.body));
    // …and the recovery query's stored answer decides the next set, which runs once.
    void eu.connector.checkInNow();
    const settled = await settledRequest(sys, eu, answer.requestId);
    assert.equal(settled.status, "succeeded", JSON.stringify(settled));
    assert.equal(settled.result.action, "updated");
    assert.equal(customersNamed("Upsert Between").length, 1);
    assert.equal(fieldOf(customersNamed("Upsert Between")[0] ?? assert.fail(), "CompanyName"), "After");
    // The find ran once, the recovery query read its stored answer, the modify ran once.
    const sets = documents.slice(seen);
    assert.equal(sets.filter((xml) => /<CustomerModRq/.test(xml)).length, 1, sets.join("\n---\n"));
    assert.equal(sets.filter((xml) => /<CustomerQueryRq/.test(xml)).length, 1, sets.join("\n---\n"));
  });

  test("bad input: a typed 400 naming the parameter, nothing queued", async () => {
    const cases: Array<[unknown, string]> = [
      [{ fields: {} }, "key"],
      [{ key: { fullName: "A", externalId: randomUUID() } }, "key"],
      [{ key: { externalId: "not-a-uuid" } }, "key.externalId"],
      [{ key: { fullName: "" } }, "key.fullName"],
      [{ key: { fullName: "x".repeat(300) } }, "key.fullName"],
      [{ key: { fullName: "Named" }, fields: { name: "Other" } }, "fields.name"],
      [{ key: { fullName: "Named" }, fields: { openingBalance: "ten" } }, "fields.openingBalance"],
      [{ key: { fullName: "Named" }, fields: { noSuchField: 1 } }, "fields.noSuchField"],
      [{ key: { fullName: "Named\u0000" } }, "key.fullName"],
    ];
    const before = await countRequests(sys);
    for (const [body, param] of cases) {
      const answer = await upsert("customers", body);
      assert.equal(answer.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(answer.body)}`);
      const error = answer.body.error as Json;
      assert.equal(error.param, param, `${JSON.stringify(body)} → ${JSON.stringify(error)}`);
    }
    // Transactions have no full name; a group without upsert has no route.
    const invoice = await upsert("invoices", { key: { fullName: "Nope" } });
    assert.equal(invoice.status, 400, JSON.stringify(invoice.body));
    const batch = await sys.call("POST", "/v1/ledger-desktop/batch", {
      endUserId: eu.endUserId,
      body: {
        requests: [{ operationId: "ledger.customers.upsert", body: { key: { fullName: "In Batch" } } }],
      },
    });
    assert.equal(batch.status, 400);
    assert.equal(((await batch.json()) as { error: Json }).error.param, "requests[0].body");
    assert.equal(await countRequests(sys), before, "nothing was queued");
  });
});
