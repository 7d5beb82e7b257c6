import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "./config.ts";

test("the simulator is on by default, off under NODE_ENV=production unless SIMULATOR asks for it", () => {
  assert.equal(loadConfig({}).SIMULATOR, "on", "npm start: the quick start's demo");
  assert.equal(loadConfig({ NODE_ENV: "development" }).SIMULATOR, "on");
  assert.equal(loadConfig({ NODE_ENV: "production" }).SIMULATOR, "off", "the container image");
  assert.equal(loadConfig({ NODE_ENV: "production", SIMULATOR: "on" }).SIMULATOR, "on", "asked for");
  assert.equal(loadConfig({ SIMULATOR: "off" }).SIMULATOR, "off");
  assert.throws(() => loadConfig({ SIMULATOR: "yes" }), /SIMULATOR/);
});

test("SIMULATOR_LATENCY: zero unless set; a name or key:milliseconds entries; anything else stops the start", () => {
  assert.deepEqual(loadConfig({}).SIMULATOR_LATENCY, {
    soapCallMs: 0,
    messageSetMs: 0,
    requestMs: 0,
    recordMs: 0,
  });
  assert.deepEqual(loadConfig({ SIMULATOR_LATENCY: "realistic" }).SIMULATOR_LATENCY, {
    soapCallMs: 80,
    messageSetMs: 150,
    requestMs: 30,
    recordMs: 2,
  });
  assert.deepEqual(loadConfig({ SIMULATOR_LATENCY: "soap:40,record:1" }).SIMULATOR_LATENCY, {
    soapCallMs: 40,
    messageSetMs: 0,
    requestMs: 0,
    recordMs: 1,
  });
  assert.throws(
    () => loadConfig({ SIMULATOR_LATENCY: "slow" }),
    /Invalid configuration:\n {2}SIMULATOR_LATENCY: "slow" is not key:milliseconds; give a profile name \(zero, realistic\)/,
  );
  assert.throws(
    () => loadConfig({ SIMULATOR_LATENCY: "soap:80,lag:5" }),
    /SIMULATOR_LATENCY: unknown key "lag"/,
  );
});

test("SIMULATOR_COMPANY_SIZE: small unless set; large for benches; anything else stops the start", () => {
  assert.equal(loadConfig({}).SIMULATOR_COMPANY_SIZE, "small");
  assert.equal(loadConfig({ SIMULATOR_COMPANY_SIZE: "large" }).SIMULATOR_COMPANY_SIZE, "large");
  assert.throws(() => loadConfig({ SIMULATOR_COMPANY_SIZE: "huge" }), /SIMULATOR_COMPANY_SIZE/);
});

test("an environment variable the service does not know is ignored, not refused", () => {
  // A variable of a later version (or of another program) in the environment does not stop a start.
  const config = loadConfig({ SOME_LATER_SETTING: "1", PORT: "9090" });
  assert.equal(config.PORT, 9090);
  assert.equal(Object.hasOwn(config, "SOME_LATER_SETTING"), false);
});
