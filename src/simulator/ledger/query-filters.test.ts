import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CompanyFile } from "./company-file.ts";
import { macroRange } from "./query-filters.ts";

/**
 * Date macros (report periods and transaction date filters) resolve to the file's local dates:
 * the application's "last quarter" is the one before today's on the company file's computer.
 */
describe("macroRange", () => {
  // 03:00 UTC on Saturday 28 November 2026 is Friday 27 November at -05:00.
  const file = new CompanyFile(
    "C:\\macro.qbw",
    { companyName: "Macro Co", utcOffset: "-05:00" },
    { now: () => Date.UTC(2026, 10, 28, 3, 0, 0) },
  );

  test("every macro of both spellings gives the period around the file's local today", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined, string | undefined]> = [
      ["All", undefined, undefined],
      ["Today", "2026-11-27", "2026-11-27"],
      ["Yesterday", "2026-11-26", "2026-11-26"],
      ["ThisWeek", "2026-11-22", "2026-11-28"],
      ["ThisWeekToDate", "2026-11-22", "2026-11-27"],
      ["LastWeek", "2026-11-15", "2026-11-21"],
      ["LastWeekToDate", "2026-11-15", "2026-11-20"],
      ["NextWeek", "2026-11-29", "2026-12-05"],
      ["NextFourWeeks", "2026-11-29", "2026-12-26"],
      ["ThisMonth", "2026-11-01", "2026-11-30"],
      ["ThisMonthToDate", "2026-11-01", "2026-11-27"],
      ["LastMonth", "2026-10-01", "2026-10-31"],
      ["LastMonthToDate", "2026-10-01", "2026-10-27"],
      ["NextMonth", "2026-12-01", "2026-12-31"],
      ["ThisQuarter", "2026-10-01", "2026-12-31"],
      ["ThisCalendarQuarterToDate", "2026-10-01", "2026-11-27"],
      ["LastQuarter", "2026-07-01", "2026-09-30"],
      ["LastFiscalQuarter", "2026-07-01", "2026-09-30"],
      ["LastQuarterToDate", "2026-07-01", "2026-08-27"],
      ["NextQuarter", "2027-01-01", "2027-03-31"],
      ["ThisYear", "2026-01-01", "2026-12-31"],
      ["ThisCalendarYearToDate", "2026-01-01", "2026-11-27"],
      ["LastYear", "2025-01-01", "2025-12-31"],
      ["LastFiscalYearToDate", "2025-01-01", "2025-11-27"],
      ["NextYear", "2027-01-01", "2027-12-31"],
    ];
    for (const [macro, from, to] of cases) assert.deepEqual(macroRange(macro, file), [from, to], macro);
  });
});
