import type { FastifyReply, FastifyRequest } from "fastify";
import type { Deps } from "../deps.ts";
import { OUTCOMES, type Outcome } from "../errors/catalogue.ts";
import { ServiceError } from "../errors/service-error.ts";
import { serializeRequest } from "../requests/resource.ts";
import {
  errorFromStored,
  submit,
  syncCallerError,
  type Submission,
  type SubmitOutcome,
} from "../requests/submit.ts";
import { isStoreUnavailable } from "../store/unavailable.ts";
import { bindRequest } from "./request-id.ts";
import { answeredBy } from "./server-timing.ts";
import type { RouteResult } from "./route.ts";

/**
 * Shapes the answer of an application operation: 202 + Request + `Location` (async), the result
 * (sync success), the stored error (sync failure), or 504 when the caller's wait ends first.
 * `Svc-Request-Id` is the Request's ID; `Server-Timing` is cut from the row as it is now (decision 0047).
 */
export async function runApplicationOperation(
  deps: Deps,
  request: FastifyRequest,
  submission: Submission,
  render: (result: unknown, reply: FastifyReply) => RouteResult,
  reply: FastifyReply,
): Promise<RouteResult> {
  // A sync caller that hangs up before its answer did not get the result: its request's webhook
  // events go to every endpoint (spec: Events, "disconnect").
  const hungUp = new AbortController();
  if (!submission.options.async) {
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) hungUp.abort();
    });
  }
  const outcome: SubmitOutcome = await submit(deps, { ...submission, hungUp: hungUp.signal });
  const row = outcome.row;
  // The response is the Request's (the original one for a replay), errors included.
  bindRequest(request, reply, row.id);
  answeredBy(request, row);
  switch (outcome.kind) {
    case "accepted":
      return {
        status: 202,
        // Accepted means stored: a store that stops answering now leaves out only the lookups.
        body: await serializeRequest(deps, row).catch((error: unknown) => {
          if (!isStoreUnavailable(error)) throw error;
          return serializeRequest(deps, row, { lookups: false });
        }),
        headers: { Location: `${deps.config.publicUrl}/v1/requests/${row.id}` },
      };
    case "timeout_sent":
      // Decision 0041: the error's outcome is the Request's — `pending` for a write still running,
      // `not_applicable` for a read, which has no effect on the books to wait for.
      throw new ServiceError("LEDGER_REQUEST_TIMEOUT", {
        details: { requestId: row.id },
        ...(isOutcome(row.outcome) ? { outcome: row.outcome } : {}),
      });
    case "settled":
      if (row.status === "succeeded") return render(row.result, reply);
      if (row.status === "outcome_unknown") {
        // The stored error says what is unknown (a batch's `details.members`).
        const stored = (row.error as { code?: string } | null)?.code === "LEDGER_WRITE_OUTCOME_UNKNOWN";
        throw stored
          ? errorFromStored(row.error)
          : new ServiceError("LEDGER_WRITE_OUTCOME_UNKNOWN", { details: { requestId: row.id } });
      }
      throw syncCallerError(row);
  }
}

function isOutcome(value: string): value is Outcome {
  return (OUTCOMES as readonly string[]).includes(value);
}
