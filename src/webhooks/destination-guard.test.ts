import assert from "node:assert/strict";
import { test } from "node:test";
import {
  blockedAddressReason,
  blockedRedirectReason,
  checkDestination,
  type ResolvedAddress,
  type Resolver,
} from "./destination-guard.ts";

/**
 * The SSRF guard's address table: every blocked range in its IPv4 form and in the IPv6 forms that
 * embed it, plus the IPv6-only ranges. Each must be refused; public addresses must pass.
 */
const BLOCKED: Array<[address: string, label: RegExp]> = [
  // IPv4
  ["127.0.0.1", /loopback/],
  ["127.255.255.254", /loopback/],
  ["10.0.0.1", /private/],
  ["172.16.5.4", /private/],
  ["172.31.255.255", /private/],
  ["192.168.1.1", /private/],
  ["169.254.1.1", /link-local/],
  ["169.254.169.254", /cloud metadata/],
  ["169.254.170.2", /cloud metadata/],
  ["100.100.100.200", /cloud metadata/],
  ["100.64.0.1", /carrier-grade NAT/],
  ["100.127.255.254", /carrier-grade NAT/],
  ["224.0.0.1", /multicast/],
  ["239.255.255.250", /multicast/],
  ["0.0.0.0", /unspecified/],
  ["0.1.2.3", /unspecified/],
  ["255.255.255.255", /broadcast/],
  ["192.0.2.10", /documentation/],
  ["198.51.100.7", /documentation/],
  ["203.0.113.200", /documentation/],
  ["198.18.0.1", /reserved/],
  ["240.0.0.1", /reserved/],
  ["192.0.0.8", /reserved/],
  // IPv6
  ["::1", /loopback/],
  ["::", /unspecified/],
  ["fe80::1", /link-local/],
  ["fc00::1", /unique local/],
  ["fd12:3456::1", /unique local/],
  ["fd00:ec2::254", /cloud metadata/],
  ["ff02::1", /multicast/],
  ["fec0::1", /site-local/],
  ["2001:db8::1", /documentation/],
  ["3fff::1", /documentation/],
  ["100::1", /special-purpose/],
  // IPv6 forms of blocked IPv4 addresses
  ["::ffff:127.0.0.1", /IPv4-mapped form of 127\.0\.0\.1 \(loopback\)/],
  ["::ffff:7f00:1", /IPv4-mapped form of 127\.0\.0\.1/],
  ["::ffff:10.1.2.3", /IPv4-mapped form of 10\.1\.2\.3 \(private\)/],
  ["::ffff:169.254.169.254", /IPv4-mapped form of 169\.254\.169\.254 \(cloud metadata\)/],
  ["::ffff:100.64.1.1", /IPv4-mapped form .*carrier-grade NAT/],
  ["::ffff:0:192.168.0.1", /IPv4-translated form of 192\.168\.0\.1 \(private\)/],
  ["64:ff9b::a00:1", /NAT64 form of 10\.0\.0\.1 \(private\)/],
  ["64:ff9b::7f00:1", /NAT64 form of 127\.0\.0\.1 \(loopback\)/],
  ["64:ff9b:1::a9fe:a9fe", /NAT64 form of 169\.254\.169\.254/],
  ["2002:7f00:1::", /6to4 form of 127\.0\.0\.1 \(loopback\)/],
  ["2002:c0a8:101::1", /6to4 form of 192\.168\.1\.1 \(private\)/],
  ["::7f00:1", /IPv4-compatible/],
  ["::a00:1", /IPv4-compatible/],
  // ipaddr.js reads the dotted `::a.b.c.d` spelling as IPv4-mapped; blocked either way.
  ["::127.0.0.1", /127\.0\.0\.1 \(loopback\)/],
];

const PUBLIC = [
  "93.184.216.34",
  "8.8.8.8",
  "1.1.1.1",
  "2606:4700:4700::1111",
  "2a00:1450:4001:80b::200e",
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
];

for (const [address, label] of BLOCKED) {
  test(`${address} is blocked (${label.source})`, () => {
    const reason = blockedAddressReason(address);
    assert.ok(reason !== null, `${address} must be blocked`);
    assert.match(reason, label);
  });
}

for (const address of PUBLIC) {
  test(`${address} is a public destination`, () => {
    assert.equal(blockedAddressReason(address), null);
  });
}

