import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createProject } from "../../src/tenancy/api-keys.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";
import {
  asOtherUser,
  assertAnswered,
  assertRefused,
  bringOnline,
  callAsEndUser,
  countRequests,
  E2E_CONFIG,
  eventually,
  json,
  otherUserOf,
  stopConnector,
  xmlText,
  type JsonAnswer,
} from "./helpers.ts";

/**
 * The mirror end to end (issue 26): through HTTP, the connector protocol and the simulated
 * application on the service's fake clock. An end user's groups are mirrored; reads that allow the
 * copy's age are answered from it (also while the PC is off) and say so; reads without the header
 * stay live; writes through the service are read back at once; changes made in the company file by
 * another user arrive with the next poll; bad input changes nothing; nothing crosses tenants.
 */
let sys: System;
let eu: ConnectedEndUser;
type Json = Record<string, unknown>;
const BASE = "/v1/ledger-desktop";
const INTERVAL_S = 60;
const STALE_OK = { "Svc-Max-Staleness-Seconds": "3600" };

const call = (
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<JsonAnswer> => callAsEndUser(sys, eu, method, path, body, headers);

async function mirrorOf(endUserId = eu.endUserId): Promise<{ status: number; body: Json }> {
  const response = await sys.call("GET", `/v1/end-users/${endUserId}/mirror`);
  return { status: response.status, body: await json(response) };
}

async function putMirror(
  resources: unknown,
  endUserId = eu.endUserId,
): Promise<{ status: number; body: Json }> {
  const response = await sys.call("PUT", `/v1/end-users/${endUserId}/mirror`, { body: { resources } });
  return { status: response.status, body: await json(response) };
}

type Group = { resource: string; state: string; records: number; asOf: string | null };
const groupsOf = (body: Json): Group[] => body.resources as Group[];

async function untilReady(resources: string[]): Promise<Group[]> {
  return eventually(`mirror of ${resources.join(", ")} ready`, async () => {
    const groups = groupsOf((await mirrorOf()).body);
    return resources.every((r) => groups.find((g) => g.resource === r)?.state === "ready") && groups;
  });
}

/** Every record of a live list, all pages (inactive ones too). */
async function liveAll(path: string, query = ""): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const page = assertAnswered(
      await call("GET", `${BASE}/${path}?limit=50${query}${suffix}`),
      200,
      "live page",
    );
    assert.equal(page.source, "live");
    out.push(...(page.data as Json[]));
    cursor = page.nextCursor as string | null;
  } while (cursor);
  return out;
}

/** Every record of a mirrored list, all pages. */
async function mirroredAll(path: string, query = ""): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const page = assertAnswered(
      await call("GET", `${BASE}/${path}?limit=50${query}${suffix}`, undefined, STALE_OK),
      200,
      "mirrored page",
    );
    assert.equal(page.source, "mirror", "answered from the mirror");
    out.push(...(page.data as Json[]));
    cursor = page.nextCursor as string | null;
  } while (cursor);
  return out;
}

/** Moves the service clock one poll interval and waits for the polls it starts to be applied. */
async function onePoll(...resources: string[]): Promise<void> {
  const asOf = (body: Json, resource: string): string | null | undefined =>
    groupsOf(body).find((g) => g.resource === resource)?.asOf;
  const before = (await mirrorOf()).body;
  await sys.fakeClock?.advance(INTERVAL_S * 1000 + 1000);
  await eventually(`a poll of ${resources.join(", ")}`, async () => {
    const now = (await mirrorOf()).body;
    return resources.every(
      (r) =>
        groupsOf(now).find((g) => g.resource === r)?.state === "ready" && asOf(now, r) !== asOf(before, r),
    );
  });
}

before(async () => {
  sys = await startSystem(null, {
    ...E2E_CONFIG,
    mirror: true,
    config: {
      ...E2E_CONFIG.config,
      MIRROR_POLL_INTERVAL_SECONDS: String(INTERVAL_S),
      MIRROR_TICK_MS: "1000",
      // A short overlap: a poll does not read again what the sample company wrote at start.
      CHANGE_FEED_OVERLAP_SECONDS: "2",
    },
  });
  checkEveryAnswer(sys);
  const clock = sys.fakeClock;
  assert.ok(clock);
  eu = await sys.connectEndUser({ companyName: "Mirror Co", application: { clock } });
  await bringOnline(sys, eu);
  const put = await putMirror(["invoices", "customers"]);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual(
    groupsOf(put.body).map((g) => [g.resource, g.state]),
    [
      ["customers", "filling"],
      ["invoices", "filling"],
    ],
  );
});
after(() => sys.close());

