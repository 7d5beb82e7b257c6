/**
 * The service's memory with no connector session (issue 17, `BENCH_ONLY=memory`): `dist/main.js` as
 * users run it (bench/service-process.ts: on-disk store, info logging, simulator off), on a store
 * seeded with one project and one end user, measured after it has idled a while with no traffic.
 * Two starts per store: the first creates the store (on PGlite: the data directory), the second
 * reopens it, as every later start does. Printed, never asserted.
 */
import { freshStore, seedStore, startService, type BenchStore } from "./service-process.ts";

/** How long the service idles after `/readyz` answers before its memory is read. */
export const IDLE_MEMORY_WAIT_MS = 10_000;

export interface IdleMemory {
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
}

export interface IdleMemoryResult {
  engine: "pglite" | "postgres";
  firstStart: IdleMemory;
  restart: IdleMemory;
}

async function measureOnce(target: BenchStore): Promise<IdleMemory> {
  const service = await startService(target);
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_MEMORY_WAIT_MS));
    return { rssBytes: service.rss(), ...(await service.memory()) };
  } finally {
    await service.stop();
  }
}

/** Idle memory of a first start and of a restart on one fresh store (`serverUrl`: PostgreSQL). */
export async function measureIdleMemory(serverUrl: string | undefined): Promise<IdleMemoryResult> {
  const target = await freshStore(serverUrl);
  try {
    const firstStart = await measureOnce(target);
    // Seeded in between (the service's data directory lock is free again): the restart reopens a
    // store with a project and an end user, as a deployment's is.
    await seedStore(target, 1);
    const restart = await measureOnce(target);
    return { engine: serverUrl ? "postgres" : "pglite", firstStart, restart };
  } finally {
    await target.drop();
  }
}
