import { createHmac } from "node:crypto";
import { randomBase64 } from "../platform/random.ts";

/**
 * Standard Webhooks signatures (spec: Events; `../shared/reference/standard-webhooks-vectors.md`):
 * `v1,` + base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")), where the key is the
 * base64-decoded part of the `whsec_` secret. During a rotation the header carries one signature per
 * valid secret, newest first, separated by a space; receivers accept any.
 */
export const SECRET_PREFIX = "whsec_";

/** Random bytes in a new secret (the scheme allows 24 to 64). */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBase64(SECRET_BYTES);
}

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, "base64");
}

/** One `v1,` signature of a message. */
export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret))
    .update(`${messageId}.${timestampSeconds}.${body}`, "utf8")
    .digest("base64");
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers of one attempt. */
export interface SignatureHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * Headers for one attempt, signed with every secret in `secrets` (the current one first, then the
 * previous one while it has not expired).
 */
export function signatureHeaders(
  secrets: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): SignatureHeaders {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((s) => sign(s, messageId, timestampSeconds, body)).join(" "),
  };
}

/** The secrets that sign at `nowMs`: the current one, and the previous one until it expires. */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  nowMs: number,
): string[] {
  const previousValid =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt.getTime() > nowMs;
  return previousValid && endpoint.previousSecret !== null
    ? [endpoint.secret, endpoint.previousSecret]
    : [endpoint.secret];
}
