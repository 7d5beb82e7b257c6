import { z } from "zod";
import { serviceIssue } from "../errors/from-zod.ts";
import { PUBLISHABLE_KEY_PATTERN } from "../tenancy/api-keys.ts";

/**
 * Request schemas of the platform endpoints. Field rules follow the spec (limits table) and
 * architecture §5; strict objects turn unknown fields into UNKNOWN_PARAMETER.
 */
const text = (max: number) =>
  z.string().check((ctx) => {
    if (ctx.value.length === 0)
      ctx.issues.push({ ...serviceIssue("INVALID_PARAMETER", "Must not be empty."), input: ctx.value });
    else if (ctx.value.length > max)
      ctx.issues.push({
        ...serviceIssue("STRING_TOO_LONG", `Must be at most ${max} characters.`),
        input: ctx.value,
      });
  });

const email = z.email().max(320);

/** An integer query parameter from `min` to `max` (default `fallback`), every refusal saying so. */
export function integerParam(name: string, min: number, max: number, fallback: number) {
  const error = `\`${name}\` must be an integer from ${min} to ${max}.`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error }).default(fallback);
}

export const platformLimit = integerParam("limit", 1, 100, 50);

export const platformListQuery = z.strictObject({
  limit: platformLimit,
  cursor: z.string().min(1).max(200).optional(),
});

export const createEndUserBody = z.strictObject({
  companyName: text(255),
  sourceId: text(255),
  email: email.nullable().optional(),
});

export const updateEndUserBody = z.strictObject({
  companyName: text(255).optional(),
  sourceId: text(255).optional(),
  email: email.nullable().optional(),
});

export const resetCompanyFileBody = z.strictObject({
  mode: z.enum(["path", "identity"]).default("path"),
});

/** An end user's ID (`eu_` + 26 characters), as bodies and filters name it. */
export const endUserIdSchema = z
  .string()
  .regex(/^eu_[0-9a-hjkmnp-tv-z]{26}$/, { error: "Must be an end user ID (`eu_` + 26 characters)." });

export const createAuthSessionBody = z.strictObject({
  // Decision 0039: a string that is not a publishable key is an invalid key (401
  // PUBLISHABLE_KEY_INVALID, spec: Authentication 2), whatever its shape; only a missing or
  // non-string value is a malformed body (400).
  publishableKey: z
    .string()
    .check((ctx) => {
      if (!PUBLISHABLE_KEY_PATTERN.test(ctx.value))
        ctx.issues.push({
          ...serviceIssue(
            "PUBLISHABLE_KEY_INVALID",
            "Must be a current `pk_live_` or `pk_test_` key of this project.",
          ),
          input: ctx.value,
        });
    })
    .meta({ pattern: PUBLISHABLE_KEY_PATTERN.source }),
  endUserId: endUserIdSchema,
  linkExpiryMins: z
    .number({ error: "Must be an integer from 15 to 10080." })
    .int({ error: "Must be an integer from 15 to 10080." })
    .min(15, { error: "Must be an integer from 15 to 10080." })
    .max(10080, { error: "Must be an integer from 15 to 10080." })
    .default(30),
  redirectUrl: z
    .string()
    .check((ctx) => {
      if (ctx.value.length > 2000)
        ctx.issues.push({
          ...serviceIssue("STRING_TOO_LONG", "Must be at most 2000 characters."),
          input: ctx.value,
        });
    })
    .optional(),
});
