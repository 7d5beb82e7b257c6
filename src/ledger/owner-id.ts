/**
 * The service's own private owner of custom fields (data extensions): it marks the company file a
 * connection belongs to (tenancy/auth-sessions.ts, connector/company-file.ts). Callers may not read or
 * write fields of this owner (spec, Custom field: "The service's own private marker owner is refused").
 */
export const SERVICE_OWNER_ID = "{6F1C2A4E-7B0D-4C59-9D3E-1A2B3C4D5E6F}";
