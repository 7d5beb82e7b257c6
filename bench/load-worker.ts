/**
 * The bench's HTTP load generator (autocannon) in a child process, so that it does not share the
 * service's thread (autocannon aggregates its results only on a process's main thread): one run
 * per IPC message, answered with the figures the table needs.
 */
import autocannon from "autocannon";

export interface LoadCommand {
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationSeconds: number;
}

export interface LoadReply {
  /** Completed requests per second (2xx only), averaged over the run. */
  perSecond: number;
  latencyP50: number;
  latencyP99: number;
  non2xx: number;
  errors: number;
}

process.on("message", (command: LoadCommand) => {
  autocannon(
    {
      url: command.url,
      headers: command.headers,
      connections: command.connections,
      duration: command.durationSeconds,
    },
    (error, result) => {
      if (error) throw error;
      const ok = result["2xx"];
      process.send?.({
        perSecond: ok / (result.duration || command.durationSeconds),
        latencyP50: result.latency.p50,
        latencyP99: result.latency.p99,
        non2xx: result.non2xx,
        errors: result.errors,
      } satisfies LoadReply);
    },
  );
});
