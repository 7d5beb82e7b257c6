import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isServiceError } from "../../src/errors/service-error.ts";
import { watchableResources } from "../../src/change-feed/resources.ts";
import type { ResourceDefinition } from "../../src/ledger/resources/definitions.ts";
import {
  integerParam,
  listFilters,
  parseQuery,
  type ParamValue,
  type QueryParam,
} from "../../src/ledger/typed/filters.ts";
import { attr } from "../../src/ledger/xml/tree.ts";
import { parseDocument } from "../../src/ledger/xml/parse.ts";
import { answer, unsupportedParam, type Json, type MirrorAnswer } from "../../src/mirror/query.ts";
import {
  everyFilterQueries,
  queryString,
  randomListQuery,
  type ListQuery,
} from "../../src/mirror/query-samples.ts";
import type { FakeClock } from "../../src/platform/clock.ts";
import { SeededRandom } from "../../src/platform/seeded-random.ts";
import type { CompanyFile } from "../../src/simulator/ledger/company-file.ts";
import { processDocument } from "../../src/simulator/ledger/processor.ts";
import { fieldText, type LedgerRecord } from "../../src/simulator/ledger/records.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { bringOnline, callAsEndUser, E2E_CONFIG, eventually } from "./helpers.ts";

/**
 * The mirror's evaluator tells the truth (issue 26, item 4): for seeded-random list queries over
 * every filter of customers, vendors, items, accounts (a group without cursors), invoices,
 * bills and checks, `answer` over a copy of
 * each group (read live with `status=all` and `includeLineItems=true`, walking cursors) gives the
 * same records, in the same order and the same form, as the live application through HTTP, the
 * connector protocol and the simulated application — and the same error or warnings. Then random
 * creates, updates, deletes and voids are made directly in the company file (not through the
 * service), the copy is read again, and the comparison runs again. Set MIRROR_QUERY_SEED to replay
 * a run; a failure names the seed, the group, the query and the first differing position.
 */
const SEED = Number(process.env.MIRROR_QUERY_SEED ?? "2026");
const QUERIES_PER_ROUND = 100;
const GROUPS = ["customers", "vendors", "items", "accounts", "invoices", "bills", "checks"] as const;
const BASE = "/v1/ledger-desktop";
const POLL_S = 60;
const STALE_OK = { "Svc-Max-Staleness-Seconds": "86400" };

let sys: System;
let eu: ConnectedEndUser;
/**
 * The service's clock, which the application shares: records are modified minutes to days apart,
 * and the mirror's polls (on the same clock) see them as the application dates them.
 */
let ledgerClock: FakeClock;
const random = new SeededRandom(SEED);

const file = (): CompanyFile => eu.ledger.companyFile(eu.companyFilePath);
const resource = (path: string): ResourceDefinition => {
  const found = watchableResources().get(path);
  assert.ok(found, `${path} is mirrorable`);
  return found;
};

interface LiveAnswer {
  status: number;
  records: Json[];
  error: Json | null;
  warnings: unknown[];
}

/** Every page of a live list answer (the cursor walked to its end). */
async function live(path: string, query: ReadonlyMap<string, ParamValue>): Promise<LiveAnswer> {
  const records: Json[] = [];
  let url = `${BASE}/${path}?${queryString(query)}`;
  for (let page = 0; ; page++) {
    assert.ok(page < 100, `${path}: the cursor ends`);
    const got = await callAsEndUser(sys, eu, "GET", url);
    if (got.status !== 200) {
      return { status: got.status, records, error: got.body.error as Json, warnings: [] };
    }
    records.push(...(got.body.data as Json[]));
    const next = got.body.nextCursor;
    if (typeof next !== "string") {
      const request = await sys.call("GET", `/v1/requests/${got.requestId}`);
      const warnings = ((await request.json()) as { warnings: unknown[] }).warnings;
      return { status: 200, records, error: null, warnings: page === 0 ? warnings : [] };
    }
    url = `${BASE}/${path}?cursor=${encodeURIComponent(next)}`;
  }
}

