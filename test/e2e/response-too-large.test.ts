import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startSystem, type ConnectedEndUser, type System } from "../../src/testing/system.ts";
import {
  E2E_CONFIG,
  bringOnline,
  customerAdd,
  json,
  passthroughPath,
  type RequestResource,
  type ErrorBody,
} from "./helpers.ts";

/**
 * LEDGER_RESPONSE_TOO_LARGE (decision 0019): a read whose answer from the application is larger
 * than `LEDGER_RESPONSE_LIMIT_BYTES` fails with 422 and a fix saying to narrow the filters or lower
 * `limit`; nothing of it is stored. A list page that is too large ends its cursor (the
 * application's iterator moved past it). A document holding a write is always read whole, so its
 * outcome stays known. Real answers of the simulated company file against a small limit, and the
 * simulated application's `large_answer` fault.
 */
const LIMIT = 2000;
let sys: System;
let eu: ConnectedEndUser;

async function assertTooLarge(response: Response): Promise<ErrorBody["error"]> {
  const text = await response.clone().text();
  assert.equal(response.status, 422, text);
  const { error } = await json<ErrorBody>(response);
  assert.equal(error.code, "LEDGER_RESPONSE_TOO_LARGE", text);
  assert.equal(error.type, "INTEGRATION_ERROR");
  assert.equal(error.httpStatusCode, 422);
  assert.equal(error.retryable, false);
  assert.equal(error.outcome, "not_applicable");
  assert.ok(
    error.fixes.some((f) => f.actor === "developer" && /narrow the filters/i.test(f.action)),
    text,
  );
  assert.equal(error.details.limitBytes, LIMIT);
  assert.ok(Number(error.details.responseBytes) > LIMIT, text);
  const request = await json<RequestResource>(await sys.call("GET", `/v1/requests/${error.requestId}`));
  assert.equal(request.status, "failed");
  assert.equal(request.result, null, "nothing of the answer is stored");
  return error;
}

const list = (query: string) =>
  sys.call("GET", `/v1/ledger-desktop/customers?${query}`, { endUserId: eu.endUserId });

before(async () => {
  sys = await startSystem(null, {
    config: { ...E2E_CONFIG.config, LEDGER_RESPONSE_LIMIT_BYTES: String(LIMIT) },
  });
  eu = await sys.connectEndUser({ companyName: "Large Answers Co" });
  await bringOnline(sys, eu);
});
after(() => sys.close());

describe("LEDGER_RESPONSE_TOO_LARGE", () => {
  test("a list whose page is too large: 422; a narrower one is served", async () => {
    await assertTooLarge(await list("limit=150"));
    const narrow = await list("limit=1");
    assert.equal(narrow.status, 200, await narrow.clone().text());
    assert.equal((await json<{ data: unknown[] }>(narrow)).data.length, 1);
  });

  test("a cursor whose next page is too large ends; it never skips records silently", async () => {
    const first = await list("limit=1");
    const page = await json<{ nextCursor: string | null; hasMore: boolean }>(first);
    assert.equal(page.hasMore, true);
    const cursor = encodeURIComponent(page.nextCursor ?? "");
    // The application answers the next page with a large document.
    sys.ledger.setFault({ kind: "large_answer", bytes: 10_000 });
    try {
      await assertTooLarge(await list(`cursor=${cursor}`));
    } finally {
      sys.ledger.setFault(null);
    }
    const again = await list(`cursor=${cursor}`);
    assert.equal(again.status, 410, await again.clone().text());
    const { error } = await json<ErrorBody>(again);
    assert.equal(error.code, "CURSOR_EXPIRED");
    assert.equal(error.details.reason, "session_ended");
  });

  test("a batch holding a write is read whole: the write is applied and answered", async () => {
    const response = await sys.call("POST", "/v1/ledger-desktop/batch", {
      endUserId: eu.endUserId,
      body: {
        requests: [
          { operationId: "ledger.customers.create", body: { name: "Written With A Large Read" } },
          { operationId: "ledger.customers.list", query: { limit: 150 } },
        ],
      },
    });
    const text = await response.clone().text();
    assert.equal(response.status, 200, text);
    const results = (await json<{ results: { status: string }[] }>(response)).results;
    assert.deepEqual(
      results.map((r) => r.status),
      ["succeeded", "succeeded"],
    );
    assert.ok(text.length > LIMIT, "the answer was larger than the limit for reads");
  });

  test("the simulated application's large_answer fault: a read refused, a write applied", async () => {
    sys.ledger.setFault({ kind: "large_answer", bytes: 10_000 });
    try {
      const error = await assertTooLarge(
        await sys.call("POST", passthroughPath(eu.endUserId), {
          body: "<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>",
        }),
      );
      assert.ok(Number(error.details.responseBytes) >= 10_000);
      const written = await sys.call("POST", passthroughPath(eu.endUserId), {
        body: customerAdd("Written With A Large Answer"),
      });
      assert.equal(written.status, 200, await written.clone().text());
      const file = sys.ledger.companyFile(eu.companyFilePath);
      assert.ok(
        file
          .recordsOf("Customer")
          .some((r) => r.fields.some((f) => f.name === "Name" && f.text === "Written With A Large Answer")),
      );
    } finally {
      sys.ledger.setFault(null);
    }
  });
});
