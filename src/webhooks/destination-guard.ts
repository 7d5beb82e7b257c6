import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { internalNameReason } from "./endpoint-url.ts";

/**
 * The SSRF guard, applied before every delivery attempt (spec: Events, "Destinations that are not
 * public are blocked"; issue 9 item 4). The endpoint's host name is resolved once; if ANY address is
 * not a public unicast address the attempt is refused with `blocked_destination: …`; otherwise the
 * attempt connects to the checked address itself (transport.ts pins it), so a second lookup that a
 * rebinding name server could answer differently never happens.
 *
 * Blocked: loopback, private (RFC 1918, IPv6 unique local), link-local, carrier-grade NAT,
 * multicast, broadcast, unspecified, documentation, benchmarking and other special-purpose ranges,
 * cloud metadata addresses, and IPv6 forms that embed a blocked IPv4 address (IPv4-mapped,
 * IPv4-translated, NAT64, 6to4, IPv4-compatible). Address classification is `ipaddr.js`'s.
 * Loopback addresses are allowed only when `allowLoopback` is set (tests and local development).
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (injectable: tests use fake name servers). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (getaddrinfo, as every other program on the host sees names). */
export const systemResolver: Resolver = async (hostname) => {
  const addresses = await lookup(hostname, { all: true, verbatim: true });
  return addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export type Destination =
  { ok: true; address: string; family: 4 | 6 } | { ok: false; error: string; address: string | null };

/** Cloud metadata services (all also fall in a blocked range; named so the log says why). */
const CLOUD_METADATA = new Set([
  "169.254.169.254",
  "169.254.170.2",
  "169.254.169.123",
  "100.100.100.200",
  "192.0.0.192",
  "fd00:ec2::254",
]);

const DOCUMENTATION = ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20"].map(
  (cidr) => ipaddr.parseCIDR(cidr),
);

const RANGE_LABELS: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "carrier-grade NAT",
  private: "private",
  uniqueLocal: "private (unique local)",
  deprecatedSiteLocal: "site-local",
  reserved: "reserved",
  benchmarking: "benchmarking",
};

/** Why an address is not a public destination, or null when it is one. */
export function blockedAddressReason(address: string, allowLoopback = false): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return "not an IP address";
  }
  const normalized = parsed.toString();
  if (CLOUD_METADATA.has(normalized)) return "cloud metadata";
  if (parsed.kind() === "ipv6") {
    const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
    if (embedded) {
      const inner = blockedAddressReason(embedded.address.toString(), allowLoopback);
      if (embedded.form === "IPv4-compatible") return `${embedded.form} form (deprecated)`;
      return inner === null ? null : `${embedded.form} form of ${embedded.address.toString()} (${inner})`;
    }
  }
  if (DOCUMENTATION.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits)))
    return "documentation";
  const range = parsed.range();
  if (range === "unicast") return null;
  if (range === "loopback" && allowLoopback) return null;
  return RANGE_LABELS[range] ?? `special-purpose (${range})`;
}

/** The IPv4 address embedded in an IPv6 address, with the name of the form, if any. */
function embeddedIPv4(v6: ipaddr.IPv6): { address: ipaddr.IPv4; form: string } | null {
  const parts = v6.parts;
  const tail = (): ipaddr.IPv4 =>
    new ipaddr.IPv4([
      (parts[6] ?? 0) >> 8,
      (parts[6] ?? 0) & 255,
      (parts[7] ?? 0) >> 8,
      (parts[7] ?? 0) & 255,
    ]);
  const range = v6.range();
  if (range === "ipv4Mapped") return { address: v6.toIPv4Address(), form: "IPv4-mapped" };
  if (range === "rfc6145") return { address: tail(), form: "IPv4-translated" };
  if (range === "rfc6052") return { address: tail(), form: "NAT64" };
  if (range === "6to4") {
    const [, high = 0, low = 0] = parts;
    return { address: new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]), form: "6to4" };
  }
  // ::a.b.c.d (first 96 bits zero), other than :: and ::1.
  if (parts.slice(0, 6).every((p) => p === 0) && range !== "unspecified" && range !== "loopback")
    return { address: tail(), form: "IPv4-compatible" };
  return null;
}

/**
 * Resolves the URL's host and checks every address. Names the address to connect to, or why the
 * attempt must not be made (`blocked_destination: …`, or `network_error: …` when the name does not
 * resolve).
 */
export async function checkDestination(
  url: URL,
  resolve: Resolver,
  allowLoopback: boolean,
): Promise<Destination> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) {
    const reason = blockedAddressReason(host, allowLoopback);
    return reason === null
      ? { ok: true, address: host, family: isIP(host) === 6 ? 6 : 4 }
      : { ok: false, error: `blocked_destination: ${host} is ${article(reason)} address`, address: host };
  }
  const nameReason = internalNameReason(host, allowLoopback);
  if (nameReason !== null)
    return { ok: false, error: `blocked_destination: ${host} is ${nameReason}`, address: null };
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      ok: false,
      error: `network_error: ${host} could not be resolved${typeof code === "string" ? ` (${code})` : ""}`,
      address: null,
    };
  }
  const first = addresses[0];
  if (!first) return { ok: false, error: `network_error: ${host} has no addresses`, address: null };
  for (const candidate of addresses) {
    const reason = blockedAddressReason(candidate.address, allowLoopback);
    if (reason !== null)
      return {
        ok: false,
        error: `blocked_destination: ${host} resolves to ${candidate.address}, ${article(reason)} address`,
        address: candidate.address,
      };
  }
  return { ok: true, address: first.address, family: first.family };
}

/**
 * Where a redirect would have gone, judged without following it or resolving anything: a
 * `Location` naming a blocked address or an internal name is reported as `blocked_destination`.
 */
export function blockedRedirectReason(location: string, base: URL, allowLoopback: boolean): string | null {
  let target: URL;
  try {
    target = new URL(location, base);
  } catch {
    return null;
  }
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const reason = isIP(host)
    ? blockedAddressReason(host, allowLoopback)
    : internalNameReason(host, allowLoopback);
  return reason === null ? null : `blocked_destination: redirect to ${host} (${reason}) not followed`;
}

function article(label: string): string {
  return /^[aeiou]/i.test(label) ? `an ${label}` : `a ${label}`;
}
