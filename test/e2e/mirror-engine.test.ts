import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startMirrorEngine } from "../../src/mirror/engine.ts";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { startSystem, type System } from "../../src/testing/system.ts";
import { bringOnline, callAsEndUser, E2E_CONFIG, eventually, json, stopConnector } from "./helpers.ts";

/**
 * The mirror engine's promises to callers and across instances (issue 26 item 2), through HTTP, the
 * connector protocol and the simulated application: a fill's pages go one at a time behind
 * developers' calls, so a caller's read waits behind at most one page; work an instance started is
 * finished by another when the first is gone; a fill queued while the PC is off completes when it
 * returns. The engines here are started by hand (`startMirrorEngine`), as main.ts starts one.
 */
let sys: System;
const documents: string[] = [];

before(async () => {
  sys = await startSystem(null, {
    ...E2E_CONFIG,
    // One record a page: a fill of the sample company's customers takes several pages.
    config: { ...E2E_CONFIG.config, MIRROR_FILL_PAGE_SIZE: "1", MIRROR_TICK_MS: "1000" },
  });
  watchApplication(sys, (xml) => {
    documents.push(xml);
  });
});
after(() => sys.close());

type Json = Record<string, unknown>;

async function stateOf(endUserId: string): Promise<string | undefined> {
  const response = await sys.call("GET", `/v1/end-users/${endUserId}/mirror`);
  const body = await json<{ resources: Array<{ state: string }> }>(response);
  return body.resources[0]?.state;
}

test("a caller's read submitted during a fill waits behind at most one fill page", async () => {
  const engine = startMirrorEngine(sys.deps);
  try {
    const eu = await sys.connectEndUser({ companyName: "Fill Order Co" });
    await bringOnline(sys, eu);
    const all = (await callAsEndUser(sys, eu, "GET", "/v1/ledger-desktop/customers?status=all")).body
      .data as Json[];
    assert.ok(all.length >= 4, "several pages to fill");
    const put = await sys.call("PUT", `/v1/end-users/${eu.endUserId}/mirror`, {
      body: { resources: ["customers"] },
    });
    assert.equal(put.status, 200);
    const fillPage = (xml: string): boolean =>
      /iterator="(Start|Continue)"/.test(xml) && !xml.includes("<ListID>");
    let checked = 0;
    for (const customer of all) {
      if ((await stateOf(eu.endUserId)) !== "filling") break;
      const before = documents.length;
      const read = await callAsEndUser(
        sys,
        eu,
        "GET",
        `/v1/ledger-desktop/customers?ids=${String(customer.id)}`,
      );
      assert.equal(read.status, 200);
      const mine = documents.findIndex(
        (xml, i) => i >= before && xml.includes(`<ListID>${String(customer.id)}</ListID>`),
      );
      assert.ok(mine >= before, "the caller's read reached the application");
      const pagesFirst = documents.slice(before, mine).filter(fillPage).length;
      assert.ok(pagesFirst <= 1, `${pagesFirst} fill pages went before the caller's read`);
      checked += 1;
    }
    assert.ok(checked >= 1, "a read was made during the fill");
    await eventually("the fill completed", async () => (await stateOf(eu.endUserId)) === "ready");
    assert.ok(documents.filter(fillPage).length >= all.length, "one page per record");
  } finally {
    await engine.stop();
  }
});

test("work an instance started is finished by another when the first is gone; a fill queued while the PC is off completes when it returns", async () => {
  const eu = await sys.connectEndUser({ companyName: "Takeover Co" });
  await bringOnline(sys, eu);
  await stopConnector(sys, eu);
  const first = startMirrorEngine(sys.deps);
  const put = await sys.call("PUT", `/v1/end-users/${eu.endUserId}/mirror`, {
    body: { resources: ["customers"] },
  });
  assert.equal(put.status, 200);
  const queued = await eventually("the first page is queued", async () => {
    const row = await sys.deps.db
      .selectFrom("mirrors")
      .selectAll()
      .where("end_user_id", "=", eu.endUserId)
      .executeTakeFirst();
    return row && row.request_ids.length > 0 && row;
  });
  const pageRequest = await sys.deps.db
    .selectFrom("requests")
    .select(["status", "background"])
    .where("id", "=", queued.request_ids[0] as string)
    .executeTakeFirstOrThrow();
  assert.deepEqual(pageRequest, { status: "queued", background: true }, "waiting for the PC");
  await first.stop();

  const second = startMirrorEngine(sys.deps);
  try {
    await second.pass();
    await bringOnline(sys, eu);
    await eventually(
      "the second instance finished the fill",
      async () => (await stateOf(eu.endUserId)) === "ready",
    );
    const row = await sys.deps.db
      .selectFrom("mirrors")
      .selectAll()
      .where("end_user_id", "=", eu.endUserId)
      .executeTakeFirstOrThrow();
    assert.ok(row.as_of, "as of a time");
    const live = (await callAsEndUser(sys, eu, "GET", "/v1/ledger-desktop/customers?status=all")).body
      .data as Json[];
    assert.equal(row.records, live.length);
  } finally {
    await second.stop();
  }
});
