import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { LOCK_FILE_NAME, readLockHolder, tryAcquireDataDirLock } from "./data-dir-lock.ts";

function dataDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), "lb-lock-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function writeLock(dir: string, holder: Record<string, unknown>): void {
  writeFileSync(join(dir, LOCK_FILE_NAME), JSON.stringify(holder));
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

describe("data directory lock", () => {
  it("is held by one owner at a time and reports who holds it", async (t) => {
    const dir = dataDir(t);
    const first = await tryAcquireDataDirLock(dir, "service");
    assert.ok(first.acquired);
    const second = await tryAcquireDataDirLock(dir, "cli");
    assert.equal(second.acquired, false);
    assert.ok(!second.acquired && second.holder.pid === process.pid && second.holder.role === "service");
    first.lock.release();
    assert.equal(existsSync(join(dir, LOCK_FILE_NAME)), false);
    const third = await tryAcquireDataDirLock(dir, "cli");
    assert.ok(third.acquired);
    assert.equal(readLockHolder(dir)?.role, "cli");
    third.lock.release();
  });

  it("replaces the lock of a process that is gone", async (t) => {
    const dir = dataDir(t);
    writeLock(dir, { pid: deadPid(), role: "service", hostname: (await import("node:os")).hostname() });
    const attempt = await tryAcquireDataDirLock(dir, "service");
    assert.ok(attempt.acquired);
    assert.equal(readLockHolder(dir)?.pid, process.pid);
    attempt.lock.release();
  });

  it("does not mistake a recycled pid for the holder (Linux process start time)", async (t) => {
    if (!existsSync(`/proc/${process.pid}/stat`)) return t.skip("no /proc");
    const dir = dataDir(t);
    // Our own pid, as a container's pid 1 is after a restart, but another start time.
    writeLock(dir, {
      pid: process.pid,
      role: "service",
      hostname: (await import("node:os")).hostname(),
      startTicks: "1",
    });
    const attempt = await tryAcquireDataDirLock(dir, "service");
    assert.ok(attempt.acquired);
    attempt.lock.release();
  });

  it("replaces an unreadable lock file but never another host's lock", async (t) => {
    const dir = dataDir(t);
    writeFileSync(join(dir, LOCK_FILE_NAME), "{not json");
    const replaced = await tryAcquireDataDirLock(dir, "cli");
    assert.ok(replaced.acquired);
    replaced.lock.release();
    writeLock(dir, { pid: deadPid(), role: "service", hostname: "another-host.example" });
    const refused = await tryAcquireDataDirLock(dir, "cli");
    assert.equal(refused.acquired, false);
    assert.match(readFileSync(join(dir, LOCK_FILE_NAME), "utf8"), /another-host/);
  });

  it("release leaves a lock taken over by someone else alone", async (t) => {
    const dir = dataDir(t);
    const attempt = await tryAcquireDataDirLock(dir, "cli");
    assert.ok(attempt.acquired);
    writeLock(dir, { pid: 1, role: "service", hostname: "another-host.example" });
    attempt.lock.release();
    assert.equal(readLockHolder(dir)?.hostname, "another-host.example");
  });
});
