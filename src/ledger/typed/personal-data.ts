import { secretJsonFields } from "../resources/secret-fields.ts";
import { SECRET_ELEMENTS } from "../xml/redact.ts";

/**
 * Personal data an application may be refused (ledger-protocol §1.5 `PersonalDataPref`; the
 * company file report's `CurrentAppAccessRights/IsPersonalDataAccessAllowed`): card numbers and
 * social security numbers, the secret elements kept to their last four characters (decision 0032).
 * When the company file withholds them, the application leaves them out of its answers, so the
 * typed result has null there; the Request says so with a LEDGER_PERSONAL_DATA_WITHHELD warning at
 * each such path (spec: Request `warnings`: affected values are null, records are never dropped).
 */
export interface WithheldWarning {
  code: "LEDGER_PERSONAL_DATA_WITHHELD";
  statusCode: null;
  message: string;
  path: string;
}

/** Warnings for every null personal-data field of a typed result (nothing is changed). */
export function withheldPersonalData(result: unknown): WithheldWarning[] {
  const fields = secretJsonFields(SECRET_ELEMENTS);
  const warnings: WithheldWarning[] = [];
  const visit = (value: unknown, path: string, parentKey: string | null): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, `${path}[${index}]`, parentKey));
      return;
    }
    if (value === null || typeof value !== "object") return;
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const at = path === "" ? key : `${path}.${key}`;
      if (item !== null) {
        visit(item, at, key);
        continue;
      }
      const personal = fields
        .get(key)
        ?.some(
          (field) =>
            field.rule === "last4" &&
            (field.parents === null || (parentKey !== null && field.parents.has(parentKey))),
        );
      if (personal)
        warnings.push({
          code: "LEDGER_PERSONAL_DATA_WITHHELD",
          statusCode: null,
          message: `The company file does not let this application see personal data; \`${at}\` is null here.`,
          path: at,
        });
    }
  };
  visit(result, "", null);
  return warnings;
}
