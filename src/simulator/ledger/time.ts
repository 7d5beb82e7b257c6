/**
 * Time as the application prints and reads it: whole seconds, local wall time with the company
 * file's fixed UTC offset (`2026-01-15T07:00:00-05:00`).
 */

const OFFSET_PATTERN = /^([+-])(\d{2}):(\d{2})$/;

/** Minutes east of UTC for an offset such as `-05:00`. */
export function offsetMinutes(offset: string): number {
  const match = OFFSET_PATTERN.exec(offset);
  if (match === null) throw new Error(`invalid UTC offset ${offset}`);
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === "-" ? -minutes : minutes;
}

function shifted(epochSeconds: number, offset: string): string {
  return new Date((epochSeconds + offsetMinutes(offset) * 60) * 1000).toISOString();
}

/** `YYYY-MM-DDThh:mm:ss±hh:mm` in the file's local time. */
export function formatDateTime(epochSeconds: number, offset: string): string {
  return `${shifted(epochSeconds, offset).slice(0, 19)}${offset}`;
}

/** `YYYY-MM-DD` in the file's local time. */
export function formatDate(epochSeconds: number, offset: string): string {
  return shifted(epochSeconds, offset).slice(0, 10);
}

const DATETIME_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})([+-]\d{2}:\d{2})?)?)?)?$/;

/**
 * Parses a DATETIMETYPE filter value to epoch seconds. Values without an offset are local time of
 * the file. `end` widens missing parts to the end of the range so that `To…` filters are inclusive.
 */
export function parseDateTime(value: string, offset: string, end: boolean): number | undefined {
  const m = DATETIME_PATTERN.exec(value);
  if (m === null) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]) - 1;
  const day = Number(m[3]);
  const hour = m[4] === undefined ? (end ? 23 : 0) : Number(m[4]);
  const minute = m[5] === undefined ? (end ? 59 : 0) : Number(m[5]);
  const second = m[6] === undefined ? (end ? 59 : 0) : Number(m[6]);
  const utc = Date.UTC(year, month, day, hour, minute, second) / 1000;
  return utc - offsetMinutes(m[7] ?? offset) * 60;
}

/** Parses `YYYY-MM-DD` to a comparable string, or undefined when invalid. */
export function parseDate(value: string): string | undefined {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : undefined;
}
