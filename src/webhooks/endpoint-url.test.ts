import assert from "node:assert/strict";
import { test } from "node:test";
import { ServiceError } from "../errors/service-error.ts";
import { checkEndpointUrl } from "./endpoint-url.ts";

/** Spec (webhook endpoint `url`): HTTPS, public DNS name, default port, no IP addresses, no internal names, ≤ 2048. */
const REFUSED: Array<[url: string, code: string, message: RegExp]> = [
  ["http://hooks.customer.com/x", "INVALID_PARAMETER", /https/],
  ["ftp://hooks.customer.com/x", "INVALID_PARAMETER", /https/],
  ["https://hooks.customer.com:8443/x", "INVALID_PARAMETER", /default https port/],
  ["https://93.184.216.34/x", "INVALID_PARAMETER", /not an IP address/],
  ["https://[2606:4700:4700::1111]/x", "INVALID_PARAMETER", /not an IP address/],
  ["https://2130706433/x", "INVALID_PARAMETER", /not an IP address/],
  ["https://0x7f.0.0.1/x", "INVALID_PARAMETER", /not an IP address/],
  ["https://localhost/x", "INVALID_PARAMETER", /internal/],
  ["https://api.localhost/x", "INVALID_PARAMETER", /\.localhost/],
  ["https://printer.local/x", "INVALID_PARAMETER", /\.local/],
  ["https://metadata.google.internal/x", "INVALID_PARAMETER", /\.internal/],
  ["https://router.home.arpa/x", "INVALID_PARAMETER", /\.home\.arpa/],
  ["https://intranet/x", "INVALID_PARAMETER", /single-label/],
  ["https://hooks.customer.c0/x", "INVALID_PARAMETER", /top-level domain/],
  ["https://hooks.customer.123/x", "INVALID_PARAMETER", /absolute https URL/],
  ["https://user:pass@hooks.customer.com/x", "INVALID_PARAMETER", /credentials/],
  ["not a url", "INVALID_PARAMETER", /absolute https URL/],
  ["/relative", "INVALID_PARAMETER", /absolute https URL/],
  [`https://hooks.customer.com/${"a".repeat(2048)}`, "STRING_TOO_LONG", /2048/],
];

for (const [url, code, message] of REFUSED) {
  test(`${url.slice(0, 60)} is refused with ${code}`, () => {
    assert.throws(
      () => checkEndpointUrl(url, false),
      (error: unknown) =>
        error instanceof ServiceError &&
        error.code === code &&
        error.param === "url" &&
        message.test(error.message),
    );
  });
}

test("public https URLs are accepted and normalised; 2048 characters is the limit", () => {
  assert.equal(
    checkEndpointUrl("https://Hooks.Customer.com/in?x=1", false),
    "https://hooks.customer.com/in?x=1",
  );
  assert.equal(checkEndpointUrl("https://hooks.customer.com:443/in", false), "https://hooks.customer.com/in");
  assert.equal(checkEndpointUrl("https://bücher.de/hook", false), "https://xn--bcher-kva.de/hook");
  const longest = `https://hooks.customer.com/${"a".repeat(2048 - "https://hooks.customer.com/".length)}`;
  assert.equal(longest.length, 2048);
  assert.equal(checkEndpointUrl(longest, false), longest);
});

test("loopback receivers need the explicit allowance; other rules stay in force with it", () => {
  for (const url of [
    "http://localhost:9999/hooks",
    "http://127.0.0.1:9999/hooks",
    "https://[::1]:9443/hooks",
  ]) {
    assert.throws(() => checkEndpointUrl(url, false), ServiceError, url);
    assert.equal(checkEndpointUrl(url, true), url);
  }
  for (const url of ["http://10.0.0.1:9999/x", "http://hooks.customer.com/x", "https://printer.local/x"])
    assert.throws(() => checkEndpointUrl(url, true), ServiceError, url);
});
