import { pino, type Logger } from "pino";

/**
 * The service's logger: JSON lines (pino) written asynchronously (decision 0029).
 *
 * A synchronous destination made every access-log line a `write(2)` on the event loop's thread:
 * about a sixth of a cached `GET /v1/requests/{id}` (decision 0027's profile). Here a line is
 * appended to a buffer and written off the thread; lines that arrive while a write is in flight go
 * out together in the next one, so a busy service makes one write per batch, and a quiet one writes
 * each line at once (no minimum batch size: nothing waits for more lines to come). On a normal
 * exit, a signal handled by the service, or an uncaught error the buffer is written synchronously
 * before the process ends (pino's exit hook); only a `kill -9` or a crash of the runtime itself can
 * lose the lines of the write in flight.
 *
 * `dest` is a file descriptor (1 = standard output, the default) or a file path.
 */
export function serviceLogger(
  level: string,
  dest: number | string = 1,
): { logger: Logger; flush: () => void } {
  const destination = pino.destination({ dest, sync: false, minLength: 0 });
  return {
    logger: pino({ level }, destination),
    flush: () => destination.flushSync(),
  };
}
