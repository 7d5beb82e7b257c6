import { registerOperation } from "../requests/operations.ts";

/**
 * The two hand-written operations (architecture §5): passthrough and the health check. Typed
 * resources register theirs from the resource registry.
 */
export const PASSTHROUGH_OPERATION = "endUsers.passthrough";
export const HEALTH_CHECK_OPERATION = "ledger.healthCheck";

/** The health check's round trip: the smallest query every edition answers. */
export const HEALTH_CHECK_MESSAGES = `<CompanyQueryRq requestID="health-check"></CompanyQueryRq>`;

export function registerSpecialOperations(): void {
  registerOperation(PASSTHROUGH_OPERATION, {
    // The caller handles the application's statuses itself: a readable answer is a success.
    decode: ({ responseXml }) => ({ ok: true, result: { xml: responseXml }, warnings: [] }),
  });
  registerOperation(HEALTH_CHECK_OPERATION, {
    usesConnection: true,
    decode: ({ connection, request, nowMs }) => ({
      ok: true,
      result: {
        status: "ok",
        durationMs: nowMs - request.created_at.getTime(),
        ledger: {
          product: connection?.product ?? null,
          xmlVersion: request.xml_version ?? connection?.xml_version ?? null,
          companyName: connection?.company_name ?? null,
        },
      },
      warnings: [],
    }),
  });
}
