import { z } from "zod";
import { text, type AnyFieldKind } from "./fields.ts";

/**
 * The service's own private owner of custom fields (data extensions): it marks the company file a
 * connection belongs to (tenancy/auth-sessions.ts, connector/company-file.ts). Callers may not read or
 * write fields of this owner (spec, Custom field: "The service's own private marker owner is refused").
 */
export const SERVICE_OWNER_ID = "{6F1C2A4E-7B0D-4C59-9D3E-1A2B3C4D5E6F}";

/** What the application accepts as an owner: `0` (public) or a GUID in braces. */
const OWNER_FORMAT = /^(?:0|\{[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}\})$/;

const ownerSchema = z
  .string({ error: "Expected a string." })
  .min(1)
  .max(38)
  .regex(OWNER_FORMAT, { error: "An owner is `0` (a public field) or an application's GUID in braces." })
  .refine((value) => value.toUpperCase() !== SERVICE_OWNER_ID, {
    error: "This owner is reserved by the service.",
  })
  .meta({ description: "`0` (a public field) or the owning application's GUID in braces." });

/**
 * A custom field's owner in a body or a query (spec: "`ownerId`: '0' (public), or the GUID of the
 * owning application. Up to 38 characters"): checked before anything is queued, so the application's
 * schema never sees another form, and never the service's own marker owner.
 */
export const ownerIdKind: AnyFieldKind = {
  ...text({ max: 38, min: 1 }),
  schema: ownerSchema,
  jsonSchema() {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(ownerSchema, { io: "input" });
    return rest;
  },
  // A valid owner for samples and the simulator: the public one.
  fake: () => "0",
};
