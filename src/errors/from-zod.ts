import type { z } from "zod";
import { isErrorCode, type ErrorCode } from "./catalogue.ts";
import { ServiceError } from "./service-error.ts";

/**
 * Field kinds raise custom Zod issues that carry a catalogue code in `params.serviceCode` and the
 * code's details in `params.details`. This maps the first issue of a failed parse to a ServiceError
 * whose `param` names the offending field (`prefix` is prepended, for example `requests[2].body`).
 */
export interface ServiceIssueParams {
  serviceCode: ErrorCode;
  details?: Record<string, unknown>;
}

export function serviceIssue(code: ErrorCode, message: string, details?: Record<string, unknown>) {
  return { code: "custom" as const, message, params: { serviceCode: code, ...(details ? { details } : {}) } };
}

export function formatParam(path: ReadonlyArray<PropertyKey>, prefix = ""): string | null {
  let out = prefix;
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out.length ? `.${String(segment)}` : String(segment);
  }
  return out.length ? out : null;
}

export function errorFromZod(error: z.ZodError, prefix = ""): ServiceError {
  const issue = error.issues[0];
  if (!issue) return new ServiceError("INVALID_PARAMETER", { param: prefix || null });
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    return new ServiceError("UNKNOWN_PARAMETER", {
      param: formatParam([...issue.path, key], prefix),
      message: `Unknown parameter \`${formatParam([...issue.path, key]) ?? key}\`.`,
    });
  }
  const param = formatParam(issue.path, prefix);
  if (issue.code === "custom") {
    const params = issue.params as Partial<ServiceIssueParams> | undefined;
    const code = params?.serviceCode;
    if (code && isErrorCode(code)) {
      return new ServiceError(code, {
        param,
        message: issue.message,
        ...(params.details ? { details: params.details } : {}),
      });
    }
  }
  // Spec (Conventions): null for a field that is not clearable is FIELD_NOT_CLEARABLE. A schema that
  // refuses null for a named field is exactly that; clearable fields accept null and never get here.
  if (issue.code === "invalid_type" && issue.input === null && typeof issue.path.at(-1) === "string") {
    return new ServiceError("FIELD_NOT_CLEARABLE", {
      param,
      message: `\`${param ?? ""}\` is not clearable: null is not accepted (omit the field instead).`,
    });
  }
  const label = param ?? "body";
  const message =
    issue.code === "invalid_type" && issue.input === undefined
      ? `Missing required parameter \`${label}\`.`
      : `Invalid value for \`${label}\`: ${issue.message}`;
  return new ServiceError("INVALID_PARAMETER", { param, message });
}
