/**
 * Status codes and the texts the application writes into `statusMessage`. Where the real text names
 * the application, ours says "Ledger" (see the naming rule in the project brief).
 */

/** Severity attribute of a response. */
export type StatusSeverity = "Info" | "Warn" | "Error";

/** A response status. */
export interface Status {
  readonly code: number;
  readonly severity: StatusSeverity;
  readonly message: string;
}

/** 0 — success. */
export const STATUS_OK: Status = { code: 0, severity: "Info", message: "Status OK" };

/** 1 — a query matched nothing. */
export const STATUS_NO_MATCH: Status = {
  code: 1,
  severity: "Info",
  message: "A query request did not find a matching object in the ledger",
};

/** 500 — some of the requested names were not found (the found ones are returned). */
export function statusNotFullyCompleted(missing: string): Status {
  return {
    code: 500,
    severity: "Warn",
    message: `The query request has not been fully completed. There was a required element ("${missing}") that could not be found in the ledger.`,
  };
}

/** 3100 — duplicate list name. */
export function statusNameInUse(name: string): Status {
  return {
    code: 3100,
    severity: "Error",
    message: `The name "${name}" of the list element is already in use.`,
  };
}

/** 3120 — the object named by ID does not exist. */
export function statusObjectNotFound(id: string): Status {
  return {
    code: 3120,
    severity: "Error",
    message: `Object "${id}" specified in the request cannot be found.  Ledger error message: Invalid argument.  The specified record does not exist in the list.`,
  };
}

/** 3140 — a reference to a record that does not exist. */
export function statusInvalidReference(
  targetKind: string,
  value: string,
  object: string,
  inLine: boolean,
): Status {
  return {
    code: 3140,
    severity: "Error",
    message: `There is an invalid reference to Ledger ${targetKind} "${value}" in the ${object}${inLine ? " line" : ""}.  Ledger error message: Invalid argument.  The specified record does not exist in the list.`,
  };
}

/** 3150 — a required element is missing. */
export function statusMissingElement(name: string): Status {
  return { code: 3150, severity: "Error", message: `There is a missing element: "${name}".` };
}

/** 3200 — stale EditSequence (the response still carries the current Ret). */
export function statusStaleEditSequence(editSequence: string): Status {
  return {
    code: 3200,
    severity: "Error",
    // The trailing space is in the real text (sample 06).
    message: `The provided edit sequence "${editSequence}" is out-of-date. `,
  };
}

/** 3210 — a field has a value the application refuses. */
export function statusInvalidValue(field: string, value: string, detail: string): Status {
  return {
    code: 3210,
    severity: "Error",
    message: `The "${field}" field has an invalid value "${value}".  Ledger error message: ${detail}`,
  };
}

/** 3391 — unknown or expired iterator. */
export function statusInvalidIterator(iteratorId: string): Status {
  return { code: 3391, severity: "Error", message: `The iteratorID "${iteratorId}" is not valid.` };
}

/** 3170 — a list element that other records still reference cannot be deleted. */
export function statusInUse(fullName: string): Status {
  return {
    code: 3170,
    severity: "Error",
    message: `There was an error when deleting the list element "${fullName}".  Ledger error message: The list element is in use and cannot be deleted.`,
  };
}

/** 3250 — a request the simulated application does not implement (reports, payroll…). */
export function statusNotAvailable(request: string): Status {
  return {
    code: 3250,
    severity: "Error",
    message: `This feature is not enabled or not available in this version of Ledger (${request}).`,
  };
}

/** 3260 — the company file user the application logs in as may not do this. */
export const STATUS_INSUFFICIENT_PERMISSION: Status = {
  code: 3260,
  severity: "Error",
  message: "Insufficient permission level to perform this action.",
};
