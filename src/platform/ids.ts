import { typeid } from "typeid-js";

/**
 * Platform IDs: the spec's prefix + `_` + 26 lowercase Crockford base32 characters (TypeIDs, time
 * sortable). Each prefix has its own brand so the compiler keeps an `eu_` from going where a `req_`
 * is expected. Application record IDs are a different brand ({@link LedgerRecordId}).
 */
export const ID_PREFIXES = {
  endUser: "eu",
  authSession: "authsess",
  request: "req",
  project: "proj",
  connection: "conn",
  webhookEndpoint: "whe",
  webhookDelivery: "whd",
  event: "evt",
  changeFeedSubscription: "cfs",
  apiKey: "key",
  /** A row of a connection's status history (decision 0028). */
  statusChange: "csc",
  /** An HTTP exchange that is not a Request (`Svc-Request-Id` outside application operations). */
  call: "call",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];
export type PlatformId<P extends IdPrefix> = `${P}_${string}`;

export type EndUserId = PlatformId<"eu">;
export type AuthSessionId = PlatformId<"authsess">;
export type RequestId = PlatformId<"req">;
export type ProjectId = PlatformId<"proj">;
export type ConnectionId = PlatformId<"conn">;
export type ApiKeyId = PlatformId<"key">;

/** An ID assigned by the accounting application: 1 to 36 characters, opaque. */
export type LedgerRecordId = string & { readonly __brand: "ledger_record" };

const SUFFIX = /^[0-9a-hjkmnp-tv-z]{26}$/;

/** Creates a new time-sortable ID with the given kind's prefix. */
export function newId<K extends IdKind>(kind: K): PlatformId<(typeof ID_PREFIXES)[K]> {
  return typeid(ID_PREFIXES[kind]).toString() as PlatformId<(typeof ID_PREFIXES)[K]>;
}

/**
 * The ID of a service instance (a running process; requests/instances.ts). Internal: never shown in
 * the API, so it has no spec prefix of its own.
 */
export function newInstanceId(): string {
  return typeid("inst").toString();
}

/** True when `value` is a well-formed ID of the given kind. */
export function isId<K extends IdKind>(
  kind: K,
  value: unknown,
): value is PlatformId<(typeof ID_PREFIXES)[K]> {
  if (typeof value !== "string") return false;
  const prefix = `${ID_PREFIXES[kind]}_`;
  return value.startsWith(prefix) && SUFFIX.test(value.slice(prefix.length));
}
