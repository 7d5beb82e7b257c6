import { XMLParser } from "fast-xml-parser";

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
}

const parser = new XMLParser({
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreAttributes: true,
  htmlEntities: true,
  isArray: (name) => name === "SupportedQBXMLVersion" || name === "DataExtRet",
});

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

export function readCompanyFacts(hcp: string, ownerId: string): CompanyFacts | null {
  if (!hcp.includes("<")) return null;
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(hcp) as Record<string, unknown>;
  } catch {
    return null;
  }
  const msgs = ((doc.QBXML as Record<string, unknown> | undefined)?.QBXMLMsgsRs ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const host = (msgs.HostQueryRs?.HostRet ?? {}) as Record<string, unknown>;
  const company = (msgs.CompanyQueryRs?.CompanyRet ?? {}) as Record<string, unknown>;
  const dataExts = (company.DataExtRet ?? []) as Record<string, unknown>[];
  const stamp = dataExts.find(
    (d) =>
      text(d.DataExtName) === "FileID" && (text(d.OwnerID) ?? "").toUpperCase() === ownerId.toUpperCase(),
  );
  return {
    product: text(host.ProductName),
    country: text(host.Country),
    supportedVersions: ((host.SupportedQBXMLVersion ?? []) as unknown[])
      .map(text)
      .filter((v): v is string => v !== null),
    companyName: text(company.CompanyName),
    fileId: stamp ? text(stamp.DataExtValue) : null,
  };
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
