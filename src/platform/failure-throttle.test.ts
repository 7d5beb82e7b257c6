import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "./clock.ts";
import { FailureThrottle } from "./failure-throttle.ts";

void describe("FailureThrottle", () => {
  void it("admits an address until its limit of failures in one window, then turns it away until the window ends", async () => {
    const clock = new FakeClock();
    const throttle = new FailureThrottle(clock, 10, 60_000);
    for (let i = 0; i < 10; i += 1) {
      assert.equal(throttle.blockedForMs("198.51.100.7"), 0, `attempt ${i + 1} is admitted`);
      throttle.failed("198.51.100.7");
    }
    // The 11th attempt within the minute is turned away, for what is left of the window.
    await clock.advance(15_000);
    assert.equal(throttle.blockedForMs("198.51.100.7"), 45_000);
    // Another address is not affected.
    assert.equal(throttle.blockedForMs("198.51.100.8"), 0);
    await clock.advance(44_999);
    assert.equal(throttle.blockedForMs("198.51.100.7"), 1);
    await clock.advance(1);
    assert.equal(throttle.blockedForMs("198.51.100.7"), 0, "a new window starts");
    throttle.failed("198.51.100.7");
    assert.equal(throttle.blockedForMs("198.51.100.7"), 0, "one failure of the new window");
  });

  void it("starts a new window for failures spread wider than the window", async () => {
    const clock = new FakeClock();
    const throttle = new FailureThrottle(clock, 3, 60_000);
    for (let i = 0; i < 10; i += 1) {
      throttle.failed("a");
      assert.equal(throttle.blockedForMs("a"), 0, `failure ${i + 1}, a minute apart`);
      await clock.advance(60_000);
    }
  });

  void it("remembers at most maxTracked addresses, forgetting the oldest window first", () => {
    const throttle = new FailureThrottle(new FakeClock(), 1, 60_000, 3);
    for (const address of ["a", "b", "c", "d"]) throttle.failed(address);
    assert.equal(throttle.tracked, 3);
    assert.equal(throttle.blockedForMs("a"), 0, "the oldest was forgotten");
    for (const address of ["b", "c", "d"]) assert.ok(throttle.blockedForMs(address) > 0, address);
  });
});
