import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  CURSOR_IDLE_WINDOW_MS,
  CURSOR_SESSION_CAP_MS,
  OPEN_CURSORS_PER_CONNECTION,
} from "../../src/ledger/cursors.ts";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import { checkEveryAnswer } from "./openapi-contract.ts";
import {
  assertRefused,
  bringOnline,
  countRequests,
  E2E_CONFIG,
  sentMessageOf,
  assertAnswered,
  callAsEndUser,
  type JsonAnswer,
} from "./helpers.ts";

/**
 * Spec rows of "List parameters (query)" and the cursor limits shown to *filter*, not only to refuse
 * bad values (issue 25, item 1): through HTTP, the connector protocol and the simulated application,
 * each test creates records a filter visibly includes and excludes, asserts the exact set returned,
 * and reads the message the service sent (`GET /v1/requests/{id}/messages`) for the filter element.
 * The application runs on the service's fake clock, so records are modified at chosen times.
 */
let sys: System;
let eu: ConnectedEndUser;
type Json = Record<string, unknown>;

const BASE = "/v1/ledger-desktop";
/** A run-unique token, so name filters can be asserted to return exactly this file's records. */
const RUN = `Q${Date.now().toString(36).slice(-5)}`;

type Answer = JsonAnswer;

const call = (
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Answer> => callAsEndUser(sys, eu, method, path, body, headers);

const ok = assertAnswered;

const refused = assertRefused;

const sentMessage = (requestId: string): Promise<string> => sentMessageOf(sys, requestId);

/** The IDs of a list page, sorted (the application's order is not the rule under test). */
const idsOf = (body: Json): string[] => (body.data as Json[]).map((r) => String(r.id)).sort();
const sortedIds = (...records: Json[]): string[] => records.map((r) => String(r.id)).sort();

async function create(path: string, body: Json): Promise<Json> {
  return ok(await call("POST", `${BASE}/${path}`, body), 201, `create ${path}`);
}

before(async () => {
  sys = await startSystem(null, { ...E2E_CONFIG });
  // Every answer these rows read is also checked against the OpenAPI document.
  checkEveryAnswer(sys);
  const clock = sys.fakeClock;
  assert.ok(clock, "the system runs on a fake clock");
  eu = await sys.connectEndUser({ companyName: "Spec Rows Lists Co", application: { clock } });
  await bringOnline(sys, eu);
});
after(() => sys.close());

describe("List parameters (query): status", () => {
  test("status: defaults to active only; inactive and all select the others; ids and names return inactive records, ignore limit and exclude status", async () => {
    const active = await create("classes", { name: `${RUN} Status Active` });
    const inactive = await create("classes", { name: `${RUN} Status Inactive`, isActive: false });
    const vendorA = await create("vendors", { name: `${RUN} Status Vendor A` });
    const vendorB = await create("vendors", { name: `${RUN} Status Vendor B`, isActive: false });
    assert.equal(inactive.isActive, false);
    const mine = `nameStartsWith=${encodeURIComponent(`${RUN} Status`)}`;

    const byDefault = await call("GET", `${BASE}/classes?${mine}`);
    assert.deepEqual(idsOf(ok(byDefault, 200, "default")), sortedIds(active));
    assert.match(await sentMessage(byDefault.requestId), /<ActiveStatus>ActiveOnly<\/ActiveStatus>/);

    const inactiveOnly = await call("GET", `${BASE}/classes?${mine}&status=inactive`);
    assert.deepEqual(idsOf(ok(inactiveOnly, 200, "inactive")), sortedIds(inactive));
    assert.match(await sentMessage(inactiveOnly.requestId), /<ActiveStatus>InactiveOnly<\/ActiveStatus>/);

    const all = await call("GET", `${BASE}/classes?${mine}&status=all`);
    assert.deepEqual(idsOf(ok(all, 200, "all")), sortedIds(active, inactive));
    assert.match(await sentMessage(all.requestId), /<ActiveStatus>All<\/ActiveStatus>/);

    // ids and names select records whatever their state: the default does not apply to them.
    const byIds = await call("GET", `${BASE}/classes?ids=${String(inactive.id)}&ids=${String(active.id)}`);
    assert.deepEqual(idsOf(ok(byIds, 200, "ids")), sortedIds(active, inactive));
    const idsMessage = await sentMessage(byIds.requestId);
    assert.doesNotMatch(idsMessage, /ActiveStatus/);
    assert.match(idsMessage, new RegExp(`<ListID>${String(inactive.id)}</ListID>`));
    // ids return every match in one page: `limit` is ignored and there is no cursor.
    const ignored = ok(
      await call("GET", `${BASE}/vendors?ids=${String(vendorA.id)}&ids=${String(vendorB.id)}&limit=1`),
      200,
      "ids with limit",
    );
    assert.deepEqual(idsOf(ignored), sortedIds(vendorA, vendorB));
    assert.equal(ignored.nextCursor, null);
    const byNames = await call(
      "GET",
      `${BASE}/classes?fullNames=${encodeURIComponent(String(inactive.fullName).toUpperCase())}`,
    );
    assert.deepEqual(idsOf(ok(byNames, 200, "names")), sortedIds(inactive), "case-insensitive");
    assert.doesNotMatch(await sentMessage(byNames.requestId), /ActiveStatus/);

    // Sent together, status and ids (or names) are refused, naming the second, and nothing is queued.
    const before = await countRequests(sys);
    const both = refused(
      await call("GET", `${BASE}/classes?ids=${String(active.id)}&status=all`),
      400,
      "INVALID_PARAMETER",
      "status",
    );
    assert.match(String(both.message), /`ids`.*`status`/);
    refused(
      await call(
        "GET",
        `${BASE}/classes?status=inactive&fullNames=${encodeURIComponent(String(active.fullName))}`,
      ),
      400,
      "INVALID_PARAMETER",
      "status",
    );
    assert.equal(await countRequests(sys), before);
  });
});

describe("List parameters (query): updatedAfter, updatedBefore", () => {
  test("updatedAfter, updatedBefore: on or after / on or before, in the application's local time unless an offset is given", async () => {
    const clock = sys.fakeClock;
    assert.ok(clock);
    const older = await create("classes", { name: `${RUN} Updated Older` });
    await clock.advance(5000);
    const newer = await create("classes", { name: `${RUN} Updated Newer` });
    const mine = `nameStartsWith=${encodeURIComponent(`${RUN} Updated`)}`;
    // The application's timestamps carry its offset; the newer record's own instant is the boundary.
    const newerAt = String(newer.updatedAt);
    const offset = newerAt.slice(-6);
    const newerLocal = newerAt.slice(0, 19);
    assert.notEqual(String(older.updatedAt), newerAt);

    const after = await call("GET", `${BASE}/classes?${mine}&updatedAfter=${encodeURIComponent(newerLocal)}`);
    assert.deepEqual(idsOf(ok(after, 200, "updatedAfter")), sortedIds(newer), "on or after: inclusive");
    assert.match(
      await sentMessage(after.requestId),
      new RegExp(`<FromModifiedDate>${newerLocal}</FromModifiedDate>`),
    );

    const before = await call(
      "GET",
      `${BASE}/classes?${mine}&updatedBefore=${encodeURIComponent(String(older.updatedAt))}`,
    );
    assert.deepEqual(idsOf(ok(before, 200, "updatedBefore")), sortedIds(older), "on or before: inclusive");
    assert.match(await sentMessage(before.requestId), /<ToModifiedDate>[^<]+<\/ToModifiedDate>/);

    // The same instant written in UTC: one second after the newer record is after both.
    const utc = new Date(Date.parse(newerAt) + 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
    const afterUtc = await call("GET", `${BASE}/classes?${mine}&updatedAfter=${encodeURIComponent(utc)}`);
    assert.deepEqual(idsOf(ok(afterUtc, 200, "updatedAfter with an offset")), []);
    // Without its offset, that UTC wall time read as local time ({offset}) is another instant.
    const localReading = Date.parse(`${utc.slice(0, 19)}${offset}`);
    const expected = [older, newer].filter((r) => Date.parse(String(r.updatedAt)) >= localReading);
    const afterLocal = await call(
      "GET",
      `${BASE}/classes?${mine}&updatedAfter=${encodeURIComponent(utc.slice(0, 19))}`,
    );
    assert.deepEqual(idsOf(ok(afterLocal, 200, "updatedAfter local")), sortedIds(...expected));

    const between = await call(
      "GET",
      `${BASE}/classes?${mine}&updatedAfter=${encodeURIComponent(String(older.updatedAt))}&updatedBefore=${encodeURIComponent(newerAt)}`,
    );
    assert.deepEqual(idsOf(ok(between, 200, "range")), sortedIds(older, newer));
  });

  test("updatedAfter, updatedBefore on transactions: the modified-date range filter", async () => {
    const clock = sys.fakeClock;
    assert.ok(clock);
    const customer = await create("customers", { name: `${RUN} Modified Customer` });
    const invoice = (amount: string): Promise<Json> =>
      create("invoices", { customerId: customer.id, lines: [{ description: "Work", amount }] });
    const older = await invoice("10.00");
    await clock.advance(5000);
    const newer = await invoice("20.00");
    const mine = `customerIds=${String(customer.id)}`;
    const after = await call(
      "GET",
      `${BASE}/invoices?${mine}&updatedAfter=${encodeURIComponent(String(newer.updatedAt))}`,
    );
    assert.deepEqual(idsOf(ok(after, 200, "updatedAfter")), sortedIds(newer));
    assert.match(
      await sentMessage(after.requestId),
      /<ModifiedDateRangeFilter><FromModifiedDate>[^<]+<\/FromModifiedDate><\/ModifiedDateRangeFilter>/,
    );
    const before = await call(
      "GET",
      `${BASE}/invoices?${mine}&updatedBefore=${encodeURIComponent(String(older.updatedAt))}`,
    );
    assert.deepEqual(idsOf(ok(before, 200, "updatedBefore")), sortedIds(older));
    // A date alone is the whole local day: both were modified today.
    const today = String(newer.updatedAt).slice(0, 10);
    const day = await call("GET", `${BASE}/invoices?${mine}&updatedAfter=${today}&updatedBefore=${today}`);
    assert.deepEqual(idsOf(ok(day, 200, "one day")), sortedIds(older, newer));
  });
});

describe("List parameters (query): name matches and ranges", () => {
  test("nameStartsWith, nameContains, nameEndsWith: case-insensitive, and not combinable with nameFrom and nameTo", async () => {
    const alpha = await create("classes", { name: `${RUN}-Match Alpha` });
    const beta = await create("classes", { name: `${RUN}-Match Beta` });
    const other = await create("classes", { name: `Zz ${RUN}-Other alphA` });

    const starts = await call("GET", `${BASE}/classes?nameStartsWith=${encodeURIComponent(`${RUN}-match`)}`);
    assert.deepEqual(idsOf(ok(starts, 200, "starts")), sortedIds(alpha, beta));
    assert.match(
      await sentMessage(starts.requestId),
      new RegExp(
        `<NameFilter><MatchCriterion>StartsWith</MatchCriterion><Name>${RUN}-match</Name></NameFilter>`,
      ),
    );

    const contains = await call("GET", `${BASE}/classes?nameContains=${encodeURIComponent(`${RUN}-`)}`);
    assert.deepEqual(idsOf(ok(contains, 200, "contains")), sortedIds(alpha, beta, other));
    assert.match(await sentMessage(contains.requestId), /<MatchCriterion>Contains<\/MatchCriterion>/);

    const endsAlone = await call(
      "GET",
      `${BASE}/classes?nameEndsWith=${encodeURIComponent(`${RUN}-Other ALPHA`)}`,
    );
    assert.deepEqual(idsOf(ok(endsAlone, 200, "ends")), sortedIds(other));
    assert.match(await sentMessage(endsAlone.requestId), /<MatchCriterion>EndsWith<\/MatchCriterion>/);

    const before = await countRequests(sys);
    refused(
      await call("GET", `${BASE}/classes?nameContains=${RUN}&nameFrom=A`),
      400,
      "INVALID_PARAMETER",
      "nameFrom",
    );
    refused(
      await call("GET", `${BASE}/classes?nameTo=A&nameStartsWith=${RUN}`),
      400,
      "INVALID_PARAMETER",
      "nameTo",
    );
    refused(
      await call("GET", `${BASE}/classes?nameContains=${RUN}&nameEndsWith=a`),
      400,
      "INVALID_PARAMETER",
      "nameEndsWith",
    );
    assert.equal(await countRequests(sys), before);
  });

  test("nameFrom, nameTo: a range on name sort order, inclusive at both ends", async () => {
    const made: Json[] = [];
    for (const letter of ["a", "b", "c", "d"])
      made.push(await create("classes", { name: `${RUN}-Range ${letter}` }));
    const [ra, rb, rc, rd] = made as [Json, Json, Json, Json];

    const range = await call(
      "GET",
      `${BASE}/classes?nameFrom=${encodeURIComponent(`${RUN}-Range b`)}&nameTo=${encodeURIComponent(`${RUN}-RANGE C`)}`,
    );
    assert.deepEqual(idsOf(ok(range, 200, "range")), sortedIds(rb, rc));
    assert.match(
      await sentMessage(range.requestId),
      new RegExp(
        `<NameRangeFilter><FromName>${RUN}-Range b</FromName><ToName>${RUN}-RANGE C</ToName></NameRangeFilter>`,
      ),
    );
    // Open-ended: from alone, and to alone (bounded by this run's prefix).
    const from = await call(
      "GET",
      `${BASE}/classes?nameFrom=${encodeURIComponent(`${RUN}-Range c`)}&nameTo=${encodeURIComponent(`${RUN}-Range z`)}`,
    );
    assert.deepEqual(idsOf(ok(from, 200, "from")), sortedIds(rc, rd));
    const to = await call(
      "GET",
      `${BASE}/classes?nameFrom=${encodeURIComponent(`${RUN}-Range`)}&nameTo=${encodeURIComponent(`${RUN}-Range a`)}`,
    );
    assert.deepEqual(idsOf(ok(to, 200, "to")), sortedIds(ra));
  });
});

describe("List parameters (query): classIds, itemIds, currencyIds", () => {
  test("classIds (inventory items): only items of these classes", async () => {
    const red = await create("classes", { name: `${RUN} Class Red` });
    const blue = await create("classes", { name: `${RUN} Class Blue` });
    const item = async (name: string, classId?: unknown): Promise<Json> =>
      create("inventory-items", {
        name: `${RUN} ${name}`,
        ...(classId === undefined ? {} : { classId }),
      });
    const redItem = await item("Red Widget", red.id);
    const blueItem = await item("Blue Widget", blue.id);
    const plain = await item("Plain Widget");
    assert.deepEqual((redItem.class as Json).id, red.id);

    const mine = `nameStartsWith=${encodeURIComponent(RUN)}`;
    const redOnly = await call("GET", `${BASE}/inventory-items?${mine}&classIds=${String(red.id)}`);
    assert.deepEqual(idsOf(ok(redOnly, 200, "classIds")), sortedIds(redItem));
    assert.match(
      await sentMessage(redOnly.requestId),
      new RegExp(`<ClassFilter><ListID>${String(red.id)}</ListID></ClassFilter>`),
    );
    const both = await call(
      "GET",
      `${BASE}/inventory-items?${mine}&classIds=${String(red.id)}&classIds=${String(blue.id)}`,
    );
    assert.deepEqual(idsOf(ok(both, 200, "two classIds")), sortedIds(redItem, blueItem));
    const everything = await call("GET", `${BASE}/inventory-items?${mine}`);
    assert.deepEqual(idsOf(ok(everything, 200, "no filter")), sortedIds(redItem, blueItem, plain));
  });

  test("itemIds, currencyIds (price levels): only levels pricing that item, only levels in those currencies", async () => {
    const first = await create("inventory-items", { name: `${RUN} Priced One` });
    const second = await create("inventory-items", { name: `${RUN} Priced Two` });
    const euro = await create("currencies", { name: `${RUN} Euro`, currencyCode: "EUX" });
    const pound = await create("currencies", { name: `${RUN} Pound`, currencyCode: "GBX" });
    const level = async (name: string, extra: Json): Promise<Json> =>
      create("price-levels", { name: `${RUN} ${name}`, ...extra });
    const one = await level("PL One", {
      perItemPriceLevels: [{ itemId: first.id, customPrice: "9.50" }],
      currencyId: euro.id,
    });
    const two = await level("PL Two", {
      perItemPriceLevels: [{ itemId: second.id, customPrice: "3.25" }],
      currencyId: pound.id,
    });
    const three = await level("PL Three", {
      perItemPriceLevels: [{ itemId: second.id, customPricePercent: "5" }],
      currencyId: euro.id,
    });
    // A fixed-percentage level prices every item and has no currency of its own.
    const fixed = await level("PL Fixed", { fixedPercentage: "-10" });

    const mine = `nameStartsWith=${encodeURIComponent(RUN)}`;
    const byItem = await call("GET", `${BASE}/price-levels?${mine}&itemIds=${String(first.id)}`);
    assert.deepEqual(idsOf(ok(byItem, 200, "itemIds")), sortedIds(one));
    const bySecond = await call("GET", `${BASE}/price-levels?${mine}&itemIds=${String(second.id)}`);
    assert.deepEqual(idsOf(ok(bySecond, 200, "itemIds, second")), sortedIds(two, three));
    assert.match(
      await sentMessage(byItem.requestId),
      new RegExp(`<ItemRef><ListID>${String(first.id)}</ListID></ItemRef>`),
    );

    const byCurrency = await call("GET", `${BASE}/price-levels?${mine}&currencyIds=${String(euro.id)}`);
    assert.deepEqual(idsOf(ok(byCurrency, 200, "currencyIds")), sortedIds(one, three));
    assert.match(
      await sentMessage(byCurrency.requestId),
      new RegExp(`<CurrencyFilter><ListID>${String(euro.id)}</ListID></CurrencyFilter>`),
    );
    const all = await call("GET", `${BASE}/price-levels?${mine}`);
    assert.deepEqual(idsOf(ok(all, 200, "no filter")), sortedIds(one, two, three, fixed));
  });

  test("price levels: no cursor (every matching level at once; `cursor` is refused and nothing is queued)", async () => {
    const before = await countRequests(sys);
    refused(await call("GET", `${BASE}/price-levels?cursor=abc`), 400, "UNKNOWN_PARAMETER", "cursor");
    assert.equal(await countRequests(sys), before);
    const listed = ok(await call("GET", `${BASE}/price-levels`), 200, "price levels");
    assert.deepEqual(
      [listed.nextCursor, listed.hasMore, listed.remainingCount, listed.cursorExpiresAt],
      [null, false, null, null],
    );
    // Complete lists: `limit` caps the count where the query supports it, and still no cursor.
    assert.ok((listed.data as Json[]).length > 1, "this file has several price levels");
    const capped = await call("GET", `${BASE}/price-levels?limit=1`);
    const one = ok(capped, 200, "limit=1");
    assert.equal((one.data as Json[]).length, 1);
    assert.equal(one.nextCursor, null);
    assert.match(await sentMessage(capped.requestId), /<MaxReturned>1<\/MaxReturned>/);
  });
});

describe("Limits: open paged queries and the cursor idle window", () => {
  test(`open paged queries: ${OPEN_CURSORS_PER_CONNECTION} per connection, a fourth evicts the least recently used (evicted); a page inside the idle window keeps a cursor open`, async () => {
    const clock = sys.fakeClock;
    assert.ok(clock);
    for (let i = 0; i < 7; i++) await create("vendors", { name: `${RUN} Cursor Vendor ${i}` });
    const open = async (): Promise<string> => {
      const page = ok(await call("GET", `${BASE}/vendors?limit=1`), 200, "first page");
      assert.equal(typeof page.nextCursor, "string");
      return String(page.nextCursor);
    };
    const next = async (cursor: string): Promise<Answer> =>
      call("GET", `${BASE}/vendors?cursor=${encodeURIComponent(cursor)}`);

    // Pages a second apart (the service's clock), so "least recently used" is well defined.
    const tick = (): Promise<void> => clock.advance(1000);
    let first = await open();
    await tick();
    const second = await open();
    await tick();
    const third = await open();
    await tick();
    // The first is used again: the second is now the least recently used.
    first = String(ok(await next(first), 200, "first cursor, page 2").nextCursor);
    await tick();
    const fourth = await open();

    const evicted = refused(await next(second), 410, "CURSOR_EXPIRED", "cursor");
    assert.deepEqual(evicted.details, { reason: "evicted", pagesServed: 1, recordsServed: 1 });
    first = String(ok(await next(first), 200, "first cursor, page 3").nextCursor);
    const fourthPage = ok(await next(fourth), 200, "fourth cursor, page 2");

    // Idle window (injected clock): a page just inside it keeps the cursor open and restarts the
    // window; a cursor left alone past it has expired (idle_timeout).
    await clock.advance(CURSOR_IDLE_WINDOW_MS - 1000);
    first = String(ok(await next(first), 200, "first cursor inside the window").nextCursor);
    await clock.advance(CURSOR_IDLE_WINDOW_MS - 1000);
    ok(await next(first), 200, "first cursor, window restarted by its last page");
    const idle = refused(await next(String(fourthPage.nextCursor)), 410, "CURSOR_EXPIRED", "cursor");
    assert.deepEqual(idle.details, { reason: "idle_timeout", pagesServed: 2, recordsServed: 2 });
    const idleThird = refused(await next(third), 410, "CURSOR_EXPIRED", "cursor");
    assert.deepEqual(idleThird.details, { reason: "idle_timeout", pagesServed: 1, recordsServed: 1 });
  });

  test("query session cap: a cursor kept busy inside the idle window still ends after 2 minutes (session_ended)", async () => {
    const clock = sys.fakeClock;
    assert.ok(clock);
    const step = CURSOR_IDLE_WINDOW_MS - 1000;
    const pagesBeforeCap = Math.floor(CURSOR_SESSION_CAP_MS / step);
    for (let i = 0; i < pagesBeforeCap + 3; i++)
      await create("vendors", { name: `${RUN} Cap ${String(i).padStart(2, "0")}` });
    const mine = `nameStartsWith=${encodeURIComponent(`${RUN} Cap`)}`;
    let page = ok(await call("GET", `${BASE}/vendors?limit=1&${mine}`), 200, "first page");
    for (let served = 1; served <= pagesBeforeCap; served++) {
      await clock.advance(step);
      page = ok(
        await call("GET", `${BASE}/vendors?cursor=${encodeURIComponent(String(page.nextCursor))}`),
        200,
        `page ${served + 1} at ${served * step} ms`,
      );
      assert.equal(page.hasMore, true);
    }
    await clock.advance(step);
    const capped = refused(
      await call("GET", `${BASE}/vendors?cursor=${encodeURIComponent(String(page.nextCursor))}`),
      410,
      "CURSOR_EXPIRED",
      "cursor",
    );
    assert.deepEqual(capped.details, {
      reason: "session_ended",
      pagesServed: pagesBeforeCap + 1,
      recordsServed: pagesBeforeCap + 1,
    });
  });
});
