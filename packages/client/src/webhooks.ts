import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Verifying a webhook the service sent (Standard Webhooks, as `src/webhooks/signer.ts` signs): the
 * `webhook-signature` header holds one or more `v1,<base64 HMAC-SHA256>` signatures (two while a
 * secret rotates), over `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the base64 part
 * of the endpoint's `whsec_` secret; the timestamp must be within `toleranceSeconds` of now.
 */
export interface WebhookEvent<Data = Record<string, unknown>> {
  /** `evt_…`, also the `webhook-id` header: deduplicate on it. */
  id: string;
  type: string;
  timestamp: string;
  projectId: string;
  data: Data;
}

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

export interface VerifyOptions {
  /** Accepted distance between the timestamp and now (default 300 s, as the scheme advises). */
  toleranceSeconds?: number;
  /** Now in milliseconds (default `Date.now()`). */
  now?: () => number;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? headers[Object.keys(headers).find((k) => k.toLowerCase() === name) ?? ""];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a delivery's signature and timestamp and returns its event; throws
 * {@link WebhookVerificationError} otherwise. `payload` must be the raw body as received (not
 * re-serialised JSON). `secret` may be a list (the new and the previous one during a rotation).
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  payload: string | Uint8Array,
  headers: HeaderBag,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): WebhookEvent<Data> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook headers");
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) {
    throw new WebhookVerificationError("invalid webhook-timestamp");
  }
  const nowSeconds = Math.floor((options.now?.() ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (seconds < nowSeconds - tolerance) throw new WebhookVerificationError("webhook timestamp too old");
  if (seconds > nowSeconds + tolerance) throw new WebhookVerificationError("webhook timestamp in the future");

  const body = typeof payload === "string" ? Buffer.from(payload, "utf8") : Buffer.from(payload);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, "utf8"), body]);
  const given = signatures
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "base64"));
  const secrets = typeof secret === "string" ? [secret] : secret;
  const matches = secrets.some((s) => {
    const expected = createHmac("sha256", keyOf(s)).update(signed).digest();
    return given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
  });
  if (!matches) throw new WebhookVerificationError("no matching webhook signature");
  try {
    return JSON.parse(body.toString("utf8")) as WebhookEvent<Data>;
  } catch (error) {
    throw new WebhookVerificationError("webhook body is not JSON", { cause: error });
  }
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
}
