import { ServiceError } from "../errors/service-error.ts";

/** Idempotency keys are retained 7 days (spec: Limits). */
export const IDEMPOTENCY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Parses the `Idempotency-Key` header: 1 to 255 printable ASCII characters, else IDEMPOTENCY_KEY_INVALID. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header.join(",") : header;
  if (value.length < 1 || value.length > 255 || !/^[\x20-\x7E]+$/.test(value)) {
    throw new ServiceError("IDEMPOTENCY_KEY_INVALID", {
      param: "Idempotency-Key",
      message: "The `Idempotency-Key` header must be 1 to 255 printable ASCII characters.",
    });
  }
  return value;
}

/** Canonical JSON (sorted keys) so that the same body in another key order is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * What an idempotent call's fingerprint is made of (house style §2.7): method, path, end user and
 * canonical body. The stored fingerprint is this text keyed with the key-encryption key
 * (`Sealing.fingerprint`, decision 0032): the body may hold a card number, whose few unknown digits
 * a plain digest would let anyone who reads the store find by trying them.
 */
export function fingerprintText(parts: {
  method: string;
  path: string;
  endUserId: string | null;
  body: unknown;
}): string {
  return `${parts.method}\n${parts.path}\n${parts.endUserId ?? ""}\n${canonicalJson(parts.body)}`;
}
