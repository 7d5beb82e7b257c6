/**
 * Minimal valid JSON bodies for any input shape, derived from the shape alone: every required field
 * (and the first alternative of every required choice) gets a fake value of its field kind; nested
 * objects recurse; references and transaction IDs come from the caller, who knows which records
 * exist. Deterministic for a given random source, so a failing group can be replayed.
 */
import type { RandomSource } from "../fields.ts";
import type { Field, Shape } from "./shape.ts";
import { matchContent } from "../xml/content-model.ts";
import { ledgerSchema } from "../xml/schema.ts";

/** What the caller supplies: IDs of existing records for references and transaction IDs. */
export interface SampleSources {
  readonly random: RandomSource;
  /** The ID for a reference field at `path` (its XML element is `field.slot.name`). */
  readonly refId: (field: Field, path: readonly string[]) => string;
  /** The ID of a transaction a nested `TxnID` value must name (applied-to and linked transactions). */
  readonly txnId: (field: Field, path: readonly string[]) => string;
  /** A new number each call: names of list objects must be unique, so each one ends with one. */
  readonly serial: () => number;
}

/** Names a list object is known by; they get a serial number so that every sample is unique. */
const NAMES = new Set(["Name", "FullName"]);

/** Whether a field must be present: required itself, or the first pick of a required choice. */
function isRequired(field: Field, shape: Shape): boolean {
  if (field.slot.min >= 1) return true;
  const step = field.slot.choices.find((c) => c.required);
  if (step === undefined || step.alternative !== 0) return false;
  // Within the first alternative, the first slot stands for the choice.
  const first = shape.fields.find((f) => f.slot.choices.some((c) => c.id === step.id && c.alternative === 0));
  return first === field;
}

function sampleValue(field: Field, sources: SampleSources, path: readonly string[]): unknown {
  if (field.form === "ref") return sources.refId(field, path);
  if (field.form === "object" && field.shape !== null) return sampleBody(field.shape, sources, path);
  if (field.slot.name === "TxnID" && path.length > 0) return sources.txnId(field, path);
  const entry = field.slot.type.kind === "simple" ? field.slot.type.entry : undefined;
  const value = field.kind?.fake(sources.random) ?? "";
  if (NAMES.has(field.slot.name) && typeof value === "string") {
    const max = entry?.max ?? 31;
    // Short names (sales tax codes hold 3 characters) get a compact serial without a space.
    const serial = sources.serial();
    const suffix = max <= 8 ? serial.toString(36).toUpperCase() : ` ${serial}`;
    return `${value.slice(0, Math.max(max <= 8 ? 0 : 1, max - suffix.length))}${suffix}`.slice(0, max);
  }
  return value;
}

/** Element names `body` writes, in schema order. */
function elementNames(shape: Shape, body: Readonly<Record<string, unknown>>): string[] {
  return shape.fields.flatMap((f) => {
    const value = body[f.json];
    if (value === undefined) return [];
    return Array.isArray(value) && f.array ? value.map(() => f.slot.name) : [f.slot.name];
  });
}

/** A repeated choice that must occur (`(LineA|LineB)+`) gets one item of its first alternative. */
function completeFamilies(
  shape: Shape,
  body: Record<string, unknown>,
  sources: SampleSources,
  path: readonly string[],
): void {
  const type = ledgerSchema().typeOf(shape.typeKey, shape.typeKey);
  if (type.kind !== "complex" || Array.isArray(matchContent(type.model, elementNames(shape, body)))) return;
  for (const field of shape.fields) {
    if (field.slot.family === null || body[field.json] !== undefined) continue;
    const value = sampleValue(field, sources, [...path, field.slot.name]);
    body[field.json] = field.array ? [value] : value;
    if (Array.isArray(matchContent(type.model, elementNames(shape, body)))) return;
    delete body[field.json];
  }
}

/** A minimal body for `shape` (`path` names the enclosing XML elements). */
export function sampleBody(
  shape: Shape,
  sources: SampleSources,
  path: readonly string[] = [],
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of shape.fields) {
    if (!isRequired(field, shape)) continue;
    // Identity and revision of an update are given by the caller's action, not the body.
    if (path.length === 0 && ["ListID", "TxnID", "EditSequence"].includes(field.slot.name)) continue;
    const value = sampleValue(field, sources, [...path, field.slot.name]);
    body[field.json] = field.array ? [value] : value;
  }
  completeFamilies(shape, body, sources, path);
  return body;
}

/** Stand-in values for documentation examples: fixed IDs in the application's format. */
function exampleSources(): SampleSources {
  let state = 0x5eed;
  let serial = 0;
  return {
    random: () => {
      state = (state * 1664525 + 1013904223) >>> 0;
      return state / 4294967296;
    },
    refId: () => "80000001-1700000000",
    txnId: () => "1F-1700000000",
    serial: () => ++serial,
  };
}

/** A minimal valid body for a documentation example (OpenAPI `examples`, used by the contract suites). */
export function exampleBody(shape: Shape): Record<string, unknown> {
  return sampleBody(shape, exampleSources());
}
