import type { Deps } from "../deps.ts";
import { REQUESTS_GONE_CHANNEL, type RequestRow } from "../store/requests.ts";
import { isTestTenant, type Tenant } from "../store/tenant.ts";

/** Entries kept at most; the oldest is dropped first. */
const MAX_ENTRIES = 5_000;
/** Bodies kept at most, in characters (about twice as many bytes). */
const MAX_TOTAL_CHARS = 16 * 1024 * 1024;
/** A body larger than this is not kept (a large result is read from the store every time). */
const MAX_BODY_CHARS = 256 * 1024;
/**
 * An entry is not served once its Request is this close to the end of its retention: the sweep of
 * another instance (another clock) deletes it then, and says so only after it did.
 */
const RETENTION_MARGIN_MS = 60 * 60 * 1000;

/**
 * Final statuses: no transition leaves them (lifecycle.ts); `outcome_unknown` is settled but not
 * final (a recovery resolves it), so it is never kept.
 */
const FINAL: ReadonlySet<string> = new Set(["succeeded", "failed", "canceled"]);

interface Entry {
  projectId: string;
  isTest: boolean;
  /** After this (service clock), the entry is not served. */
  until: number;
  body: string;
}

/**
 * `GET /v1/requests/{id}` bodies of final Requests, as JSON text (decision 0027). A final Request
 * never changes: no transition leaves succeeded, failed or canceled, and the statements that touch
 * a Request's row after it settled (a sync caller gone, a claim) apply only to unsettled ones. It
 * can only disappear: deleted by the retention sweep, or with its end user. Both say so on
 * {@link REQUESTS_GONE_CHANNEL}, which empties every instance's cache; a read that started before
 * such a wake-up is not kept (the generation), and nothing is kept or served while the notifier
 * cannot promise delivery (PostgreSQL's LISTEN connection being restored). So the cache serves a
 * Request exactly when the store would still return it, as of the last wake-up this instance heard.
 */
export class SettledRequests {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
  private generationCount = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly deps: Pick<Deps, "clock" | "config" | "store">) {
    deps.store.notifier.listen(REQUESTS_GONE_CHANNEL, () => {
      this.generationCount += 1;
      this.clear();
    });
  }

  /** Take before reading the store; pass to {@link set} with what was read. */
  get generation(): number {
    return this.generationCount;
  }

  /** The body of the tenant's final Request `id`, or null (read the store). */
  get(tenant: Tenant, id: string): string | null {
    const entry = this.entries.get(id);
    if (
      !entry ||
      !this.deps.store.notifier.delivering ||
      entry.projectId !== tenant.projectId ||
      entry.isTest !== isTestTenant(tenant)
    ) {
      this.misses += 1;
      return null;
    }
    if (entry.until <= this.deps.clock.now()) {
      this.drop(id, entry);
      this.misses += 1;
      return null;
    }
    this.hits += 1;
    return entry.body;
  }

  /** Keeps `body` (the serialized `row`) when the Request is final and nothing was deleted since `generation`. */
  set(row: RequestRow, body: string, generation: number): void {
    if (!FINAL.has(row.status) || row.completed_at === null) return;
    if (generation !== this.generationCount || !this.deps.store.notifier.delivering) return;
    if (body.length > MAX_BODY_CHARS) return;
    const until = row.completed_at.getTime() + this.deps.config.REQUEST_RETENTION_MS - RETENTION_MARGIN_MS;
    if (until <= this.deps.clock.now()) return;
    const previous = this.entries.get(row.id);
    if (previous) this.drop(row.id, previous);
    while (this.entries.size >= MAX_ENTRIES || this.chars + body.length > MAX_TOTAL_CHARS) {
      const oldest = this.entries.entries().next();
      if (oldest.done) break;
      this.drop(oldest.value[0], oldest.value[1]);
    }
    this.entries.set(row.id, { projectId: row.project_id, isTest: row.is_test, until, body });
    this.chars += body.length;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.chars = 0;
  }

  private drop(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.chars -= entry.body.length;
  }
}

const caches = new WeakMap<object, SettledRequests>();

/** The instance's cache (one per Deps, made at first use). */
export function settledRequestsOf(deps: Pick<Deps, "clock" | "config" | "store">): SettledRequests {
  let cache = caches.get(deps);
  if (!cache) {
    cache = new SettledRequests(deps);
    caches.set(deps, cache);
  }
  return cache;
}
