import assert from "node:assert/strict";
import { test } from "node:test";
import { headerOf, startDroppingProxy } from "../../packages/client/test/dropping-proxy.ts";
import { watchApplication } from "../../src/testing/application-watch.ts";
import { startSystem } from "../../src/testing/system.ts";
import { E2E_CONFIG, advanceUntil, bringOnline, eventually } from "./helpers.ts";

/**
 * Issue 27, item 1 (decision 0045): a client built by the common SDK generator's rules — retry
 * connection errors, 408, 409, 429 and ≥ 500, twice, with a short backoff, unless the answer says
 * `x-should-retry: false` (`true` forces a retry), and no Idempotency-Key — writes customers
 * through a proxy that loses answers and to a PC whose application freezes, so that some writes
 * time out after they were sent. It obeys `X-Should-Retry` and nothing else of ours: the service
 * must tell it when to stop. No name may reach the company file twice; the client must stop at
 * the first `false`; a 409 stale revision is not resent.
 */

/** One attempt as the client saw it. */
interface Attempt {
  status: number | "connection_error";
  code: string | null;
  xShouldRetry: string | null;
  svcShouldRetry: string | null;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The generator's rules, in ~30 lines: 3 attempts at most, 50 ms then 100 ms apart. */
async function generatedSdkCall(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  attempts: Attempt[],
): Promise<Response | null> {
  for (let attempt = 1; ; attempt++) {
    let response: Response | null = null;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const error = ((await response.clone().json()) as { error?: { code?: string } }).error;
      attempts.push({
        status: response.status,
        code: error?.code ?? null,
        xShouldRetry: response.headers.get("x-should-retry"),
        svcShouldRetry: response.headers.get("svc-should-retry"),
      });
    } catch {
      attempts.push({ status: "connection_error", code: null, xShouldRetry: null, svcShouldRetry: null });
    }
    const said = response?.headers.get("x-should-retry");
    const status = response?.status ?? 0;
    const retry =
      said === "true" ||
      (said !== "false" && (response === null || [408, 409, 429].includes(status) || status >= 500));
    if (!retry || attempt === 3) return response;
    await sleep(50 * attempt);
  }
}

