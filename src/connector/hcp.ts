import { parseDocument } from "../ledger/xml/parse.ts";
import { child, childrenNamed, childText, type XmlElement } from "../ledger/xml/tree.ts";

/**
 * Reads the Host/Company/Preferences answer the connector sends on the first `sendRequestXML` of a
 * session (ledger-protocol §1.2): product, country, supported message versions, company name and
 * the `FileID` data extension stamped for our OwnerID.
 */
export interface CompanyFacts {
  product: string | null;
  country: string | null;
  supportedVersions: string[];
  companyName: string | null;
  fileId: string | null;
  /** The preferences' `CurrentAppAccessRights/IsPersonalDataAccessAllowed`; null when absent. */
  personalDataAllowed: boolean | null;
}

function text(value: string | undefined): string | null {
  return value !== undefined && value.trim() !== "" ? value.trim() : null;
}

export function readCompanyFacts(hcp: string, ownerId: string): CompanyFacts | null {
  if (!hcp.includes("<")) return null;
  const root = parseDocument(hcp)?.root;
  if (!root) return null;
  const msgs = root.name === "QBXML" ? child(root, "QBXMLMsgsRs") : undefined;
  const host = msgs && child(msgs, "HostQueryRs");
  const hostRet = host && child(host, "HostRet");
  const companyRs = msgs && child(msgs, "CompanyQueryRs");
  const company = companyRs && child(companyRs, "CompanyRet");
  const stamp = company
    ? childrenNamed(company, "DataExtRet").find(
        (d) =>
          text(childText(d, "DataExtName")) === "FileID" &&
          (text(childText(d, "OwnerID")) ?? "").toUpperCase() === ownerId.toUpperCase(),
      )
    : undefined;
  return {
    product: hostRet ? text(childText(hostRet, "ProductName")) : null,
    country: hostRet ? text(childText(hostRet, "Country")) : null,
    supportedVersions: hostRet
      ? childrenNamed(hostRet, "SupportedQBXMLVersion")
          .map((v) => text(v.text))
          .filter((v): v is string => v !== null)
      : [],
    companyName: company ? text(childText(company, "CompanyName")) : null,
    fileId: stamp ? text(childText(stamp, "DataExtValue")) : null,
    personalDataAllowed: personalDataAllowed(msgs),
  };
}

function personalDataAllowed(msgs: XmlElement | undefined): boolean | null {
  const preferences = msgs && child(msgs, "PreferencesQueryRs");
  const ret = preferences && child(preferences, "PreferencesRet");
  const rights = ret && child(ret, "CurrentAppAccessRights");
  const allowed = rights ? text(childText(rights, "IsPersonalDataAccessAllowed")) : null;
  return allowed === "true" ? true : allowed === "false" ? false : null;
}

const OUR_VERSIONS = ["16.0", "15.0", "14.0", "13.0"];

/** The highest message version both sides support; null when below our floor (13.0). */
export function negotiateVersion(
  processorMajor: string,
  processorMinor: string,
  supported: string[],
): string | null {
  const processor = Number(processorMajor) + Number(processorMinor || "0") / 10;
  for (const version of OUR_VERSIONS) {
    const value = Number(version);
    const hostOk = supported.length === 0 || supported.some((s) => Number(s) >= value);
    if ((Number.isNaN(processor) || processor === 0 || value <= processor) && hostOk) return version;
  }
  return null;
}
