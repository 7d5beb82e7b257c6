/**
 * The demo company's calendar: a fixed year of activity, so the same seed gives the same dates on
 * any day it is generated (never the wall clock).
 */

/** The year the demo company's activity takes place in. */
export const BASE_YEAR = 2025;

/** Days in `year`. */
export function daysIn(year: number): number {
  return (Date.UTC(year + 1, 0, 1) - Date.UTC(year, 0, 1)) / 86_400_000;
}

/** `YYYY-MM-DD` of day `day` (1-based; past the year's end runs into the next) of `year`. */
export function dateOf(year: number, day: number): string {
  return new Date(Date.UTC(year, 0, day)).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` of day `day` of `year`, held to the year's last day (a transaction date of the year). */
export function dateInYear(year: number, day: number): string {
  return dateOf(year, Math.min(day, daysIn(year)));
}

/** The month (1–12) of day `day` of `year`. */
export function monthOf(year: number, day: number): number {
  return new Date(Date.UTC(year, 0, day)).getUTCMonth() + 1;
}

/** The day of `year` that month `month` (1–12) ends on. */
export function monthEnd(year: number, month: number): number {
  return (Date.UTC(year, month, 0) - Date.UTC(year, 0, 0)) / 86_400_000;
}