/** Every page of the mirror's answer through HTTP (`Svc-Max-Staleness-Seconds`, its cursor walked). */
async function mirrored(path: string, query: ReadonlyMap<string, ParamValue>): Promise<LiveAnswer> {
  const records: Json[] = [];
  let url = `${BASE}/${path}?${queryString(query)}`;
  for (let page = 0; ; page++) {
    assert.ok(page < 100, `${path}: the mirror's cursor ends`);
    const got = await callAsEndUser(sys, eu, "GET", url, undefined, STALE_OK);
    if (got.status !== 200)
      return { status: got.status, records, error: got.body.error as Json, warnings: [] };
    assert.equal(got.body.source, "mirror", `${describeQuery(path, query)}: answered from the mirror`);
    records.push(...(got.body.data as Json[]));
    const next = got.body.nextCursor;
    if (typeof next !== "string") return { status: 200, records, error: null, warnings: [] };
    url = `${BASE}/${path}?cursor=${encodeURIComponent(next)}`;
  }
}

/** The mirror's HTTP answer is the live one: the same status and code, or the same records in order. */
function assertMirrorServes(
  path: string,
  query: ReadonlyMap<string, ParamValue>,
  served: LiveAnswer,
  got: LiveAnswer,
): void {
  const what = `${describeQuery(path, query)} (mirror through HTTP)`;
  assert.equal(
    served.status,
    got.status,
    `${what}: ${JSON.stringify(served.error)} / ${JSON.stringify(got.error)}`,
  );
  if (got.status !== 200) {
    assert.equal(served.error?.code, got.error?.code, what);
    return;
  }
  const ids = (records: readonly Json[]): string[] => records.map((r) => String(r.id));
  assert.deepEqual(ids(served.records), ids(got.records), `${what}: the records or their order differ`);
  got.records.forEach((record, i) => {
    assert.deepEqual(served.records[i], record, `${what}: record ${i} (${String(record.id)}) differs`);
  });
}

/** Moves the clock one poll interval and waits until every group's mirror has a poll after `since`. */
async function polled(since: number): Promise<void> {
  await ledgerClock.advance(POLL_S * 1000 + 1000);
  let groups: { resource: string; state: string; asOf: string | null; error: unknown }[] = [];
  try {
    await eventually("the mirror polled every group", async () => {
      // Time goes on while the mirror works (a fill waits for another's, a poll for its turn).
      await ledgerClock.advance(1000);
      const response = await sys.call("GET", `/v1/end-users/${eu.endUserId}/mirror`);
      groups = ((await response.json()) as { resources: typeof groups }).resources;
      return (
        groups.length === GROUPS.length &&
        groups.every((g) => g.state === "ready" && g.asOf !== null && Date.parse(g.asOf) >= since)
      );
    });
  } catch (error) {
    throw new Error(
      `${(error as Error).message} (since ${new Date(since).toISOString()}): ${JSON.stringify(groups)}`,
    );
  }
}

/**
 * A query as the service validates it (the values the mirror is given): read from the query
 * string's text by each parameter's kind, as the list route reads it.
 */
function parsed(group: ResourceDefinition, query: ReadonlyMap<string, ParamValue>): Map<string, ParamValue> {
  const filters = listFilters(group).params;
  const limit: QueryParam = { name: "limit", kind: integerParam(1, 150), array: false, description: "" };
  const raw = Object.fromEntries(
    [...query].map(([name, value]) => [name, Array.isArray(value) ? value : String(value)]),
  );
  return parseQuery([...filters, limit], raw, filters);
}

/** Every record of a group, as the mirror copies it. */
async function copyOf(path: string): Promise<Json[]> {
  const params = new Set(listFilters(resource(path)).params.map((p) => p.name));
  const query = new Map<string, ParamValue>();
  if (params.has("status")) query.set("status", "all");
  if (params.has("includeLineItems")) query.set("includeLineItems", true);
  const got = await live(path, query);
  assert.equal(got.status, 200, `${path}: copy ${JSON.stringify(got.error)}`);
  return got.records;
}