test(
  "a generator-style client with no Idempotency-Key, told by X-Should-Retry when to stop: no customer applied twice",
  { timeout: 120_000 },
  async (t) => {
    const sys = await startSystem(t, E2E_CONFIG);
    const handed: string[] = [];
    const eu = await sys.connectEndUser({ companyName: "Retry Signal Co" });
    // Every request document the application was handed (from the first session): how often each name reached it.
    watchApplication(eu, (xml) => void handed.push(xml));
    await bringOnline(sys, eu);
    const file = eu.ledger.companyFile(eu.companyFilePath);
    const reached = (name: string): number =>
      handed.filter((xml) => xml.includes(`<Name>${name}</Name>`)).length;
    // The answer to the next customer create is lost (after the service applied it) when armed.
    let loseNext = false;
    const proxy = await startDroppingProxy(
      sys.url,
      (line) => {
        if (!loseNext || !line.startsWith("POST /v1/ledger-desktop/customers ")) return false;
        loseNext = false;
        return true;
      },
      2,
    );
    t.after(() => proxy.close());

    const log = new Map<string, Attempt[]>();
    const create = (name: string, timeoutSeconds = 60): Promise<Response | null> => {
      const attempts: Attempt[] = [];
      log.set(name, attempts);
      const headers = {
        authorization: `Bearer ${eu.key}`,
        "svc-end-user-id": eu.endUserId,
        "svc-timeout-seconds": String(timeoutSeconds),
      };
      return generatedSdkCall(proxy.url, "POST", "/v1/ledger-desktop/customers", headers, { name }, attempts);
    };
    const requestStatuses = async (): Promise<string[]> => {
      const page = (await (await sys.call("GET", "/v1/requests?limit=10")).json()) as {
        data: { status: string }[];
      };
      return page.data.map((r) => r.status);
    };

    // 1. Answers lost on the way back: the client resends (a connection error says nothing), the
    //    resend is a new Request the application refuses (the name exists), and that 409 says false.
    for (const name of ["RS Dropped 1", "RS Dropped 2"]) {
      loseNext = true;
      await create(name);
    }
    assert.equal(proxy.dropped, 2);

    // 2. The application freezes: the first write is sent and never answered within its 5 s, the
    //    next two wait behind it. Moving the clock times all three out: the sent one 504
    //    LEDGER_REQUEST_TIMEOUT (it may still be applied: false), the waiting ones 504
    //    REQUEST_TIMEOUT_NOT_SENT (canceled unsent: true, resent as new Requests).
    eu.ledger.setFault({ kind: "not_responding" });
    const frozen = create("RS Frozen 1", 5);
    await eventually(
      "the first write handed to the frozen application",
      async () => (await requestStatuses())[0] === "sent",
    );
    const waiting = [create("RS Frozen 2", 5), create("RS Frozen 3", 5)];
    await eventually(
      "two writes waiting behind it",
      async () => (await requestStatuses()).slice(0, 3).join() === "queued,queued,sent",
    );
    // (Stepped until the first write's answer: a client that resent it would wait behind it again.)
    const frozenAnswer = await advanceUntil(sys, frozen);
    assert.equal(frozenAnswer?.status, 504);
    // Time for any resend of the timed-out write to be made (the client's backoff is 50 ms).
    await eventually("the waiting writes resent", async () =>
      ["RS Frozen 2", "RS Frozen 3"].every((name) => (log.get(name)?.length ?? 0) >= 1),
    );
    await sleep(300);
    // The application answers again: the timed-out write completes, the resent ones run.
    eu.ledger.setFault(null);
    await Promise.all(waiting);

    // 3. A stale revision: the update is refused 409 and says false; the client does not resend it.
    const created = (await (await create("RS Stale"))?.json()) as { id: string; revisionNumber: string };
    const fresh = await sys.call("POST", `/v1/ledger-desktop/customers/${created.id}`, {
      endUserId: eu.endUserId,
      body: { revisionNumber: created.revisionNumber, companyName: "Fresh" },
    });
    assert.equal(fresh.status, 200, await fresh.clone().text());
    const staleAttempts: Attempt[] = [];
    const stale = await generatedSdkCall(
      proxy.url,
      "POST",
      `/v1/ledger-desktop/customers/${created.id}`,
      { authorization: `Bearer ${eu.key}`, "svc-end-user-id": eu.endUserId },
      { revisionNumber: created.revisionNumber, companyName: "Stale" },
      staleAttempts,
    );
    assert.equal(stale?.status, 409);
    assert.deepEqual(
      staleAttempts.map((a) => [a.status, a.code, a.xShouldRetry]),
      [[409, "LEDGER_REVISION_NUMBER_STALE", "false"]],
      "a stale revision is sent once",
    );

    const summary = JSON.stringify(Object.fromEntries(log), null, 1);
    // The client never sent a key: nothing but the service's signal kept it from applying twice.
    assert.ok(proxy.heads.every((head) => headerOf(head, "idempotency-key") === undefined));
    // Every answer carried both headers, equal.
    for (const attempt of [...log.values(), staleAttempts].flat()) {
      if (attempt.status === "connection_error") continue;
      assert.equal(attempt.xShouldRetry, attempt.svcShouldRetry, summary);
      if (attempt.status >= 400) assert.match(String(attempt.xShouldRetry), /^(true|false)$/, summary);
    }
    // The client stopped at the first `false`, and only there.
    for (const attempts of log.values()) {
      const stop = attempts.findIndex((a) => a.xShouldRetry === "false");
      if (stop !== -1) assert.equal(stop, attempts.length - 1, `nothing after a false: ${summary}`);
    }
    const seen = (name: string): unknown[] =>
      (log.get(name) ?? []).map((a) => [a.status, a.code, a.xShouldRetry]);
    for (const name of ["RS Dropped 1", "RS Dropped 2"]) {
      assert.deepEqual(
        seen(name),
        [
          ["connection_error", null, null],
          [409, "LEDGER_DUPLICATE_NAME", "false"],
        ],
        name,
      );
    }
    assert.deepEqual(
      seen("RS Frozen 1"),
      [[504, "LEDGER_REQUEST_TIMEOUT", "false"]],
      "the sent write is not resent",
    );
    for (const name of ["RS Frozen 2", "RS Frozen 3"]) {
      assert.deepEqual((log.get(name) ?? [])[0]?.code, "REQUEST_TIMEOUT_NOT_SENT", name);
      assert.equal((log.get(name) ?? []).at(-1)?.status, 201, `${name}: resent after it was canceled unsent`);
    }

    // The application: the timed-out write and the canceled ones reached it once; a lost answer's
    // resend reached it a second time and was refused by name (the hole only a key closes).
    await eventually("the frozen write applied", async () => reached("RS Frozen 1") === 1);
    for (const name of ["RS Frozen 1", "RS Frozen 2", "RS Frozen 3", "RS Stale"])
      assert.equal(reached(name), 1, name);
    for (const name of ["RS Dropped 1", "RS Dropped 2"]) assert.equal(reached(name), 2, name);
    // The company file: every name exactly once.
    const names = file
      .recordsOf("Customer")
      .map((record) => file.fullNameOf(record))
      .filter((name) => name.startsWith("RS "))
      .sort();
    assert.deepEqual(names, [
      "RS Dropped 1",
      "RS Dropped 2",
      "RS Frozen 1",
      "RS Frozen 2",
      "RS Frozen 3",
      "RS Stale",
    ]);
  },
);
