import assert from "node:assert/strict";
import { test } from "node:test";
import { allResources } from "../../src/ledger/resources/definitions.ts";
import { listFilters } from "../../src/ledger/typed/filters.ts";
import { startSystem } from "../../src/testing/system.ts";
import { bringOnline, callAsEndUser, E2E_CONFIG } from "./helpers.ts";

/**
 * The demo company (issue 25, item 7) is worth building against: through the real HTTP API, the
 * connector protocol and the simulated application, nearly every typed list answers records. Every
 * list operation of the registry is called (none is skipped by name); the test fails when fewer
 * than 45 answer at least one record, and prints the ones that answer none.
 */
const LISTS_WITH_RECORDS_MIN = 45;

type Json = Record<string, unknown>;

test("the demo company answers records for at least 45 of the typed list operations", async (t) => {
  const sys = await startSystem(t, { ...E2E_CONFIG });
  const eu = await sys.connectEndUser({ companyName: "Demo Build Co", seed: "demo" });
  await bringOnline(sys, eu);
  const get = (path: string) => callAsEndUser(sys, eu, "GET", `/v1/ledger-desktop/${path}`);

  // A filter a list requires (bills to pay: the vendor) gets the vendor of a bill still owed.
  const bills = await get("bills?limit=100&paymentStatus=not_paid");
  assert.equal(bills.status, 200, JSON.stringify(bills.body).slice(0, 1000));
  const owed = (bills.body.data as Json[]).find((bill) => (bill.vendor as Json | null)?.id);
  assert.ok(owed, "some bill is still owed");
  const vendorId = String((owed.vendor as Json).id);

  const withRecords: string[] = [];
  const empty: string[] = [];
  const lists = allResources().filter((resource) => resource.actions.includes("list"));
  for (const resource of lists) {
    const query = listFilters(resource)
      .params.filter((param) => param.required)
      .map((param) => {
        assert.equal(
          param.kind.kind,
          "id",
          `${resource.entry.resource}: a required ${param.name} this test can fill`,
        );
        return `${param.name}=${encodeURIComponent(vendorId)}`;
      });
    const answer = await get(`${resource.entry.path}${query.length > 0 ? `?${query.join("&")}` : ""}`);
    assert.equal(
      answer.status,
      200,
      `${resource.entry.resource} list: ${JSON.stringify(answer.body).slice(0, 1000)}`,
    );
    const data = answer.body.data;
    assert.ok(Array.isArray(data), `${resource.entry.resource}: a list envelope`);
    (data.length > 0 ? withRecords : empty).push(resource.entry.resource);
  }
  t.diagnostic(`${withRecords.length} of ${lists.length} list operations answer records`);
  t.diagnostic(`empty: ${empty.join(", ") || "none"}`);
  console.log(
    `demo company: ${withRecords.length} of ${lists.length} typed lists answer records; empty: ${empty.join(", ") || "none"}`,
  );
  assert.ok(
    withRecords.length >= LISTS_WITH_RECORDS_MIN,
    `only ${withRecords.length} lists answer records; empty: ${empty.join(", ")}`,
  );
  // The records a developer starts from: invoices in every state.
  const invoices = await get("invoices?limit=150");
  assert.equal(invoices.status, 200, JSON.stringify(invoices.body).slice(0, 1000));
  const states = new Set(
    (invoices.body.data as Json[]).map((invoice) =>
      invoice.isPending === true
        ? "pending"
        : invoice.isPaid === true
          ? "paid"
          : Number(invoice.appliedAmount ?? 0) === 0
            ? "open"
            : "partly paid",
    ),
  );
  assert.deepEqual([...states].sort(), ["open", "paid", "partly paid", "pending"]);

  // The README's examples name records that exist: customers starting "meadow", and a year of
  // income and expenses in 2025's profit and loss.
  const meadow = await get("customers?nameStartsWith=meadow&limit=20");
  assert.equal(meadow.status, 200, JSON.stringify(meadow.body).slice(0, 1000));
  assert.ok((meadow.body.data as Json[]).length > 0, "customers named Meadow…");
  const profitAndLoss = await get(
    "reports/general-summary?reportType=profit_and_loss_standard&reportDateFrom=2025-01-01&reportDateTo=2025-12-31",
  );
  assert.equal(profitAndLoss.status, 200, JSON.stringify(profitAndLoss.body).slice(0, 1000));
  const report = JSON.stringify(profitAndLoss.body);
  for (const account of ["Construction Income", "Materials Income", "Rent"])
    assert.ok(report.includes(account), `${account} in the profit and loss: ${report.slice(0, 1500)}`);
});
