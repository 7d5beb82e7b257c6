import { createCipheriv, createDecipheriv, hash, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Secrets are stored as SHA-256 digests. They are long random strings (at least 128 bits), so a
 * plain digest is enough: there is nothing to brute-force. Comparisons are constant-time.
 */
export function hashSecret(secret: string): string {
  // The one-shot digest: no Hash object per call (every connector call digests its ticket).
  return hash("sha256", secret, "hex");
}

/** Constant-time check of a presented secret against a stored digest. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/**
 * Seals a value with a key derived from another secret (AES-256-GCM, HKDF-SHA-256). Used to keep the
 * connector password readable only by whoever holds the auth session's client secret: the store
 * keeps neither in clear.
 */
export function sealWith(keySecret: string, plaintext: string): string {
  const key = Buffer.from(hkdfSync("sha256", keySecret, "", "ledger-bridge seal", 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString("base64url")).join(".");
}

/** Opens a value sealed by {@link sealWith}; null when the key is wrong or the box is damaged. */
export function openWith(keySecret: string, box: string): string | null {
  const [iv, tag, body] = box.split(".").map((part) => Buffer.from(part, "base64url"));
  if (!iv || !tag || !body) return null;
  try {
    const key = Buffer.from(hkdfSync("sha256", keySecret, "", "ledger-bridge seal", 32));
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
