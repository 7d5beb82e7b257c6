import type { Deps } from "../deps.ts";

/**
 * The loop of the service's own background work (the change feed's polls, the mirror's fills and
 * polls): one pass at a time, then the next tick of the service clock, or sooner when `channel` is
 * notified. A notification that arrives while a pass runs is not lost: the listener stays registered
 * between waits and marks the next wait as already over. A failed pass is logged and tried again at
 * the next tick. Resolves when `signal` aborts, after the pass in progress.
 */
export async function runBackgroundLoop(
  deps: Deps,
  options: {
    readonly channel: string;
    readonly tickMs: number;
    readonly what: string;
    readonly pass: () => Promise<void>;
    readonly signal: AbortSignal;
  },
): Promise<void> {
  const { signal } = options;
  let changed = false;
  let wakeUp: (() => void) | null = null;
  const unlisten = deps.store.notifier.listen(options.channel, () => {
    changed = true;
    wakeUp?.();
  });
  try {
    while (!signal.aborted) {
      changed = false;
      try {
        await options.pass();
      } catch (error) {
        deps.logger.error({ err: error }, `${options.what} pass failed; retrying at the next tick`);
      }
      if (changed || signal.aborted) continue;
      const wait = new AbortController();
      const onShutdown = (): void => wait.abort();
      signal.addEventListener("abort", onShutdown, { once: true });
      await Promise.race([
        deps.clock.sleep(options.tickMs, wait.signal),
        new Promise<void>((resolve) => {
          wakeUp = resolve;
          wait.signal.addEventListener("abort", () => resolve(), { once: true });
        }),
      ]);
      wakeUp = null;
      wait.abort();
      signal.removeEventListener("abort", onShutdown);
    }
  } finally {
    unlisten();
  }
}

/**
 * One piece of the service's own background work: its loop ({@link runBackgroundLoop}), the tasks it
 * started that are still running (waits for Requests), and its shutdown, which ends the loop and
 * then waits for those tasks.
 */
export class BackgroundWork {
  readonly shutdown = new AbortController();
  private readonly tasks = new Set<Promise<void>>();
  private loop: Promise<void> = Promise.resolve();

  /** Keeps `task` until it ends: `stop` waits for it. */
  track(task: Promise<void>): void {
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  /** Starts the loop of passes. */
  start(deps: Deps, options: Omit<Parameters<typeof runBackgroundLoop>[1], "signal">): void {
    this.loop = runBackgroundLoop(deps, { ...options, signal: this.shutdown.signal });
  }

  async stop(): Promise<void> {
    this.shutdown.abort();
    await this.loop;
    await Promise.all([...this.tasks]);
  }
}