test("the loopback allowance admits loopback (both families, and mapped) and nothing else", () => {
  for (const address of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"])
    assert.equal(blockedAddressReason(address, true), null, address);
  for (const address of ["10.0.0.1", "169.254.169.254", "fc00::1", "0.0.0.0", "::"])
    assert.notEqual(blockedAddressReason(address, true), null, address);
});

const fixed =
  (...answers: string[]): Resolver =>
  async () =>
    answers.map((address): ResolvedAddress => ({ address, family: address.includes(":") ? 6 : 4 }));

test("a name is refused when ANY of its addresses is not public (public + private)", async () => {
  const url = new URL("https://hooks.customer.com/x");
  const result = await checkDestination(url, fixed("93.184.216.34", "10.0.0.7"), false);
  assert.deepEqual(result, {
    ok: false,
    error: "blocked_destination: hooks.customer.com resolves to 10.0.0.7, a private address",
    address: "10.0.0.7",
  });
  const v6 = await checkDestination(url, fixed("2606:4700:4700::1111", "::ffff:169.254.169.254"), false);
  assert.equal(v6.ok, false);
  assert.match(v6.ok ? "" : v6.error, /^blocked_destination: .*IPv4-mapped form of 169\.254\.169\.254/);
});

test("a name with only public addresses is allowed, and the address to connect to is the checked one", async () => {
  const result = await checkDestination(
    new URL("https://hooks.customer.com/x"),
    fixed("93.184.216.34", "2606:4700:4700::1111"),
    false,
  );
  assert.deepEqual(result, { ok: true, address: "93.184.216.34", family: 4 });
});

test("the resolver is asked once per check, so a rebinding answer cannot change the checked address", async () => {
  const answers = ["93.184.216.34", "127.0.0.1"];
  let calls = 0;
  const rebinding: Resolver = async () => {
    const address = answers[Math.min(calls, answers.length - 1)] ?? "127.0.0.1";
    calls++;
    return [{ address, family: 4 }];
  };
  const url = new URL("https://rebind.customer.com/x");
  const first = await checkDestination(url, rebinding, false);
  assert.deepEqual(first, { ok: true, address: "93.184.216.34", family: 4 });
  assert.equal(calls, 1);
  const second = await checkDestination(url, rebinding, false);
  assert.equal(calls, 2);
  assert.equal(second.ok, false);
  assert.match(
    second.ok ? "" : second.error,
    /^blocked_destination: rebind\.customer\.com resolves to 127\.0\.0\.1, a loopback address$/,
  );
});

test("internal names and IP literals are refused before any lookup; a failed lookup is a network_error", async () => {
  let calls = 0;
  const counting: Resolver = async () => {
    calls++;
    return [{ address: "93.184.216.34", family: 4 }];
  };
  for (const url of [
    "https://localhost/x",
    "https://metadata.google.internal/x",
    "https://printer.local/x",
    "https://intranet/x",
  ]) {
    const result = await checkDestination(new URL(url), counting, false);
    assert.equal(result.ok, false, url);
    assert.match(result.ok ? "" : result.error, /^blocked_destination: /, url);
  }
  for (const url of [
    "https://10.0.0.1/x",
    "https://[::1]/x",
    "https://[::ffff:a9fe:a9fe]/x",
    "https://0x7f.1/x",
  ]) {
    const result = await checkDestination(new URL(url), counting, false);
    assert.equal(result.ok, false, url);
    assert.match(result.ok ? "" : result.error, /^blocked_destination: .* address$/, url);
  }
  assert.equal(calls, 0);
  const failing: Resolver = async () => {
    throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
  };
  const result = await checkDestination(new URL("https://gone.customer.com/"), failing, false);
  assert.deepEqual(result, {
    ok: false,
    error: "network_error: gone.customer.com could not be resolved (ENOTFOUND)",
    address: null,
  });
});

test("a redirect's target is judged without following it: private addresses and internal names are blocked", () => {
  const base = new URL("https://hooks.customer.com/x");
  assert.match(
    blockedRedirectReason("http://169.254.169.254/latest/meta-data/", base, false) ?? "",
    /^blocked_destination: redirect to 169\.254\.169\.254 \(cloud metadata\) not followed$/,
  );
  assert.match(
    blockedRedirectReason("http://[::ffff:10.0.0.1]/", base, false) ?? "",
    /IPv4-mapped form of 10\.0\.0\.1/,
  );
  assert.match(blockedRedirectReason("http://localhost:8080/", base, false) ?? "", /internal\) host name/);
  assert.equal(blockedRedirectReason("https://elsewhere.customer.com/y", base, false), null);
  assert.equal(blockedRedirectReason("/relative/path", base, false), null);
});
