import type { ChildProcess } from "node:child_process";

/**
 * Child processes of the bench (services, connector fleets, load generators). They are killed when
 * the bench exits, by the watchdog's `process.exit` or by SIGINT/SIGTERM too, so a cut-off run leaves
 * no service running that would load the machine under the next one.
 */
const running = new Set<ChildProcess>();

process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
// Interrupted (Ctrl-C, a timeout's SIGTERM): exit through the handler above.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

/** Tracks `child` until it exits; returns it. */
export function tracked<C extends ChildProcess>(child: C): C {
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}
