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