describe("mirror: turning it on, filling, reading", () => {
  test("PUT /v1/end-users/{id}/mirror fills each group; reads with Svc-Max-Staleness-Seconds answer from the copy exactly as live, with Svc-Data-As-Of and Age", async () => {
    const ready = await untilReady(["customers", "invoices"]);
    const liveCustomers = await liveAll("customers", "&status=all");
    assert.ok(liveCustomers.length > 3, "the sample company has customers");
    assert.equal(ready.find((g) => g.resource === "customers")?.records, liveCustomers.length);

    const response = await sys.call("GET", `${BASE}/customers?limit=2`, {
      endUserId: eu.endUserId,
      headers: STALE_OK,
    });
    assert.equal(response.status, 200);
    const asOf = response.headers.get("svc-data-as-of");
    assert.ok(asOf && Number.isFinite(Date.parse(asOf)), "Svc-Data-As-Of is a time");
    assert.equal(asOf, ready.find((g) => g.resource === "customers")?.asOf);
    assert.match(response.headers.get("age") ?? "", /^\d+$/);
    const page = await json(response);
    assert.equal(page.source, "mirror");
    assert.equal((page.data as Json[]).length, 2);
    assert.equal(page.hasMore, true);

    // The same records in the same order as the application answers, page by page.
    assert.deepEqual(await mirroredAll("customers"), await liveAll("customers"));
    assert.deepEqual(await mirroredAll("customers", "&status=all"), liveCustomers);
    assert.deepEqual(await mirroredAll("invoices"), await liveAll("invoices"));
    const first = liveCustomers[0] as Json;
    const retrieved = await call("GET", `${BASE}/customers/${String(first.id)}`, undefined, STALE_OK);
    assert.deepEqual(assertAnswered(retrieved, 200, "retrieve"), first);
    assert.doesNotMatch(retrieved.requestId, /^req_/, "no Request was made");
  });

  test("without the header, or with a copy older than allowed, the call goes live (source: live)", async () => {
    const requests = await countRequests(sys);
    const live = assertAnswered(await call("GET", `${BASE}/customers?limit=1`), 200, "live");
    assert.equal(live.source, "live");
    await sys.fakeClock?.advance(1000);
    const strict = assertAnswered(
      await call("GET", `${BASE}/customers?limit=1`, undefined, { "Svc-Max-Staleness-Seconds": "0" }),
      200,
      "too old",
    );
    assert.equal(strict.source, "live");
    assert.equal(await countRequests(sys), requests + 2, "both went to the application");
    const mirrored = assertAnswered(
      await call("GET", `${BASE}/customers?limit=1`, undefined, STALE_OK),
      200,
      "mirror",
    );
    assert.equal(mirrored.source, "mirror");
    assert.equal(await countRequests(sys), requests + 2, "the mirror makes no Request");
  });
});

describe("mirror: the staleness contract's edges", () => {
  test("a bad Svc-Max-Staleness-Seconds is 400 naming it, and nothing is queued", async () => {
    const requests = await countRequests(sys);
    for (const bad of ["-1", "1.5", "86401", "abc", "", " 10x"]) {
      assertRefused(
        await call("GET", `${BASE}/customers`, undefined, { "Svc-Max-Staleness-Seconds": bad }),
        400,
        "INVALID_PARAMETER",
        "Svc-Max-Staleness-Seconds",
        bad,
      );
    }
    assert.equal(await countRequests(sys), requests);
  });

  test("PUT with an unknown or unmirrorable group, or one named twice, is 400 naming it, and nothing changes", async () => {
    const before = await mirrorOf();
    assertRefused(await putMirror(["customers", "nonsense"]), 400, "INVALID_PARAMETER", "resources[1]");
    assertRefused(await putMirror(["company"]), 400, "INVALID_PARAMETER", "resources[0]");
    assertRefused(await putMirror(["customers", "customers"]), 400, "INVALID_PARAMETER", "resources[1]");
    assertRefused(await putMirror("customers"), 400, "INVALID_PARAMETER", "resources");
    // The same groups (a poll may move their `asOf` meanwhile; the refused PUTs change nothing).
    assert.deepEqual(
      groupsOf((await mirrorOf()).body).map((g) => g.resource),
      groupsOf(before.body).map((g) => g.resource),
    );
  });

  test("another project's key, or the other mode's, sees no mirror: 404; its reads with the header stay its own (404 end user), nothing queued", async () => {
    const foreign = await createProject(sys.deps, { name: "Mirror Foreign" });
    const requests = await countRequests(sys);
    for (const key of [foreign.keys.secretLive, sys.project.keys.secretTest]) {
      const seen = await sys.call("GET", `/v1/end-users/${eu.endUserId}/mirror`, { key });
      assert.equal(seen.status, 404, await seen.clone().text());
      const changed = await sys.call("PUT", `/v1/end-users/${eu.endUserId}/mirror`, {
        key,
        body: { resources: [] },
      });
      assert.equal(changed.status, 404);
      const read = await sys.call("GET", `${BASE}/customers?limit=1`, {
        key,
        endUserId: eu.endUserId,
        headers: STALE_OK,
      });
      assert.equal(read.status, 404, "the end user is not the caller's");
    }
    const publishable = await sys.call("GET", `/v1/end-users/${eu.endUserId}/mirror`, {
      key: sys.project.keys.publishableLive,
    });
    assert.equal(publishable.status, 401, "secret keys only");
    assert.equal(await countRequests(sys), requests);
    assert.ok(groupsOf((await mirrorOf()).body).length > 0, "the mirror is untouched");
  });
});

