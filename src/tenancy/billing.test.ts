import assert from "node:assert/strict";
import { test } from "node:test";
import { chargeUsage, usageOf } from "../store/usage.ts";
import { buildTestApp } from "../testing/harness.ts";
import { usagePeriod } from "./billing.ts";

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
