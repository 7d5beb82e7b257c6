import assert from "node:assert/strict";
import { test } from "node:test";
import { newId } from "../platform/ids.ts";
import { newRequestRow } from "../requests/new-request.ts";
import { findRequestById, insertChargedRequest } from "../store/requests.ts";
import { chargeUsage, usageOf } from "../store/usage.ts";
import { buildTestApp } from "../testing/harness.ts";
import { usagePeriod } from "./billing.ts";
import { createEndUser } from "./end-users.ts";

/** Billing's counting rules (decision 0019): calendar months in UTC, and a quota never overshot. */
test("a usage period is the calendar month in UTC", () => {
  const period = usagePeriod(Date.UTC(2026, 11, 31, 23, 59, 59, 999));
  assert.equal(period.period, "2026-12");
  assert.equal(period.startsAt.toISOString(), "2026-12-01T00:00:00.000Z");
  assert.equal(period.resetsAt.toISOString(), "2027-01-01T00:00:00.000Z");
  assert.equal(usagePeriod(period.resetsAt.getTime()).period, "2027-01");
});

test("concurrent charges never take a month past its quota; modes and months count apart", async (t) => {
  const { deps, project } = await buildTestApp(t);
  const live = { projectId: project.project.id, mode: "live" as const };
  const charges = await Promise.all(
    Array.from({ length: 20 }, () => chargeUsage(deps.db, live, "2026-11", 1, 10)),
  );
  assert.equal(charges.filter((c) => c.charged).length, 10);
  assert.equal(await usageOf(deps.db, live, "2026-11"), 10);
  const batch = await chargeUsage(deps.db, live, "2026-12", 11, 10);
  assert.deepEqual(batch, { charged: false, used: 0 }, "more units than the whole quota: none counted");
  assert.equal((await chargeUsage(deps.db, live, "2026-12", 10, 10)).charged, true);
  const test = { projectId: project.project.id, mode: "test" as const };
  assert.equal((await chargeUsage(deps.db, test, "2026-11", 5, null)).used, 5);
  assert.equal(await usageOf(deps.db, live, "2026-11"), 10);
});

test("a Request stored with its charge counts it in the same statement: both or neither", async (t) => {
  const h = await buildTestApp(t);
  const tenant = { projectId: h.project.project.id, mode: "test" as const };
  const endUser = await createEndUser(h.deps, tenant, { companyName: "Charged Co", sourceId: "charged" });
  const row = (id: string) =>
    newRequestRow(
      {
        id,
        project_id: tenant.projectId,
        is_test: true,
        end_user_id: endUser.id,
        connection_id: null,
        operation_id: "ledger.healthCheck",
        method: "GET",
        path: "/v1/ledger-desktop/health-check",
        mode: "async",
        status: "queued",
        is_write: false,
        request_xml: "<Messages/>",
        queue_ttl_expires_at: null,
        idempotency_key_present: false,
        previous_request_id: null,
      },
      h.clock.now(),
    );
  const charge = { tenant, period: "2026-11", units: 3 };
  const id = newId("request");
  assert.equal((await insertChargedRequest(h.deps.db, row(id), charge)).id, id);
  assert.equal((await findRequestById(h.deps.db, id))?.status, "queued");
  assert.equal(await usageOf(h.deps.db, tenant, "2026-11"), 3);
  await insertChargedRequest(h.deps.db, row(newId("request")), charge);
  assert.equal(await usageOf(h.deps.db, tenant, "2026-11"), 6, "a second charge adds to the month's row");
  // The same ID again: the insert fails, and the charge that rode on it is not counted either.
  await assert.rejects(insertChargedRequest(h.deps.db, row(id), charge));
  assert.equal(await usageOf(h.deps.db, tenant, "2026-11"), 6);
  assert.equal(await usageOf(h.deps.db, { ...tenant, mode: "live" }, "2026-11"), 0);
});
