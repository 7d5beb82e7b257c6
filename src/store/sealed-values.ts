import { sql } from "kysely";
import { SealedValueError, type Resealed, type Sealing } from "../platform/sealing.ts";
import type { Db } from "./database.ts";
import { requestSecretsPlace } from "./requests.ts";
import { signingSecretPlace } from "./webhooks.ts";
import { replayCopyPlace } from "./idempotency.ts";

/**
 * Every sealed column of the store, and the rotation's re-sealing (decision 0032,
 * `ledger-bridge secrets reseal`): each value sealed under an older key (`SECRETS_KEY_PREVIOUS`), or
 * stored in clear before a key was configured, is sealed again under the current `SECRETS_KEY`.
 * Rows are read in batches by primary key and written back with a compare-and-set on the old value,
 * so the running service's own writes (a rotation of a webhook secret, a claim clearing a Request's
 * secrets) always win and are never overwritten with an older value.
 *
 * | table.column | place (associated data) | context |
 * |---|---|---|
 * | `webhook_endpoints.secret`, `.previous_secret` | `webhook_endpoints.secret:<id>` | — |
 * | `requests.request_secrets` | `requests.request_secrets:<id>` | — |
 * | `idempotency_keys.response_box` | `idempotency_keys.response_box:<project>:<mode>:<key>` | the Idempotency-Key |
 *
 * Idempotency fingerprints are keyed, not sealed: they cannot be re-keyed (the body is not kept),
 * and simply expire with their key (7 days); the report says until when an older key still
 * matches some.
 */
export interface ColumnReport {
  /** Sealed again under the current key (clear values included). */
  resealed: number;
  /** Already sealed under the current key. */
  current: number;
  /** Not opened by any configured key (left as they are): see `unreadablePlaces`. */
  unreadable: number;
}

export interface ResealReport {
  /** The key everything is now sealed under. */
  keyId: string;
  webhookSigningSecrets: ColumnReport;
  requestSecrets: ColumnReport;
  idempotencyReplayCopies: ColumnReport;
  /**
   * Idempotency fingerprints keyed with an older key: they keep matching retries only while that
   * key stays in `SECRETS_KEY_PREVIOUS`; all are gone by `expireBy` (7 days after they were made).
   * Unkeyed ones (made without a key) match without one.
   */
  olderFingerprints: { count: number; expireBy: string | null };
  /** Where values no configured key opens are (at most 20), for the operator. */
  unreadablePlaces: string[];
}

const BATCH = 500;
const PLACES_SHOWN = 20;

function emptyColumn(): ColumnReport {
  return { resealed: 0, current: 0, unreadable: 0 };
}

/** Re-seals every sealed or clear value of the store under the current key. */
export async function resealStoredSecrets(db: Db, sealing: Sealing, now: Date): Promise<ResealReport> {
  const keyId = sealing.currentKeyId;
  if (keyId === null) throw new SealedValueError("SECRETS_KEY is not set: there is no key to seal with");
  const unreadablePlaces: string[] = [];
  // One value: its new form, or null (current, or unreadable: counted).
  const step = (report: ColumnReport, place: string, reseal: () => Resealed): string | null => {
    try {
      const result = reseal();
      if (result.outcome === "current") {
        report.current++;
        return null;
      }
      report.resealed++;
      return result.value;
    } catch (error) {
      if (!(error instanceof SealedValueError)) throw error;
      report.unreadable++;
      if (unreadablePlaces.length < PLACES_SHOWN) unreadablePlaces.push(place);
      return null;
    }
  };

  const webhookSigningSecrets = emptyColumn();
  for (let after = ""; ;) {
    const rows = await db
      .selectFrom("webhook_endpoints")
      .select(["id", "secret", "previous_secret"])
      .where("id", ">", after)
      .orderBy("id")
      .limit(BATCH)
      .execute();
    for (const row of rows) {
      const place = signingSecretPlace(row.id);
      const secret = step(webhookSigningSecrets, place, () => sealing.reseal(row.secret, place));
      const previous =
        row.previous_secret === null
          ? null
          : step(webhookSigningSecrets, place, () => sealing.reseal(row.previous_secret ?? "", place));
      if (secret === null && previous === null) continue;
      await db
        .updateTable("webhook_endpoints")
        .set({
          ...(secret === null ? {} : { secret }),
          ...(previous === null ? {} : { previous_secret: previous }),
        })
        .where("id", "=", row.id)
        .where("secret", "=", row.secret)
        .where(sql<boolean>`previous_secret is not distinct from ${row.previous_secret}`)
        .execute();
    }
    const last = rows.at(-1);
    if (!last || rows.length < BATCH) break;
    after = last.id;
  }

  const requestSecrets = emptyColumn();
  for (let after = ""; ;) {
    const rows = await db
      .selectFrom("requests")
      .select(["id", "request_secrets"])
      .where("request_secrets", "is not", null)
      .where("id", ">", after)
      .orderBy("id")
      .limit(BATCH)
      .execute();
    for (const row of rows) {
      const stored = row.request_secrets;
      if (stored === null) continue;
      const place = requestSecretsPlace(row.id);
      const value = step(requestSecrets, place, () => sealing.reseal(stored, place));
      if (value === null) continue;
      // The claim may have handed the Request over meanwhile (and cleared its secrets): then nothing.
      await db
        .updateTable("requests")
        .set({ request_secrets: value })
        .where("id", "=", row.id)
        .where("request_secrets", "=", stored)
        .execute();
    }
    const last = rows.at(-1);
    if (!last || rows.length < BATCH) break;
    after = last.id;
  }

  const idempotencyReplayCopies = emptyColumn();
  for (let after: { project: string; test: boolean; key: string } | null = null; ;) {
    let query = db
      .selectFrom("idempotency_keys")
      .select(["project_id", "is_test", "key", "response_box"])
      .where("response_box", "is not", null)
      .where("expires_at", ">", now);
    if (after)
      query = query.where(
        sql<boolean>`(project_id, is_test, key) > (${after.project}, ${after.test}, ${after.key})`,
      );
    const rows = await query.orderBy("project_id").orderBy("is_test").orderBy("key").limit(BATCH).execute();
    for (const row of rows) {
      const box = row.response_box;
      if (box === null) continue;
      const tenant = { projectId: row.project_id, mode: row.is_test ? ("test" as const) : ("live" as const) };
      const place = replayCopyPlace(tenant, row.key);
      const value = step(idempotencyReplayCopies, place, () =>
        sealing.resealWithContext(box, place, row.key),
      );
      if (value === null) continue;
      await db
        .updateTable("idempotency_keys")
        .set({ response_box: value })
        .where("project_id", "=", row.project_id)
        .where("is_test", "=", row.is_test)
        .where("key", "=", row.key)
        .where("response_box", "=", box)
        .execute();
    }
    const last = rows.at(-1);
    if (!last || rows.length < BATCH) break;
    after = { project: last.project_id, test: last.is_test, key: last.key };
  }

  const older = await db
    .selectFrom("idempotency_keys")
    .select((eb) => [eb.fn.countAll<string>().as("n"), eb.fn.max("expires_at").as("until")])
    .where("fingerprint", "like", "k1.%")
    .where("fingerprint", "not like", `k1.${keyId}.%`)
    .where("expires_at", ">", now)
    .executeTakeFirstOrThrow();
  const until = older.until as Date | string | null;
  return {
    keyId,
    webhookSigningSecrets,
    requestSecrets,
    idempotencyReplayCopies,
    olderFingerprints: {
      count: Number(older.n),
      expireBy: until === null ? null : new Date(until).toISOString(),
    },
    unreadablePlaces,
  };
}
