import type { Deps } from "../deps.ts";
import type { AuthenticatingKey } from "../store/projects.ts";

/**
 * The wake-up channel that tells every instance's cache a key was revoked, or a project's standing
 * changed (decision 0019: the cache keeps it with the key).
 */
export const API_KEYS_CHANNEL = "api-keys";

/** Keys kept at most; the oldest lookup is dropped first. */
const MAX_ENTRIES = 10_000;

type CachedKey = AuthenticatingKey;

/**
 * The secret keys this instance looked up recently, by digest, so that an API call does not read
 * the store to authenticate (decision 0013). Only keys that were valid are kept. An entry lives
 * `API_KEY_CACHE_MS` on the service clock; a revocation through the service empties every
 * instance's cache at once (a wake-up on {@link API_KEYS_CHANNEL}, through LISTEN/NOTIFY on
 * PostgreSQL), and the lifetime bounds how long a key revoked behind the service's back still works.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { key: CachedKey; until: number }>();
  private readonly stopListening: () => void;
  /** Revocations heard so far: a lookup that read the store before one of them is not kept. */
  private revocations = 0;

  constructor(private readonly deps: Pick<Deps, "clock" | "config" | "store">) {
    this.stopListening = deps.store.notifier.listen(API_KEYS_CHANNEL, () => {
      this.revocations += 1;
      this.entries.clear();
    });
  }

  /** Take before reading the store; pass to {@link set} with what was read. */
  get generation(): number {
    return this.revocations;
  }

  get(hash: string): CachedKey | null {
    const entry = this.entries.get(hash);
    if (!entry) return null;
    if (entry.until > this.deps.clock.now()) return entry.key;
    this.entries.delete(hash);
    return null;
  }

  set(key: CachedKey, generation: number): void {
    const lifetime = this.deps.config.API_KEY_CACHE_MS;
    if (lifetime === 0 || generation !== this.revocations) return;
    this.entries.delete(key.hash);
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key.hash, { key, until: this.deps.clock.now() + lifetime });
  }

  close(): void {
    this.stopListening();
    this.entries.clear();
  }
}
