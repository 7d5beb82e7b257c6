/**
 * A latency profile of the simulated end user's computer: how slow its Web Connector's network and
 * its accounting application are (issue 24, decision 0034). Plain data with its parser, so that the
 * service's configuration (`SIMULATOR_LATENCY`), the standalone simulator's `--latency` and tests
 * read one syntax; the simulator applies it (`simulator/latency.ts`).
 *
 * Text form: a named profile (`zero`, `realistic`), or comma-separated `key:milliseconds` entries
 * with the keys `soap`, `messageSet`, `request` and `record` (each at most once, whole milliseconds
 * 0–60000; a key left out is 0), for example `soap:80,messageSet:150,request:30,record:2`.
 */
export interface LatencyProfile {
  /**
   * One SOAP call's network round trip between the Web Connector and the service: half of it passes
   * before the call reaches the service, half after its answer left.
   */
  readonly soapCallMs: number;
  /** The application's overhead per message set it processes (the request processor's call, parsing). */
  readonly messageSetMs: number;
  /** The application's time per request message it runs, in the message set's order. */
  readonly requestMs: number;
  /** The application's time per record (a `…Ret` element) it returns. */
  readonly recordMs: number;
}

/** No delay anywhere: the default of tests, `npm start`'s demo and the standalone simulator. */
export const ZERO_LATENCY: LatencyProfile = Object.freeze({
  soapCallMs: 0,
  messageSetMs: 0,
  requestMs: 0,
  recordMs: 0,
});

/**
 * A warm session on an office PC reached over the internet. Estimates, not measurements: decision
 * 0034 gives their basis (published end-to-end figures of products built on the same connector).
 */
export const REALISTIC_LATENCY: LatencyProfile = Object.freeze({
  soapCallMs: 80,
  messageSetMs: 150,
  requestMs: 30,
  recordMs: 2,
});

/** The profiles that have a name. */
export const NAMED_LATENCY_PROFILES: Readonly<Record<string, LatencyProfile>> = Object.freeze({
  zero: ZERO_LATENCY,
  realistic: REALISTIC_LATENCY,
});

/** The text keys, in the order they are written. */
const KEYS: ReadonlyArray<readonly [string, keyof LatencyProfile]> = [
  ["soap", "soapCallMs"],
  ["messageSet", "messageSetMs"],
  ["request", "requestMs"],
  ["record", "recordMs"],
];

/** The largest delay one key may give, in ms: under the connector's 100 s call timeout. */
export const LATENCY_MS_MAX = 60_000;

const SYNTAX = `a profile name (${Object.keys(NAMED_LATENCY_PROFILES).join(", ")}) or entries such as soap:80,messageSet:150,request:30,record:2`;

/**
 * Reads a profile from its text form; throws an error naming the fault and the syntax. An empty
 * text is the zero profile (an environment variable set to nothing).
 */
export function parseLatencyProfile(text: string): LatencyProfile {
  const trimmed = text.trim();
  if (trimmed === "") return ZERO_LATENCY;
  const named = Object.hasOwn(NAMED_LATENCY_PROFILES, trimmed) ? NAMED_LATENCY_PROFILES[trimmed] : undefined;
  if (named !== undefined) return named;
  const profile: Record<keyof LatencyProfile, number> = { ...ZERO_LATENCY };
  const seen = new Set<string>();
  for (const entry of trimmed.split(",")) {
    const match = /^\s*([A-Za-z]+)\s*:\s*(\d+)\s*$/.exec(entry);
    if (match === null) throw new Error(`"${entry.trim()}" is not key:milliseconds; give ${SYNTAX}`);
    const [, key = "", digits = ""] = match;
    const field = KEYS.find(([name]) => name === key)?.[1];
    if (field === undefined) {
      throw new Error(`unknown key "${key}"; the keys are ${KEYS.map(([name]) => name).join(", ")}`);
    }
    if (seen.has(key)) throw new Error(`"${key}" is given twice`);
    seen.add(key);
    const ms = Number(digits);
    if (ms > LATENCY_MS_MAX) throw new Error(`${key}: ${ms} ms is more than ${LATENCY_MS_MAX} ms`);
    profile[field] = ms;
  }
  return Object.freeze(profile);
}

/** The text form: the profile's name when it has one, else its entries (what `parseLatencyProfile` reads). */
export function formatLatencyProfile(profile: LatencyProfile): string {
  for (const [name, named] of Object.entries(NAMED_LATENCY_PROFILES)) {
    if (KEYS.every(([, field]) => named[field] === profile[field])) return name;
  }
  return KEYS.map(([key, field]) => `${key}:${profile[field]}`).join(",");
}

/** Whether the profile adds no delay at all. */
export function isZeroLatency(profile: LatencyProfile): boolean {
  return KEYS.every(([, field]) => profile[field] === 0);
}
