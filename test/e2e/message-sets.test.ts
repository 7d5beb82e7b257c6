import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  READ,
  bringOnline,
  callAsEndUser,
  eventually,
  json,
  passthroughPath,
  stopConnector,
} from "./helpers.ts";

/**
 * Message sets that carry several Requests (issue 24, decision 0036), through HTTP, the SOAP
 * protocol and the simulated application: Requests queued for one connection travel in one message
 * set, in queue order, and each keeps its own answer, error, recovery and `ledger.messageSetId`.
 */
let sys: System;
let eu: ConnectedEndUser;
/** Every request document the simulated application was handed, in order. */
const documents: string[] = [];
const customers: string[] = [];

interface Request {
  id: string;
  status: string;
  outcome: string;
  recovered: boolean;
  result: Record<string, unknown> | null;
  error: { code: string } | null;
  ledger: { messageSetId: string | null };
  timeline: Array<{ status: string; detail: string | null }>;
}

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  watchApplication(sys, (xml) => void documents.push(xml));
  eu = await sys.connectEndUser({ companyName: "Message Sets Co" });
  await bringOnline(sys, eu);
  for (const name of ["Ada Lovelace", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov"]) {
    const created = await callAsEndUser(sys, eu, "POST", "/v1/ledger-desktop/customers", { name });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    customers.push(String(created.body.id));
  }
});
after(() => sys.close());

/** Queues an async call as the end user; returns its Request's ID. */
async function queue(method: "GET" | "POST", path: string, body?: unknown): Promise<string> {
  const response = await sys.call(method, path, {
    endUserId: eu.endUserId,
    headers: { prefer: "respond-async" },
    ...(body === undefined ? {} : { body }),
  });
  assert.equal(response.status, 202, await response.clone().text());
  return (await json<{ id: string }>(response)).id;
}

async function request(id: string): Promise<Request> {
  return json<Request>(await sys.call("GET", `/v1/requests/${id}`));
}

/** Starts the connector again and waits until every request is final (or `outcome_unknown` resolved). */
async function runUntilSettled(ids: readonly string[]): Promise<Request[]> {
  eu.connector.start();
  await eventually("every request settled", async () =>
    (await Promise.all(ids.map(request))).every((r) => ["succeeded", "failed"].includes(r.status)),
  );
  return Promise.all(ids.map(request));
}

/** The request messages of a document, by name, in order. */
const messagesOf = (xml: string): string[] =>
  [...xml.matchAll(/<([A-Za-z]+Rq)[\s/>]/g)].map((m) => m[1] ?? "").filter((name) => name !== "QBXMLMsgsRq");

/** The ListIDs a document asks for, in order. */
const listIdsOf = (xml: string): string[] =>
  [...xml.matchAll(/<ListID>([^<]+)<\/ListID>/g)].map((m) => m[1] ?? "");

test("Requests queued together travel in one message set, in queue order, each with its own answer", async () => {
  await stopConnector(sys, eu);
  const ids = [];
  for (const id of customers) ids.push(await queue("GET", `/v1/ledger-desktop/customers/${id}`));
  const before = documents.length;
  const done = await runUntilSettled(ids);
  const sets = documents.slice(before).filter((xml) => messagesOf(xml).includes("CustomerQueryRq"));
  assert.equal(sets.length, 1, "one message set");
  assert.deepEqual(listIdsOf(sets[0] ?? ""), customers, "in queue order");
  assert.match(sets[0] ?? "", /onError="continueOnError"/);
  assert.doesNotMatch(sets[0] ?? "", /newMessageSetID/, "reads only: the application stores nothing");
  const setId = done[0]?.ledger.messageSetId;
  assert.ok(setId, "the set's ID");
  for (const [i, r] of done.entries()) {
    assert.equal(r.status, "succeeded");
    assert.equal(r.ledger.messageSetId, setId, "one message set");
    assert.equal(r.result?.id, customers[i], "its own answer");
  }
});

test("one caller's failure never stops another's Request in the same set", async () => {
  await stopConnector(sys, eu);
  const ids = [
    await queue("GET", `/v1/ledger-desktop/customers/${customers[0]}`),
    await queue("GET", "/v1/ledger-desktop/customers/80000099-1700000000"),
    await queue("GET", `/v1/ledger-desktop/customers/${customers[1]}`),
  ];
  const before = documents.length;
  const [first, missing, third] = await runUntilSettled(ids);
  assert.equal(documents.slice(before).filter((xml) => messagesOf(xml).length === 3).length, 1);
  assert.equal(first?.status, "succeeded");
  assert.equal(missing?.status, "failed");
  assert.equal(missing?.error?.code, "LEDGER_OBJECT_NOT_FOUND");
  assert.equal(third?.status, "succeeded");
  assert.equal(third?.result?.id, customers[1]);
});

