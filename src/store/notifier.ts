import { EventEmitter } from "node:events";
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
  /** Resolves at the next wake-up on `channel` with its payload (if any), or when `signal` aborts. */
  wait(channel: string, signal: AbortSignal): Promise<unknown>;
  /**
   * Calls `listener` at every wake-up on `channel` until the returned function is called (a
   * long-lived consumer such as the webhook dispatcher must not miss a wake-up between two waits).
   */
  listen(channel: string, listener: (payload?: unknown) => void): () => void;
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
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/**
 * LISTEN/NOTIFY on one dedicated client. Each instance tags its notifications with a random ID and
 * ignores its own echoes (its local listeners were already woken).
 */
export class PostgresNotifier extends LocalNotifier {
  private readonly instance = randomToken(12);

  private constructor(
    private readonly client: pg.Client,
    private readonly pool: pg.Pool,
  ) {
    super();
  }

  static async connect(
    pool: pg.Pool,
    connectionString: string,
    ClientClass: typeof pg.Client,
  ): Promise<PostgresNotifier> {
    const client = new ClientClass({ connectionString });
    await client.connect();
    const notifier = new PostgresNotifier(client, pool);
    client.on("notification", (message) => {
      const payload = message.payload ?? "";
      const split = payload.indexOf("|");
      if (split < 0 || payload.slice(0, split) === notifier.instance) return;
      notifier.emitter.emit(payload.slice(split + 1));
    });
    await client.query(`listen ${PG_CHANNEL}`);
    return notifier;
  }

  override async notify(channel: string, payload?: unknown): Promise<void> {
    await super.notify(channel, payload);
    await this.pool.query("select pg_notify($1, $2)", [PG_CHANNEL, `${this.instance}|${channel}`]);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.client.end();
  }
}