/** The company file's offset, read from a record's timestamp as the mirror reads it. */
function offsetMinutes(records: readonly Json[]): number {
  const stamp = records.map((r) => r.updatedAt).find((t): t is string => typeof t === "string");
  const match = /([+-])(\d{2}):(\d{2})$/.exec(stamp ?? "");
  if (!match) return 0;
  return (match[1] === "-" ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
}

function describeQuery(path: string, query: ReadonlyMap<string, ParamValue>): string {
  return `seed ${SEED}: GET ${BASE}/${path}?${decodeURIComponent(queryString(query))}`;
}

/** Fails with the query and the first position where the mirror's answer and the live one differ. */
function assertSame(
  path: string,
  query: ReadonlyMap<string, ParamValue>,
  mirror: MirrorAnswer,
  got: LiveAnswer,
): void {
  const what = describeQuery(path, query);
  if (mirror.kind === "error") {
    assert.notEqual(
      got.status,
      200,
      `${what}: the mirror answered an error (${mirror.error.code}), live answered records`,
    );
    const error = got.error ?? {};
    assert.deepEqual(
      {
        code: mirror.error.code,
        param: mirror.error.param,
        integrationCode: mirror.error.integrationCode,
        message: mirror.error.message,
      },
      {
        code: error.code,
        param: error.param,
        integrationCode: error.integrationCode ?? null,
        message: error.message,
      },
      `${what}: the errors differ`,
    );
    return;
  }
  assert.equal(
    got.status,
    200,
    `${what}: live answered ${JSON.stringify(got.error)}, the mirror ${mirror.records.length} records`,
  );
  const ids = (records: readonly Json[]): string[] => records.map((r) => String(r.id));
  const mirrorIds = ids(mirror.records);
  const liveIds = ids(got.records);
  const at = mirrorIds.findIndex((id, i) => id !== liveIds[i]);
  const first = at >= 0 ? at : mirrorIds.length < liveIds.length ? mirrorIds.length : -1;
  const labelAt = (list: readonly Json[]): string => {
    const record = list[first];
    return record === undefined
      ? ""
      : ` ${JSON.stringify(record.fullName ?? record.name ?? record.refNumber)}`;
  };
  assert.equal(
    first,
    -1,
    `${what}: first difference at position ${first}: mirror ${mirrorIds[first] ?? "(end)"}${labelAt(mirror.records)}, live ${liveIds[first] ?? "(end)"}${labelAt(got.records)} (mirror ${mirrorIds.length} records, live ${liveIds.length})`,
  );
  got.records.forEach((record, i) => {
    assert.deepEqual(mirror.records[i], record, `${what}: record ${i} (${String(record.id)}) differs`);
  });
  assert.deepEqual(mirror.warnings ?? [], got.warnings, `${what}: the warnings differ`);
}

interface RoundReport {
  queries: number;
  nonEmpty: number;
  errors: number;
  warned: number;
  unsupported: number;
  refused: number;
}

/** `group param` of every parameter a compared query used. */
const covered = new Set<string>();

/** Compares `count` random queries spread over the groups; returns what they covered. */
async function round(count: number): Promise<RoundReport> {
  const copies = new Map<string, Json[]>();
  for (const path of GROUPS) copies.set(path, await copyOf(path));
  const report: RoundReport = { queries: 0, nonEmpty: 0, errors: 0, warned: 0, unsupported: 0, refused: 0 };
  const planned: [string, ListQuery][] = GROUPS.flatMap((path) =>
    everyFilterQueries(resource(path), copies.get(path) ?? [], random).map(
      (q) => [path, q] as [string, ListQuery],
    ),
  );
  for (let i = 0; i < count; i++) {
    const path = GROUPS[i % GROUPS.length] ?? "customers";
    planned.push([path, randomListQuery(resource(path), copies.get(path) ?? [], random)]);
  }
  for (const [path, sent] of planned) {
    const group = resource(path);
    const records = copies.get(path) ?? [];
    let query: Map<string, ParamValue>;
    try {
      query = parsed(group, sent);
    } catch (error) {
      // Filters the application cannot combine: the API refuses them before any answer.
      assert.ok(isServiceError(error), String(error));
      assertSame(path, sent, { kind: "error", error }, await live(path, sent));
      report.refused++;
      continue;
    }
    if (unsupportedParam(group, query) !== null) {
      report.unsupported++;
      continue;
    }
    for (const name of query.keys()) covered.add(`${path} ${name}`);
    const context = { utcOffsetMinutes: offsetMinutes(records), nowMs: ledgerClock.now() };
    const mirror = answer(group, records, query, context);
    const got = await live(path, query);
    assertSame(path, query, mirror, got);
    assertMirrorServes(path, query, await mirrored(path, query), got);
    report.queries++;
    if (mirror.kind === "error") report.errors++;
    else {
      if (mirror.records.length > 0) report.nonEmpty++;
      if (mirror.warnings !== undefined) report.warned++;
    }
  }
  return report;
}

// ---------------------------------------------------------------------------------------------
// changes made directly in the company file

let guid = 0;

/** Runs request messages in the company file, as the end user's own work would (not through the service). */
function direct(body: string): number {
  const xml = `<?xml version="1.0"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="continueOnError">${body}</QBXMLMsgsRq></QBXML>`;
  const result = processDocument(xml, {
    file: file(),
    host: eu.ledger.host,
    iterators: new Map(),
    newGuid: () => `{00000000-0000-0000-0000-${String(++guid).padStart(12, "0")}}`,
  });
  assert.ok(result.ok, "the message set is accepted");
  const responses = parseDocument(result.response)?.root.children[0]?.children ?? [];
  return responses.filter((rs) => attr(rs, "statusSeverity") !== "Error").length;
}

const ref = (name: string, id: string): string => `<${name}><ListID>${id}</ListID></${name}>`;
const pick = <T>(items: readonly T[]): T => random.pick(items);
const records = (object: string): LedgerRecord[] => file().recordsOf(object);
const stamp = (record: LedgerRecord): string => `<EditSequence>${record.editSequence}</EditSequence>`;
const txnDate = (): string => `2026-0${random.int(1, 3)}-${String(random.int(1, 28)).padStart(2, "0")}`;

function accountOfType(type: string): LedgerRecord {
  const found = records("Account").filter((a) => fieldText(a.fields, "AccountType") === type);
  assert.ok(found.length > 0, `the company has a ${type} account`);
  return pick(found);
}

/** One random change: a create, update, delete or void of a customer, vendor, item or transaction. */
function randomChange(n: number): string {
  const customer = pick(records("Customer"));
  const vendor = pick(records("Vendor"));
  const item = pick(records("ItemService"));
  const refNumber = random.chance(0.2)
    ? (fieldText(pick(records("Invoice")).fields, "RefNumber") ?? `D${n}`)
    : `D${n}-${random.int(1, 999)}`;
  switch (random.int(0, 13)) {
    case 0:
      return `<CustomerAddRq><CustomerAdd><Name>Direct ${n} ${pick(["alpha", "Beta", "gamma"])}</Name>${random.chance(0.3) ? "<IsActive>false</IsActive>" : ""}${random.chance(0.5) ? ref("ParentRef", customer.id) : ""}</CustomerAdd></CustomerAddRq>`;
    case 1:
      return `<CustomerModRq><CustomerMod><ListID>${customer.id}</ListID>${stamp(customer)}<IsActive>${random.chance(0.5) ? "false" : "true"}</IsActive></CustomerMod></CustomerModRq>`;
    case 2:
      return `<CustomerModRq><CustomerMod><ListID>${customer.id}</ListID>${stamp(customer)}<Name>${pick(["aaa", "ZZZ", "Mid"])} renamed ${n}</Name></CustomerMod></CustomerModRq>`;
    case 3:
      return `<VendorAddRq><VendorAdd><Name>Direct vendor ${n}</Name>${random.chance(0.3) ? "<IsActive>false</IsActive>" : ""}</VendorAdd></VendorAddRq>`;
    case 4:
      return `<VendorModRq><VendorMod><ListID>${vendor.id}</ListID>${stamp(vendor)}<IsActive>${random.chance(0.5) ? "false" : "true"}</IsActive></VendorMod></VendorModRq>`;
    case 5:
      return `<ItemServiceModRq><ItemServiceMod><ListID>${item.id}</ListID>${stamp(item)}<Name>Svc ${n}</Name></ItemServiceMod></ItemServiceModRq>`;
    case 6:
    case 7:
      return `<InvoiceAddRq><InvoiceAdd>${ref("CustomerRef", customer.id)}<TxnDate>${txnDate()}</TxnDate><RefNumber>${refNumber}</RefNumber><InvoiceLineAdd>${ref("ItemRef", item.id)}<Quantity>${random.int(1, 5)}</Quantity><Rate>${random.int(10, 90)}.00</Rate></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`;
    case 8: {
      const invoice = pick(records("Invoice"));
      return `<InvoiceModRq><InvoiceMod><TxnID>${invoice.id}</TxnID>${stamp(invoice)}<Memo>changed ${n}</Memo></InvoiceMod></InvoiceModRq>`;
    }
    case 9:
      return `<TxnDelRq><TxnDelType>Invoice</TxnDelType><TxnID>${pick(records("Invoice")).id}</TxnID></TxnDelRq>`;
    case 10:
      return `<TxnVoidRq><TxnVoidType>${pick(["Invoice", "Bill", "Check"])}</TxnVoidType><TxnID>${pick([...records("Invoice"), ...records("Bill"), ...records("Check")]).id}</TxnID></TxnVoidRq>`;
    case 11:
      return `<BillAddRq><BillAdd>${ref("VendorRef", vendor.id)}<TxnDate>${txnDate()}</TxnDate><RefNumber>B${n}</RefNumber><ExpenseLineAdd>${ref("AccountRef", accountOfType("Expense").id)}<Amount>${random.int(5, 500)}.00</Amount>${random.chance(0.5) ? ref("CustomerRef", customer.id) : ""}</ExpenseLineAdd></BillAdd></BillAddRq>`;
    case 12:
      return `<CheckAddRq><CheckAdd>${ref("AccountRef", accountOfType("Bank").id)}${ref("PayeeEntityRef", random.chance(0.5) ? vendor.id : customer.id)}<RefNumber>${random.int(9000, 9999)}</RefNumber><TxnDate>${txnDate()}</TxnDate><ExpenseLineAdd>${ref("AccountRef", accountOfType("Expense").id)}<Amount>${random.int(5, 500)}.00</Amount></ExpenseLineAdd></CheckAdd></CheckAddRq>`;
    default:
      return `<TxnDelRq><TxnDelType>Bill</TxnDelType><TxnID>${pick(records("Bill")).id}</TxnID></TxnDelRq>`;
  }
}

/** `count` random direct changes, the application's clock moving between them (minutes to days). */
async function directChanges(count: number): Promise<number> {
  let applied = 0;
  for (let n = 0; n < count; n++) {
    await ledgerClock.advance(random.pick([1000, 60_000, 3_600_000, 86_400_000]));
    applied += direct(randomChange(n + guid * 1000));
  }
  return applied;
}

before(async () => {
  sys = await startSystem(null, {
    ...E2E_CONFIG,
    mirror: true,
    config: {
      ...E2E_CONFIG.config,
      // Days pass between direct changes: the connector is not taken for gone meanwhile.
      CONNECTION_OFFLINE_AFTER_MS: String(90 * 86_400_000),
      CONNECTOR_TICKET_TTL_MS: String(90 * 86_400_000),
      CONNECTOR_IDLE_CLOSE_MS: String(90 * 86_400_000),
      MIRROR_POLL_INTERVAL_SECONDS: String(POLL_S),
    },
  });
  assert.ok(sys.fakeClock, "the system runs on a fake clock");
  ledgerClock = sys.fakeClock;
  eu = await sys.connectEndUser({
    companyName: "Mirror Query Co",
    seed: "demo",
    application: { clock: ledgerClock },
  });
  await bringOnline(sys, eu);
  const put = await sys.call("PUT", `/v1/end-users/${eu.endUserId}/mirror`, {
    body: { resources: [...GROUPS] },
  });
  assert.equal(put.status, 200, await put.clone().text());
});
after(() => sys.close());

describe("mirror query evaluator against the live application", () => {
  test("seeded-random queries over every supported filter answer exactly as the application", async () => {
    // Changes through the service too: a customer job and an invoice created with the API.
    const parent = records("Customer")[0];
    assert.ok(parent);
    const job = await callAsEndUser(sys, eu, "POST", `${BASE}/customers`, {
      name: "API job",
      parentId: parent.id,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    await ledgerClock.advance(86_400_000);
    const applied = await directChanges(40);
    assert.ok(applied >= 25, `most direct changes apply (${applied} of 40)`);
    await polled(ledgerClock.now());
    const report = await round(QUERIES_PER_ROUND);
    console.log(`seed ${SEED}, first round:`, report);
    assert.ok(report.queries >= 150, `enough queries compared: ${JSON.stringify(report)}`);
    assert.ok(
      report.nonEmpty >= report.queries / 3,
      `most queries select something: ${JSON.stringify(report)}`,
    );
  });

  test("after random creates, updates, deletes and voids made directly in the company file, a new copy answers exactly again", async () => {
    const applied = await directChanges(40);
    assert.ok(applied >= 25, `most direct changes apply (${applied} of 40)`);
    // The mirror learns of them only from its polls (the change feed's queries): one is enough.
    await polled(ledgerClock.now());
    const report = await round(QUERIES_PER_ROUND);
    console.log(`seed ${SEED}, after direct changes:`, report);
    // Every parameter the mirror answers was compared at least once in this run.
    const missed = GROUPS.flatMap((path) =>
      listFilters(resource(path))
        .params.map((p) => `${path} ${p.name}`)
        .filter((key) => !covered.has(key)),
    ).filter((key) => !["includeLinkedTransactions"].includes(key.split(" ")[1] ?? ""));
    assert.deepEqual(missed, [], "parameters never compared");
    assert.ok(report.queries >= 150, `enough queries compared: ${JSON.stringify(report)}`);
  });
});
