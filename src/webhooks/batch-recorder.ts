import type { AttemptResult } from "../store/webhook-dispatch.ts";

/**
 * Collects attempt results and writes them with one statement per batch: the first result starts a
 * write (after the I/O callbacks already due), and results that arrive while it runs form the next
 * one. Each `record` resolves once its
 * result is written.
 */
export class BatchRecorder {
  private pending: Array<{ result: AttemptResult; done: () => void; failed: (error: unknown) => void }> = [];
  private writing = false;

  constructor(private readonly write: (batch: AttemptResult[]) => Promise<void>) {}

  record(result: AttemptResult): Promise<void> {
    return new Promise((done, failed) => {
      this.pending.push({ result, done, failed });
      if (!this.writing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.writing = true;
    while (this.pending.length > 0) {
      // Let I/O callbacks run first: attempts that ended while the last batch was written join this
      // one (an embedded store answers without yielding to I/O, which left every batch at one).
      await new Promise<void>((resolve) => setImmediate(resolve));
      const batch = this.pending.splice(0, 500);
      try {
        await this.write(batch.map((item) => item.result));
        for (const item of batch) item.done();
      } catch (error) {
        for (const item of batch) item.failed(error);
      }
    }
    this.writing = false;
  }
}
