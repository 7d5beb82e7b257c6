/**
 * Where the simulated end user's computer spends a latency profile's time (issue 24, decision
 * 0034), each delay where the real one is:
 *
 * - the Web Connector's network (`soapCallMs`): its SOAP calls are sequential, and each call's
 *   round trip is split around the service's work — half before the call reaches the service, half
 *   after the answer left it — so a held `sendRequestXML` hands its document over half a round trip
 *   before the connector has it, and an answer reaches the service half a round trip after it left;
 * - the application (`messageSetMs`, `requestMs`, `recordMs`): per message set it takes in, then per
 *   request as it runs them in order, and per record each request returns, between the steps of
 *   the request processor (`ledger/processor.ts` `processSteps`).
 *
 * Delays go through an injectable clock; the simulator is an actor of its own, on real time unless
 * a test gives it a `FakeClock`. A zero delay sets no timer: the zero profile changes nothing.
 */
import { systemClock, type Clock } from "../platform/clock.ts";
import { isZeroLatency, ZERO_LATENCY, type LatencyProfile } from "../platform/latency-profile.ts";
import type { ProcessStep } from "./ledger/processor.ts";

/** A latency profile and the clock its delays are spent on. */
export interface SimulatedLatency {
  readonly profile: LatencyProfile;
  readonly clock: Clock;
}

/** A profile on a clock (real time by default). */
export function simulatedLatency(
  profile: LatencyProfile = ZERO_LATENCY,
  clock: Clock = systemClock,
): SimulatedLatency {
  return { profile, clock };
}

/** No delay, on real time. */
export const NO_LATENCY: SimulatedLatency = simulatedLatency();

/** Whether the latency adds no delay anywhere. */
export function isNoLatency(latency: SimulatedLatency): boolean {
  return isZeroLatency(latency.profile);
}

/** Waits `ms` on the latency's clock; sets no timer for 0. Resolves early when `signal` aborts. */
export async function spend(latency: SimulatedLatency, ms: number, signal?: AbortSignal): Promise<void> {
  if (ms > 0) await latency.clock.sleep(ms, signal);
}

/**
 * A SOAP call's round trip as two legs: before the call reaches the service (`out`) and after its
 * answer left it (`back`); `out` is the smaller half when the round trip is odd.
 */
export function soapLegsMs(profile: LatencyProfile): { out: number; back: number } {
  const out = Math.floor(profile.soapCallMs / 2);
  return { out, back: profile.soapCallMs - out };
}

/** The application's time for one step of its work. */
export function stepMs(profile: LatencyProfile, step: ProcessStep): number {
  switch (step.kind) {
    case "messageSet":
      return profile.messageSetMs;
    case "request":
      return profile.requestMs;
    case "records":
      return profile.recordMs * step.count;
  }
}

/** Runs the request processor's steps, spending each one's time before going on to the next. */
export async function paced<T>(steps: Generator<ProcessStep, T>, latency: SimulatedLatency): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
    await spend(latency, stepMs(latency.profile, next.value));
  }
}
