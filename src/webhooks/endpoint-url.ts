import { isIP } from "node:net";
import { ServiceError } from "../errors/service-error.ts";

/**
 * The rules for an endpoint URL (spec: webhook endpoint update, `url`): HTTPS, a public DNS name,
 * the default port, no IP addresses, no internal names, up to 2048 characters. Checked when an
 * endpoint is created or its URL changed; the destination guard checks the resolved addresses again
 * at every attempt.
 *
 * Internal names: `localhost` and `*.localhost`, single-label names, and the suffixes below
 * (mDNS, reverse DNS, home networks and common private zones, cloud-internal names such as
 * `metadata.google.internal`). Loopback receivers (`localhost`, `127.0.0.1`, `[::1]`, over http or
 * https, any port) are accepted only when `allowLoopback` is set (WEBHOOK_ALLOW_LOOPBACK=on).
 */
export const URL_LENGTH_MAX = 2048;

const INTERNAL_SUFFIXES = [
  "localhost",
  "local",
  "internal",
  "intranet",
  "private",
  "corp",
  "home",
  "lan",
  "localdomain",
  "home.arpa",
  "arpa",
  "test",
  "invalid",
  "example",
  "onion",
];

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** A DNS label: letters, digits and inner hyphens, 1 to 63 characters. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Why `host` (no brackets, lower case) is not a public DNS name, or null when it may be one. */
export function internalNameReason(host: string, allowLoopback = false): string | null {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (allowLoopback && name === "localhost") return null;
  const labels = name.split(".");
  if (labels.length < 2) return "a single-label (internal) host name";
  for (const suffix of INTERNAL_SUFFIXES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) return `an internal host name (.${suffix})`;
  }
  if (!labels.every((label) => LABEL.test(label))) return "not a valid DNS name";
  const tld = labels.at(-1) ?? "";
  if (!/^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(tld)) return "not under a public top-level domain";
  return null;
}

function invalid(message: string): ServiceError {
  return new ServiceError("INVALID_PARAMETER", { param: "url", message });
}

/** Checks an endpoint URL and returns it normalised (WHATWG serialisation). */
export function checkEndpointUrl(value: string, allowLoopback: boolean): string {
  if (value.length > URL_LENGTH_MAX) {
    throw new ServiceError("STRING_TOO_LONG", {
      param: "url",
      message: `\`url\` must be at most ${URL_LENGTH_MAX} characters.`,
    });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid("`url` must be an absolute https URL.");
  }
  if (url.username !== "" || url.password !== "")
    throw invalid("`url` must not contain credentials; authenticate deliveries with the signature.");
  if (allowLoopback && LOOPBACK_HOSTS.has(url.hostname) && ["http:", "https:"].includes(url.protocol))
    return url.toString();
  if (url.protocol !== "https:") throw invalid("`url` must use https.");
  if (url.port !== "") throw invalid("`url` must use the default https port (443).");
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) throw invalid("`url` must name a public DNS host, not an IP address.");
  const reason = internalNameReason(host);
  if (reason !== null) throw invalid(`\`url\` must name a public DNS host; \`${host}\` is ${reason}.`);
  if (url.toString().length > URL_LENGTH_MAX) {
    throw new ServiceError("STRING_TOO_LONG", {
      param: "url",
      message: `\`url\` must be at most ${URL_LENGTH_MAX} characters once normalised.`,
    });
  }
  return url.toString();
}
