import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { openWith, sealWith } from "./secrets.ts";

/**
 * Secrets at rest (decision 0032): values the service must be able to read back (webhook signing
 * secrets, a queued Request's card numbers, idempotency replay copies of new credentials) are
 * sealed with AES-256-GCM under a key-encryption key from configuration (`SECRETS_KEY`).
 *
 * A sealed value reads `sealed.v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts). The key ID
 * names the configured key that opens it (`SECRETS_KEY`, or one of `SECRETS_KEY_PREVIOUS` during a
 * rotation), derived from the key itself so that the operator names nothing. The associated data
 * binds the value to its place (`webhook_endpoints.secret:whe_…`): a sealed value copied to another
 * row or column does not open. The cipher key is not the configured key but a subkey derived from
 * it with HKDF-SHA-256 per use (sealing, keyed fingerprints), and, for a value sealed under a
 * context secret too (an idempotency replay copy, sealed under its Idempotency-Key), from both.
 *
 * Without `SECRETS_KEY` the service still runs: {@link Sealing.seal} then returns the value as it
 * is (and says so at start, {@link unprotectedAtRest}). A value stored in clear (before a key was
 * configured) is read as it is, and sealed by `ledger-bridge secrets reseal`.
 */
export const SEALED_PREFIX = "sealed.v1.";

/** Why a stored value could not be read: a configuration problem, never the caller's. */
export class SealedValueError extends Error {
  override name = "SealedValueError";
}

/** The configured keys: the current one (seals and opens) and older ones (open only). */
export interface SealingKeys {
  current: Buffer | null;
  previous: readonly Buffer[];
}

interface KeyEntry {
  readonly id: string;
  readonly key: Buffer;
  /** The subkey that seals values without a context secret. */
  readonly sealKey: Buffer;
  /** The subkey of keyed fingerprints. */
  readonly fingerprintKey: Buffer;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;

/**
 * Reads a configured key: 32 bytes as base64 (`openssl rand -base64 32`) or as 64 hexadecimal
 * digits (`openssl rand -hex 32`). Null for anything else.
 */
export function parseSecretsKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, "hex");
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return key.length === KEY_BYTES ? key : null;
}

/** `SECRETS_KEY` and `SECRETS_KEY_PREVIOUS` (comma-separated) as keys; throws on an unreadable one. */
export function sealingKeysFrom(current: string | undefined, previous: string | undefined): SealingKeys {
  const parse = (text: string, name: string): Buffer => {
    const key = parseSecretsKey(text);
    if (!key) throw new Error(`${name} must be 32 random bytes in base64 or hex (openssl rand -base64 32)`);
    return key;
  };
  const olderTexts = (previous ?? "")
    .split(",")
    .map((text) => text.trim())
    .filter((text) => text !== "");
  return {
    current: current === undefined || current.trim() === "" ? null : parse(current, "SECRETS_KEY"),
    previous: olderTexts.map((text) => parse(text, "SECRETS_KEY_PREVIOUS")),
  };
}

const subkey = (key: Buffer, salt: string, info: string): Buffer =>
  Buffer.from(hkdfSync("sha256", key, salt, info, KEY_BYTES));

/** A key's ID: 8 characters that tell configured keys apart and reveal nothing of them. */
function keyIdOf(key: Buffer): string {
  return createHmac("sha256", key)
    .update("ledger-bridge key id")
    .digest()
    .subarray(0, 6)
    .toString("base64url");
}

function entryOf(key: Buffer): KeyEntry {
  return {
    id: keyIdOf(key),
    key,
    sealKey: subkey(key, "", "ledger-bridge sealing v1"),
    fingerprintKey: subkey(key, "", "ledger-bridge idempotency fingerprint v1"),
  };
}

/** Keyed fingerprints read `k1.<keyId>.<hex>`; unkeyed ones (no key, or before keys) are bare hex. */
const FINGERPRINT_PREFIX = "k1.";

/** What {@link Sealing.reseal} made of one stored value: nothing to do, or its new form. */
export type Resealed = { outcome: "current" } | { outcome: "resealed"; value: string };

/**
 * Seals and opens values at rest with the configured keys. Built once (main.ts, the test harness,
 * the CLI on the store) and passed in `Deps`.
 */
export class Sealing {
  private readonly current: KeyEntry | null;
  private readonly byId: ReadonlyMap<string, KeyEntry>;

  constructor(keys: SealingKeys) {
    this.current = keys.current ? entryOf(keys.current) : null;
    const entries = [...(this.current ? [this.current] : []), ...keys.previous.map(entryOf)];
    this.byId = new Map(entries.map((entry) => [entry.id, entry]));
  }

  /** Whether a key is configured: otherwise values are stored in clear (see {@link unprotectedAtRest}). */
  get protects(): boolean {
    return this.current !== null;
  }

  /** The current key's ID (null without a key): what `reseal` brings every value to. */
  get currentKeyId(): string | null {
    return this.current?.id ?? null;
  }

  /** The IDs of the keys that open values (the current one first). */
  get keyIds(): string[] {
    return [...this.byId.keys()];
  }