describe("mirror: while the PC is off, and after", () => {
  test("with the connector stopped, reads that allow the age answer from the mirror at once; without the header they wait; a change made meanwhile arrives with the next poll", async () => {
    await untilReady(["customers"]);
    const other = await otherUserOf(sys, eu);
    await stopConnector(sys, eu);
    const started = Date.now();
    const mirrored = assertAnswered(
      await call("GET", `${BASE}/customers?limit=5`, undefined, STALE_OK),
      200,
      "off",
    );
    assert.equal(mirrored.source, "mirror");
    assert.ok(Date.now() - started < 2000, "no wait for the PC");
    const waiting = await call("GET", `${BASE}/customers?limit=1`, undefined, { Prefer: "respond-async" });
    assert.equal(waiting.status, 202, "without the header the read is queued for the PC");

    const name = `Mirror Offline ${Date.now().toString(36)}`;
    const added = xmlText(
      await asOtherUser(
        other,
        `<CustomerAddRq><CustomerAdd><Name>${name}</Name></CustomerAdd></CustomerAddRq>`,
      ),
      "ListID",
    );
    assert.ok(!(await mirroredAll("customers")).some((c) => c.id === added), "not yet: the PC is off");
    await bringOnline(sys, eu);
    await onePoll("customers");
    const after = await mirroredAll("customers");
    assert.ok(
      after.some((c) => c.id === added && c.name === name),
      "the change arrived with the poll",
    );
    assert.deepEqual(after, await liveAll("customers"));
  });
});

describe("mirror: values computed from other records", () => {
  test("an invoice another user writes moves its customer's balance in the mirror; a payment marks it paid; deleting the payment and the invoice moves them back — each within one poll, equal to live", async () => {
    await untilReady(["customers", "invoices"]);
    const other = await otherUserOf(sys, eu);
    const customer = (await liveAll("customers")).find((c) => c.parent === null) as Json;
    const item = (
      assertAnswered(await call("GET", `${BASE}/service-items?limit=1`), 200, "an item").data as Json[]
    )[0] as Json;
    const same = async (what: string): Promise<void> => {
      assert.deepEqual(await mirroredAll("customers"), await liveAll("customers"), `customers ${what}`);
      assert.deepEqual(await mirroredAll("invoices"), await liveAll("invoices"), `invoices ${what}`);
    };
    const balanceOf = async (): Promise<unknown> =>
      (await mirroredAll("customers")).find((c) => c.id === customer.id)?.totalBalance;
    const before = await balanceOf();

    const invoice = xmlText(
      await asOtherUser(
        other,
        `<InvoiceAddRq><InvoiceAdd><CustomerRef><ListID>${String(customer.id)}</ListID></CustomerRef><InvoiceLineAdd><ItemRef><ListID>${String(item.id)}</ListID></ItemRef><Quantity>1</Quantity><Rate>123.45</Rate></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>`,
      ),
      "TxnID",
    );
    await onePoll("customers", "invoices");
    assert.notEqual(await balanceOf(), before, "the customer's balance moved in the mirror");
    await same("after the invoice");

    const payment = xmlText(
      await asOtherUser(
        other,
        `<ReceivePaymentAddRq><ReceivePaymentAdd><CustomerRef><ListID>${String(customer.id)}</ListID></CustomerRef><TotalAmount>123.45</TotalAmount><AppliedToTxnAdd><TxnID>${invoice}</TxnID><PaymentAmount>123.45</PaymentAmount></AppliedToTxnAdd></ReceivePaymentAdd></ReceivePaymentAddRq>`,
      ),
      "TxnID",
    );
    await onePoll("customers", "invoices");
    const paid = (await mirroredAll("invoices")).find((i) => i.id === invoice);
    assert.equal(paid?.isPaid, true, "the payment marked the invoice paid in the mirror");
    await same("after the payment");

    await asOtherUser(
      other,
      `<TxnDelRq><TxnDelType>ReceivePayment</TxnDelType><TxnID>${payment}</TxnID></TxnDelRq>`,
    );
    await onePoll("customers", "invoices");
    assert.equal((await mirroredAll("invoices")).find((i) => i.id === invoice)?.isPaid, false);
    await same("after deleting the payment");

    await asOtherUser(
      other,
      `<TxnDelRq><TxnDelType>Invoice</TxnDelType><TxnID>${invoice}</TxnID></TxnDelRq>`,
    );
    await onePoll("customers", "invoices");
    assert.equal(await balanceOf(), before, "back where it was");
    await same("after deleting the invoice");
  });
});

