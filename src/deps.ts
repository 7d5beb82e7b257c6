import type { Logger } from "pino";
import type { Config } from "./config.ts";
import type { Clock } from "./platform/clock.ts";
import type { Db, Store } from "./store/database.ts";

/** Everything a module needs from the outside world, built once in main.ts (or the test harness). */
export interface Deps {
  config: Config;
  store: Store;
  db: Db;
  clock: Clock;
  logger: Logger;
}