test("writes in a set whose answer is lost are recovered one by one from the stored answer, applied once", async () => {
  await stopConnector(sys, eu);
  const file = sys.ledger.companyFile(eu.companyFilePath);
  const names = ["Set Write One", "Set Write Two", "Set Write Three"];
  const ids = [];
  for (const name of names) ids.push(await queue("POST", "/v1/ledger-desktop/customers", { name }));
  const read = await queue("GET", `/v1/ledger-desktop/customers/${customers[0]}`);
  eu.connector.setFault({ kind: "send_again_without_answer", match: "write" });
  const done = await runUntilSettled([...ids, read]);
  for (const [i, r] of done.slice(0, 3).entries()) {
    assert.equal(r.status, "succeeded", JSON.stringify(r.error));
    assert.equal(r.recovered, true, "resolved by the recovery query");
    assert.equal(r.outcome, "applied");
    assert.equal(r.result?.name, names[i], "its own record, from its place in the stored answer");
  }
  const lostRead = done[3];
  assert.equal(lostRead?.status, "failed");
  assert.equal(lostRead?.error?.code, "LEDGER_READ_INTERRUPTED");
  for (const name of names) {
    const copies = file
      .recordsOf("Customer")
      .filter((record) => record.fields.some((f) => f.name === "Name" && f.text === name));
    assert.equal(copies.length, 1, `${name} applied once`);
  }
  const setIds = new Set(done.map((r) => r.ledger.messageSetId));
  assert.equal(setIds.size, 1, "the four shared one message set");
});

test("a message set the application refuses as a whole is sent again one Request at a time", async () => {
  await stopConnector(sys, eu);
  const ids = [];
  for (const id of customers.slice(0, 3)) ids.push(await queue("GET", `/v1/ledger-desktop/customers/${id}`));
  sys.ledger.setFault({ kind: "refuse_sets_over", requests: 1 });
  const before = documents.length;
  try {
    const done = await runUntilSettled(ids);
    const sizes = documents
      .slice(before)
      .map((xml) => messagesOf(xml))
      .filter((names) => names.includes("CustomerQueryRq"))
      .map((names) => names.length);
    assert.deepEqual(sizes, [3, 1, 1, 1], "refused together, then one by one in order");
    for (const [i, r] of done.entries()) {
      assert.equal(r.status, "succeeded");
      assert.equal(r.result?.id, customers[i]);
      const statuses = r.timeline.map((entry) => entry.status);
      assert.deepEqual(statuses.slice(-4), ["sent", "queued", "sent", "succeeded"]);
      assert.match(r.timeline.at(-3)?.detail ?? "", /sent again alone/);
    }
  } finally {
    sys.ledger.setFault(null);
  }
});

test("a passthrough and a batch go alone, and the Requests around them keep their order", async () => {
  await stopConnector(sys, eu);
  const ids = [
    await queue("GET", `/v1/ledger-desktop/customers/${customers[0]}`),
    await queue("POST", passthroughPath(eu.endUserId), READ),
    await queue("GET", `/v1/ledger-desktop/customers/${customers[1]}`),
    await queue("GET", `/v1/ledger-desktop/customers/${customers[2]}`),
    await queue("POST", "/v1/ledger-desktop/batch", {
      requests: [
        { operationId: "ledger.customers.retrieve", pathParams: { id: customers[3] } },
        { operationId: "ledger.customers.retrieve", pathParams: { id: customers[0] } },
      ],
    }),
    await queue("GET", `/v1/ledger-desktop/customers/${customers[3]}`),
  ];
  const before = documents.length;
  const done = await runUntilSettled(ids);
  for (const r of done) assert.equal(r.status, "succeeded", JSON.stringify(r.error));
  const handed = documents
    .slice(before)
    .map((xml) => listIdsOf(xml).length || messagesOf(xml).length)
    .filter((n) => n > 0);
  // The first retrieve (the passthrough cannot join it), the passthrough alone, two retrieves
  // together (the batch cannot join them), the batch alone (its two members), the last retrieve.
  assert.deepEqual(handed.slice(-5), [1, 1, 2, 2, 1]);
  assert.equal(done[2]?.ledger.messageSetId, done[3]?.ledger.messageSetId);
  assert.notEqual(done[3]?.ledger.messageSetId, null);
});

test("a report goes alone (its answer has no bound), and the retrieves around it keep their order", async () => {
  await stopConnector(sys, eu);
  const ids = [
    await queue("GET", `/v1/ledger-desktop/customers/${customers[0]}`),
    await queue("GET", "/v1/ledger-desktop/reports/general-summary?reportType=profit_and_loss_standard"),
    await queue("GET", `/v1/ledger-desktop/customers/${customers[1]}`),
    await queue("GET", `/v1/ledger-desktop/customers/${customers[2]}`),
  ];
  const before = documents.length;
  const done = await runUntilSettled(ids);
  for (const r of done) assert.equal(r.status, "succeeded", JSON.stringify(r.error));
  const handed = documents
    .slice(before)
    .map((xml) => messagesOf(xml))
    .filter((names) => names.some((name) => name === "CustomerQueryRq" || name.endsWith("ReportQueryRq")));
  assert.deepEqual(handed.slice(-3), [
    ["CustomerQueryRq"],
    ["GeneralSummaryReportQueryRq"],
    ["CustomerQueryRq", "CustomerQueryRq"],
  ]);
});
