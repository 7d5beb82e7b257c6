import { EventEmitter } from "node:events";
import { sql, type RawBuilder } from "kysely";
import type pg from "pg";
import { randomToken } from "../platform/random.ts";

/**
 * Wake-ups between the API and the connector endpoint (architecture §2): "something changed for this
 * connection / request". Listeners in this process are woken at once, with an optional payload (the
 * row that changed, so an in-process waiter need not read it back). On PostgreSQL the wake-up also
 * travels through LISTEN/NOTIFY, without the payload, so that an API call on one instance wakes a
 * held connector call on another; a receiver without a payload re-reads the store.
 */
export interface Notifier {
  notify(channel: string, payload?: unknown): Promise<void>;
  /**
   * The wake-up of `channel` for other instances as an expression a statement evaluates once per
   * row it returns (PostgreSQL: `pg_notify`, delivered when the statement's transaction commits, so
   * it can never be sent for a change that was not stored), or null when other instances are not
   * reached that way (the embedded store has none). The statement saves the round trip of a
   * `notify` of its own (decision 0029); this process's waiters are then woken with {@link wakeHere}.
   */
  carried(channel: string): RawBuilder<unknown> | null;
  /** Wakes this process's waiters only: for a wake-up a statement {@link carried} to the others. */
  wakeHere(channel: string, payload?: unknown): void;
  /** Resolves at the next wake-up on `channel` with its payload (if any), or when `signal` aborts. */
  wait(channel: string, signal: AbortSignal): Promise<unknown>;
  /**
   * Calls `listener` at every wake-up on `channel` until the returned function is called (a
   * long-lived consumer such as the webhook dispatcher must not miss a wake-up between two waits).
   */
  listen(channel: string, listener: (payload?: unknown) => void): () => void;
  /**
   * Whether every wake-up reaches this process's listeners now (false while PostgreSQL's LISTEN
   * connection is being restored, when notifications from other instances are lost). What is known
   * from memory only because nothing woke it is not trusted meanwhile.
   */
  readonly delivering: boolean;
  close(): Promise<void>;
}

const PG_CHANNEL = "ledger_bridge_wakeup";

export class LocalNotifier implements Notifier {
  protected readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  async notify(channel: string, payload?: unknown): Promise<void> {
    this.emitter.emit(channel, payload);
  }
  carried(_channel: string): RawBuilder<unknown> | null {
    return null;
  }
  wakeHere(channel: string, payload?: unknown): void {
    this.emitter.emit(channel, payload);
  }
  wait(channel: string, signal: AbortSignal): Promise<unknown> {
    return new Promise<unknown>((resolve) => {
      if (signal.aborted) return resolve(undefined);
      const done = (payload?: unknown): void => {
        this.emitter.off(channel, done);
        signal.removeEventListener("abort", aborted);
        resolve(payload);
      };
      const aborted = (): void => done(undefined);
      this.emitter.on(channel, done);
      signal.addEventListener("abort", aborted, { once: true });
    });
  }
  listen(channel: string, listener: (payload?: unknown) => void): () => void {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }
  get delivering(): boolean {
    return true;
  }
  /** Waiters and listeners registered in this process, over all channels (leak checks in tests). */
  get waiterCount(): number {
    return this.emitter.eventNames().reduce((sum, name) => sum + this.emitter.listenerCount(name), 0);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** Waits between reconnection attempts of the LISTEN client, longest last. */
const RECONNECT_DELAYS_MS = [100, 500, 1000, 2000, 5000];

/**
 * LISTEN/NOTIFY on one dedicated client. Each instance tags its notifications with a random ID and
 * ignores its own echoes (its local listeners were already woken). When the client's connection
 * breaks (a database restart, an administrator's terminate), it reconnects in the background and then
 * wakes every waiter once, since notifications sent in the gap are lost and a woken waiter re-reads
 * the store. (The pool's own clients' errors are heard where the pool is made, `store/database.ts`.)
 */
export class PostgresNotifier extends LocalNotifier {
  private readonly instance = randomToken(12);
  private client: pg.Client | undefined;
  private closed = false;
  private reconnecting: Promise<void> | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly connectClient: () => Promise<pg.Client>,
  ) {
    super();
  }

  static async connect(
    pool: pg.Pool,
    connectionString: string,
    ClientClass: typeof pg.Client,
  ): Promise<PostgresNotifier> {
    const notifier = new PostgresNotifier(pool, async () => {
      const client = new ClientClass({ connectionString });
      await client.connect();
      return client;
    });
    await notifier.subscribe();
    return notifier;
  }

  private async subscribe(): Promise<void> {
    const client = await this.connectClient();
    client.on("notification", (message) => {
      const payload = message.payload ?? "";
      const split = payload.indexOf("|");
      if (split < 0 || payload.slice(0, split) === this.instance) return;
      this.emitter.emit(payload.slice(split + 1));
    });
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      client.end().catch(() => undefined);
      this.reconnect();
    };
    client.on("error", lost);
    client.on("end", lost);
    try {
      await client.query(`listen ${PG_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
  }

  /** Reconnects with growing waits until it works or the notifier closes, then wakes every waiter. */
  private reconnect(): void {
    if (this.closed || this.reconnecting) return;
    this.reconnecting = (async () => {
      for (let attempt = 0; !this.closed; attempt++) {
        const delay = RECONNECT_DELAYS_MS[Math.min(attempt, RECONNECT_DELAYS_MS.length - 1)] ?? 5000;
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        if (this.closed) return;
        try {
          await this.subscribe();
          for (const channel of this.emitter.eventNames()) this.emitter.emit(channel);
          return;
        } catch {
          // The database is still away: try again after a longer wait.
        }
      }
    })().finally(() => {
      this.reconnecting = undefined;
    });
  }

  /** Whether the LISTEN client is connected (false while reconnecting). */
  get listening(): boolean {
    return this.client !== undefined;
  }

  override get delivering(): boolean {
    return this.client !== undefined;
  }

  /** Notifications sent as statements of their own (not carried by a change's statement). */
  sentAlone = 0;

  override async notify(channel: string, payload?: unknown): Promise<void> {
    await super.notify(channel, payload);
    this.sentAlone += 1;
    await this.pool.query("select pg_notify($1, $2)", [PG_CHANNEL, this.tagged(channel)]);
  }

  override carried(channel: string): RawBuilder<unknown> {
    return sql`pg_notify(${PG_CHANNEL}, ${this.tagged(channel)})`;
  }

  private tagged(channel: string): string {
    return `${this.instance}|${channel}`;
  }

  override async close(): Promise<void> {
    this.closed = true;
    await super.close();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
