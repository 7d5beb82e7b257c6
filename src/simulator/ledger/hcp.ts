/**
 * Host, Company and Preferences query responses, both for the connector's first-call "HCP" document
 * and for HostQueryRq / CompanyQueryRq / PreferencesQueryRq sent in a message set. Shape follows
 * shared/reference/qbxml-samples/11_hcp_host_company_preferences_rs.xml (values are ours).
 */
import type { CompanyFile } from "./company-file.ts";
import { STATUS_OK } from "./status.ts";
import { leaf, node, renderDocument, type XmlElement } from "../../ledger/xml/tree.ts";

/** What the host reports about itself. */
export interface HostInfo {
  readonly productName: string;
  readonly majorVersion: number;
  readonly country: string;
  /** Highest supported message version. */
  readonly xmlVersion: { readonly major: number; readonly minor: number };
  /**
   * Whether the administrator let the integrated application see personal data (card numbers,
   * social security numbers); when not, the application leaves them out of its answers.
   * Reported as `CurrentAppAccessRights/IsPersonalDataAccessAllowed`; allowed when absent.
   */
  readonly personalDataAccessAllowed?: boolean;
}

const VERSION_HISTORY = [
  "1.0",
  "1.1",
  "2.0",
  "2.1",
  "3.0",
  "4.0",
  "4.1",
  "5.0",
  "6.0",
  "7.0",
  "8.0",
  "9.0",
  "10.0",
  "11.0",
  "12.0",
  "13.0",
  "14.0",
  "15.0",
  "16.0",
];

/** `<HostRet>`. */
export function hostRet(host: HostInfo): XmlElement {
  const highest = host.xmlVersion.major + host.xmlVersion.minor / 10;
  const versions = VERSION_HISTORY.filter((v) => Number(v) <= highest);
  return node("HostRet", [
    leaf("ProductName", host.productName),
    leaf("MajorVersion", String(host.majorVersion)),
    leaf("MinorVersion", "0"),
    leaf("Country", host.country),
    ...versions.map((v) => leaf("SupportedQBXMLVersion", v)),
    leaf("IsAutomaticLogin", "false"),
    leaf("QBFileMode", "SingleUser"),
  ]);
}

/** `<CompanyRet>` with DataExtRet rows for the requested owners' private data extensions. */
export function companyRet(file: CompanyFile, ownerIds: readonly string[]): XmlElement {
  const owners = ownerIds.map((o) => o.toLowerCase());
  const dataExts = file.companyDataExts
    .filter((d) => owners.includes(d.ownerId.toLowerCase()))
    .map((d) =>
      node("DataExtRet", [
        leaf("OwnerID", d.ownerId),
        leaf("DataExtName", d.name),
        leaf("DataExtType", "STR255TYPE"),
        leaf("DataExtValue", d.value),
      ]),
    );
  return node("CompanyRet", [
    leaf("IsSampleCompany", "false"),
    leaf("CompanyName", file.companyName),
    leaf("LegalCompanyName", file.companyName),
    node("Address", [
      leaf("Addr1", "100 Main Street"),
      leaf("City", "Springfield"),
      leaf("State", "IL"),
      leaf("PostalCode", "62701"),
      leaf("Country", "US"),
    ]),
    node("AddressBlock", [leaf("Addr1", "100 Main Street"), leaf("Addr2", "Springfield, IL 62701")]),
    node("LegalAddress", [
      leaf("Addr1", "100 Main Street"),
      leaf("City", "Springfield"),
      leaf("State", "IL"),
      leaf("PostalCode", "62701"),
      leaf("Country", "US"),
    ]),
    leaf("FirstMonthFiscalYear", "January"),
    leaf("FirstMonthIncomeTaxYear", "January"),
    ...dataExts,
  ]);
}

/** A minimal `<PreferencesRet>`. */
export function preferencesRet(host: HostInfo): XmlElement {
  return node("PreferencesRet", [
    node("AccountingPreferences", [
      leaf("IsUsingAccountNumbers", "false"),
      leaf("IsRequiringAccounts", "true"),
      leaf("IsUsingClassTracking", "false"),
      leaf("IsUsingAuditTrail", "true"),
      leaf("IsAssigningJournalEntryNumbers", "true"),
    ]),
    node("MultiCurrencyPreferences", [leaf("IsMultiCurrencyOn", "false")]),
    node("PurchasesAndVendorsPreferences", [
      leaf("IsUsingInventory", "false"),
      leaf("DaysBillsAreDue", "10"),
      leaf("IsAutomaticallyUsingDiscounts", "false"),
    ]),
    node("CurrentAppAccessRights", [
      leaf("IsAutomaticLoginAllowed", "false"),
      leaf("IsPersonalDataAccessAllowed", String(host.personalDataAccessAllowed ?? true)),
    ]),
  ]);
}

function statusAttrs(requestId: string): Array<readonly [string, string]> {
  return [
    ["requestID", requestId],
    ["statusCode", String(STATUS_OK.code)],
    ["statusSeverity", STATUS_OK.severity],
    ["statusMessage", STATUS_OK.message],
  ];
}

/** The `strHCPResponse` document: HostQueryRs, CompanyQueryRs, PreferencesQueryRs (requestIDs 0–2). */
export function hostCompanyPreferencesDocument(host: HostInfo, file: CompanyFile, ownerId: string): string {
  return renderDocument(
    node("QBXML", [
      node("QBXMLMsgsRs", [
        node("HostQueryRs", [hostRet(host)], statusAttrs("0")),
        node("CompanyQueryRs", [companyRet(file, [ownerId])], statusAttrs("1")),
        node("PreferencesQueryRs", [preferencesRet(host)], statusAttrs("2")),
      ]),
    ]),
  );
}