  /**
   * Seals `value` for `place` (the table, column and row it is stored in; a value sealed for one
   * place does not open in another). With `context` (a secret the caller holds, such as an
   * Idempotency-Key), the cipher key is derived from the configured key and the context together.
   * Without a configured key the value is returned as it is.
   */
  seal(value: string, place: string, context?: string): string {
    const entry = this.current;
    if (!entry) return value;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.cipherKey(entry, context), iv);
    cipher.setAAD(associatedData(entry.id, place));
    const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    return `${SEALED_PREFIX}${entry.id}.${[iv, cipher.getAuthTag(), body].map((p) => p.toString("base64url")).join(".")}`;
  }

  /**
   * Opens what {@link seal} stored at `place` (with the same `context`). A value that is not sealed
   * (stored in clear, before a key was configured) is returned as it is. Throws
   * {@link SealedValueError} when no configured key opens it (its key was dropped from
   * `SECRETS_KEY_PREVIOUS` too early, or the value was moved or damaged).
   */
  open(stored: string, place: string, context?: string): string {
    if (!stored.startsWith(SEALED_PREFIX)) return stored;
    const [id, iv, tag, body] = stored.slice(SEALED_PREFIX.length).split(".");
    if (id === undefined || iv === undefined || tag === undefined || body === undefined)
      throw new SealedValueError(`a sealed value at ${place} is damaged`);
    const entry = this.byId.get(id);
    if (!entry) {
      throw new SealedValueError(
        `a value at ${place} is sealed under key ${id}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS holds`,
      );
    }
    try {
      const decipher = createDecipheriv(
        "aes-256-gcm",
        this.cipherKey(entry, context),
        Buffer.from(iv, "base64url"),
      );
      decipher.setAAD(associatedData(id, place));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
        "utf8",
      );
    } catch {
      throw new SealedValueError(`the sealed value at ${place} does not open: it was moved or damaged`);
    }
  }

  /** Whether `stored` is sealed under the current key (a clear value never is). */
  isCurrent(stored: string): boolean {
    return this.current !== null && stored.startsWith(`${SEALED_PREFIX}${this.current.id}.`);
  }

  /**
   * The value sealed again under the current key (rotation), or `current` when it already is.
   * A clear value is sealed. Throws without a key, or when the value does not open.
   */
  reseal(stored: string, place: string, context?: string): Resealed {
    if (!this.current) throw new SealedValueError("SECRETS_KEY is not set: there is no key to seal with");
    if (this.isCurrent(stored)) return { outcome: "current" };
    return { outcome: "resealed", value: this.seal(this.open(stored, place, context), place, context) };
  }

  /**
   * A replay copy sealed under `context` (an Idempotency-Key): with a key, sealed under the
   * configured key and the context; without one, under the context alone (the form used before
   * decision 0032, which whoever reads the store can open: the context is stored beside it).
   */
  sealWithContext(value: string, place: string, context: string): string {
    return this.current ? this.seal(value, place, context) : sealWith(context, value);
  }

  /**
   * Opens a copy made by {@link sealWithContext} (either form); null when it does not open (a copy
   * sealed under the context alone that the context does not open).
   */
  openWithContext(stored: string, place: string, context: string): string | null {
    return stored.startsWith(SEALED_PREFIX) ? this.open(stored, place, context) : openWith(context, stored);
  }

  /** {@link reseal} for a copy made by {@link sealWithContext}. */
  resealWithContext(stored: string, place: string, context: string): Resealed {
    if (!this.current) throw new SealedValueError("SECRETS_KEY is not set: there is no key to seal with");
    if (this.isCurrent(stored)) return { outcome: "current" };
    const value = this.openWithContext(stored, place, context);
    if (value === null) throw new SealedValueError(`the copy at ${place} does not open`);
    return { outcome: "resealed", value: this.seal(value, place, context) };
  }

  /**
   * The fingerprint of `text` (an idempotent call's canonical method, path, end user and body):
   * an HMAC under a subkey of the current key, so a stored fingerprint cannot be matched against
   * guesses of a low-entropy body (a card number) by whoever reads the store; a plain SHA-256
   * without a key.
   */
  fingerprint(text: string): string {
    const entry = this.current;
    if (!entry) return createHash("sha256").update(text).digest("hex");
    return `${FINGERPRINT_PREFIX}${entry.id}.${createHmac("sha256", entry.fingerprintKey).update(text).digest("hex")}`;
  }

  /**
   * Whether a stored fingerprint is `text`'s: keyed under any configured key, or unkeyed (stored
   * without a key, or before keys existed). False for a fingerprint under a key no longer configured.
   */
  fingerprintMatches(stored: string, text: string): boolean {
    if (!stored.startsWith(FINGERPRINT_PREFIX))
      return createHash("sha256").update(text).digest("hex") === stored;
    const [id, hex] = stored.slice(FINGERPRINT_PREFIX.length).split(".");
    const entry = id === undefined ? undefined : this.byId.get(id);
    if (!entry || hex === undefined) return false;
    return createHmac("sha256", entry.fingerprintKey).update(text).digest("hex") === hex;
  }

  private cipherKey(entry: KeyEntry, context: string | undefined): Buffer {
    return context === undefined
      ? entry.sealKey
      : subkey(entry.key, context, "ledger-bridge sealing under a context v1");
  }
}

function associatedData(keyId: string, place: string): Buffer {
  return Buffer.from(`${SEALED_PREFIX}${keyId}|${place}`, "utf8");
}

/**
 * What the service stores unprotected when no `SECRETS_KEY` is configured: said once at start.
 */
export function unprotectedAtRest(): string[] {
  return [
    "webhook signing secrets (stored in clear)",
    "card numbers, social security numbers and passwords of Requests waiting to be sent (stored in clear until the hand-over)",
    "idempotency replay copies of new API keys, webhook secrets and auth-session client secrets (sealed with the Idempotency-Key alone, which is stored beside them)",
    "idempotency fingerprints (unkeyed SHA-256 of the request body, which can be matched against guesses of a card number)",
  ];
}

/** The sealing of a configuration (`SECRETS_KEY`, `SECRETS_KEY_PREVIOUS`), built once per process. */
export function sealingFor(config: {
  readonly SECRETS_KEY?: string | undefined;
  readonly SECRETS_KEY_PREVIOUS?: string | undefined;
}): Sealing {
  return new Sealing(sealingKeysFrom(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS));
}
