import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  formatLatencyProfile,
  isZeroLatency,
  parseLatencyProfile,
  REALISTIC_LATENCY,
  ZERO_LATENCY,
} from "./latency-profile.ts";

void describe("latency profile text", () => {
  void it("reads the named profiles and entries in any order, a key left out being 0", () => {
    assert.deepEqual(parseLatencyProfile("zero"), ZERO_LATENCY);
    assert.deepEqual(parseLatencyProfile("realistic"), {
      soapCallMs: 80,
      messageSetMs: 150,
      requestMs: 30,
      recordMs: 2,
    });
    assert.deepEqual(parseLatencyProfile("soap:80,messageSet:150,request:30,record:2"), REALISTIC_LATENCY);
    assert.deepEqual(parseLatencyProfile(" record : 3 , soap:10 "), {
      soapCallMs: 10,
      messageSetMs: 0,
      requestMs: 0,
      recordMs: 3,
    });
    assert.deepEqual(parseLatencyProfile("messageSet:60000"), { ...ZERO_LATENCY, messageSetMs: 60_000 });
    // An environment variable set to nothing is no latency, as when it is unset.
    assert.deepEqual(parseLatencyProfile(""), ZERO_LATENCY);
    assert.deepEqual(parseLatencyProfile("  "), ZERO_LATENCY);
  });

  void it("refuses anything else, naming what is wrong", () => {
    const refused: Array<[string, RegExp]> = [
      ["fast", /"fast" is not key:milliseconds; give a profile name \(zero, realistic\)/],
      ["Realistic", /"Realistic" is not key:milliseconds/],
      ["soap:80,", /"" is not key:milliseconds/],
      ["soap=80", /"soap=80" is not key:milliseconds/],
      ["soap:-5", /"soap:-5" is not key:milliseconds/],
      ["soap:1.5", /"soap:1.5" is not key:milliseconds/],
      ["soap:", /"soap:" is not key:milliseconds/],
      ["network:80", /unknown key "network"; the keys are soap, messageSet, request, record/],
      ["soapCallMs:80", /unknown key "soapCallMs"/],
      ["messageset:80", /unknown key "messageset"/],
      ["soap:80,soap:40", /"soap" is given twice/],
      ["record:60001", /record: 60001 ms is more than 60000 ms/],
      ["toString", /"toString" is not key:milliseconds/],
    ];
    for (const [text, message] of refused) {
      assert.throws(() => parseLatencyProfile(text), message, text);
    }
  });

  void it("writes a profile back as its name or its entries, which read back the same", () => {
    assert.equal(formatLatencyProfile(REALISTIC_LATENCY), "realistic");
    assert.equal(formatLatencyProfile(ZERO_LATENCY), "zero");
    const custom = parseLatencyProfile("soap:40,request:10");
    assert.equal(formatLatencyProfile(custom), "soap:40,messageSet:0,request:10,record:0");
    assert.deepEqual(parseLatencyProfile(formatLatencyProfile(custom)), custom);
  });

  void it("says whether a profile adds any delay", () => {
    assert.equal(isZeroLatency(ZERO_LATENCY), true);
    assert.equal(isZeroLatency(parseLatencyProfile("soap:0,record:0")), true);
    for (const text of ["soap:1", "messageSet:1", "request:1", "record:1"]) {
      assert.equal(isZeroLatency(parseLatencyProfile(text)), false, text);
    }
  });
});
