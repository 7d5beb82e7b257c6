import { randomBytes, randomInt, randomUUID } from "node:crypto";

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A cryptographically random string of `length` characters from [A-Za-z0-9]. */
export function randomAlphanumeric(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** A random GUID in the braced upper-case form the application uses: `{XXXXXXXX-...}`. */
export function randomGuid(): string {
  return `{${randomUUID().toUpperCase()}}`;
}

/** `n` random bytes as URL-safe base64. */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}

/** `n` random bytes as standard base64 with padding (the Standard Webhooks secret encoding). */
export function randomBase64(bytes: number): string {
  return randomBytes(bytes).toString("base64");
}

/** A uniformly distributed random number in [0, 1) from the cryptographic generator (jitter). */
export function randomFraction(): number {
  return randomInt(0, 2 ** 32) / 2 ** 32;
}
