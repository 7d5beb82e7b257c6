import { EventEmitter } from "node:events";
import type pg from "pg";

/**
 * Wake-ups between the API and the connector endpoint (architecture §2): "something changed for this
 * connection / request". In one process an EventEmitter carries them; on PostgreSQL they also travel
 * through LISTEN/NOTIFY so that an API call on one instance wakes a held connector call on another.
 * A wake-up carries no state: the receiver always re-reads the store.
 */
export interface Notifier {
  notify(channel: string): Promise<void>;
  /** Resolves at the next wake-up on `channel`, or when `signal` aborts. */
  wait(channel: string, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

const PG_CHANNEL = "ledger_bridge_wakeup";

export class LocalNotifier implements Notifier {
  protected readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  async notify(channel: string): Promise<void> {
    this.emitter.emit(channel);
  }
  wait(channel: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const done = (): void => {
        this.emitter.off(channel, done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.emitter.on(channel, done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** LISTEN/NOTIFY on one dedicated client; local listeners are woken from the notifications. */
export class PostgresNotifier extends LocalNotifier {
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
      if (message.payload) notifier.emitter.emit(message.payload);
    });
    await client.query(`listen ${PG_CHANNEL}`);
    return notifier;
  }

  override async notify(channel: string): Promise<void> {
    await this.pool.query("select pg_notify($1, $2)", [PG_CHANNEL, channel]);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.client.end();
  }
}
