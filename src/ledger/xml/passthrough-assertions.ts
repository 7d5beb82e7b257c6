import assert from "node:assert/strict";
import { ServiceError } from "../../errors/service-error.ts";
import { parsePassthroughXml } from "./message-set.ts";

/** Test assertions on passthrough parsing (shared by the message-set and request-schema tests). */

/** The passthrough accepts the messages, or the test fails with the service's own message. */
export function acceptsPassthrough(xml: string): void {
  try {
    parsePassthroughXml(xml);
  } catch (error) {
    assert.fail(`expected ${xml.slice(0, 200)} to be valid, got: ${(error as Error).message}`);
  }
}

/** The passthrough rejects the messages before queueing: PASSTHROUGH_INVALID_XML naming `body`. */
export function rejectsPassthrough(xml: string, message: string | RegExp): void {
  assert.throws(
    () => parsePassthroughXml(xml),
    (error: unknown) => {
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.code, "PASSTHROUGH_INVALID_XML");
      assert.equal(error.param, "body");
      if (typeof message === "string") assert.equal(error.message, message);
      else assert.match(error.message, message);
      return true;
    },
  );
}