describe("mirror: read-your-writes, deletion", () => {
  test("a write through the service is in the next mirrored read at once: create, update, delete", async () => {
    await untilReady(["customers"]);
    const created = assertAnswered(
      await call("POST", `${BASE}/customers`, { name: `Mirror Mine ${Date.now().toString(36)}` }),
      201,
      "create",
    );
    const listed = await mirroredAll("customers");
    assert.deepEqual(
      listed.find((c) => c.id === created.id),
      created,
      "the created record, as the application answered it",
    );
    const updated = assertAnswered(
      await call("POST", `${BASE}/customers/${String(created.id)}`, {
        revisionNumber: created.revisionNumber,
        phone: "555-0199",
      }),
      200,
      "update",
    );
    const retrieved = await call("GET", `${BASE}/customers/${String(created.id)}`, undefined, STALE_OK);
    assert.equal(assertAnswered(retrieved, 200, "retrieve").phone, "555-0199");
    assert.equal(retrieved.body.revisionNumber, updated.revisionNumber);
    assertAnswered(
      await call("DELETE", `${BASE}/customers/${String(created.id)}?confirm=true`),
      200,
      "delete",
    );
    assertRefused(
      await call("GET", `${BASE}/customers/${String(created.id)}`, undefined, STALE_OK),
      404,
      "LEDGER_OBJECT_NOT_FOUND",
      "id",
    );
  });

  test("PUT [] turns the mirror off and deletes the copy; deleting the end user deletes its mirror", async () => {
    const solo = await sys.connectEndUser({
      companyName: "Mirror Solo",
      application: { clock: sys.fakeClock! },
    });
    await bringOnline(sys, solo);
    assert.equal((await putMirror(["customers"], solo.endUserId)).status, 200);
    await eventually("customers ready", async () =>
      groupsOf((await mirrorOf(solo.endUserId)).body).every((g) => g.state === "ready"),
    );
    const rows = async (): Promise<number> =>
      Number(
        (
          await sys.deps.db
            .selectFrom("mirror_records")
            .select(sys.deps.db.fn.countAll<string>().as("n"))
            .where("end_user_id", "=", solo.endUserId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.ok((await rows()) > 0);
    const off = await putMirror([], solo.endUserId);
    assert.deepEqual(groupsOf(off.body), []);
    assert.equal(await rows(), 0, "the copy is gone");
    assert.equal((await putMirror(["customers"], solo.endUserId)).status, 200);
    await eventually("customers ready again", async () =>
      groupsOf((await mirrorOf(solo.endUserId)).body).every((g) => g.state === "ready"),
    );
    const deleted = await sys.call("DELETE", `/v1/end-users/${solo.endUserId}`);
    assert.equal(deleted.status, 200);
    assert.equal(await rows(), 0);
    const left = await sys.deps.db
      .selectFrom("mirrors")
      .selectAll()
      .where("end_user_id", "=", solo.endUserId)
      .execute();
    assert.deepEqual(left, []);
  });
});
