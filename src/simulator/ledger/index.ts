/**
 * The simulated accounting application (company files + request processor) used behind the
 * simulated Web Connector.
 */
export {
  SIMULATED_COUNTRIES,
  SIMULATED_XML_VERSIONS,
  SimulatedLedgerApplication,
  type SimulatedCountry,
  type SimulatedLedgerOptions,
  type SimulatedXmlVersion,
} from "./application.ts";
export {
  CompanyFile,
  type CompanyDataExt,
  type CompanyFileOptions,
  type LedgerClock,
} from "./company-file.ts";
export type { LedgerFault } from "./faults.ts";
export type { LedgerLine, LedgerRecord } from "./records.ts";
export { LedgerSession } from "./session.ts";
export { PersistedApplication, type CompanyFileStore } from "./persisted-application.ts";
export type { CompanyFileSnapshot } from "./snapshot.ts";
export {
  DEMO_COMPANY_SIZES,
  demoInvoiceCount,
  seedDemoCompany,
  type DemoCompanySize,
} from "./demo-company/demo-company.ts";
