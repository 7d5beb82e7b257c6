/**
 * The "sample" company: bank, receivable, payable, expense and two income accounts, two vendors, two
 * items, six customers (one of them a job), three invoices and a bill. Seeded through the request processor itself, so the
 * seed exercises the same code paths as real traffic.
 */
import type { CompanyFile } from "./company-file.ts";
import type { HostInfo } from "./hcp.ts";
import { processDocument } from "./processor.ts";

const SEED_REQUESTS = `
<AccountAddRq><AccountAdd><Name>Checking</Name><AccountType>Bank</AccountType><AccountNumber>1000</AccountNumber><OpenBalance>12500.00</OpenBalance><OpenBalanceDate>2026-01-01</OpenBalanceDate></AccountAdd></AccountAddRq>
<AccountAddRq><AccountAdd><Name>Accounts Receivable</Name><AccountType>AccountsReceivable</AccountType><AccountNumber>1200</AccountNumber></AccountAdd></AccountAddRq>
<AccountAddRq><AccountAdd><Name>Consulting Income</Name><AccountType>Income</AccountType><AccountNumber>4000</AccountNumber></AccountAdd></AccountAddRq>
<AccountAddRq><AccountAdd><Name>Product Sales</Name><AccountType>Income</AccountType><AccountNumber>4100</AccountNumber></AccountAdd></AccountAddRq>
<AccountAddRq><AccountAdd><Name>Accounts Payable</Name><AccountType>AccountsPayable</AccountType><AccountNumber>2000</AccountNumber></AccountAdd></AccountAddRq>
<AccountAddRq><AccountAdd><Name>Office Supplies</Name><AccountType>Expense</AccountType><AccountNumber>6100</AccountNumber></AccountAdd></AccountAddRq>
<VendorAddRq><VendorAdd><Name>Paper Supply Co</Name><CompanyName>Paper Supply Co</CompanyName><VendorAddress><Addr1>9 Mill Road</Addr1><City>Scranton</City><State>PA</State><PostalCode>18503</PostalCode></VendorAddress></VendorAdd></VendorAddRq>
<VendorAddRq><VendorAdd><Name>Cloud Hosting Ltd</Name><CompanyName>Cloud Hosting Ltd</CompanyName></VendorAdd></VendorAddRq>
<ItemServiceAddRq><ItemServiceAdd><Name>Consulting</Name><SalesOrPurchase><Desc>Consulting services</Desc><Price>150.00</Price><AccountRef><FullName>Consulting Income</FullName></AccountRef></SalesOrPurchase></ItemServiceAdd></ItemServiceAddRq>
<ItemNonInventoryAddRq><ItemNonInventoryAdd><Name>Widget</Name><SalesOrPurchase><Desc>Standard widget</Desc><Price>25.00</Price><AccountRef><FullName>Product Sales</FullName></AccountRef></SalesOrPurchase></ItemNonInventoryAdd></ItemNonInventoryAddRq>
<CustomerAddRq><CustomerAdd><Name>Acme Corporation</Name><CompanyName>Acme Corporation</CompanyName><BillAddress><Addr1>1 Acme Way</Addr1><City>Springfield</City><State>IL</State><PostalCode>62701</PostalCode></BillAddress><Phone>555-0100</Phone><Email>billing@acme.example</Email></CustomerAdd></CustomerAddRq>
<CustomerAddRq><CustomerAdd><Name>Website Redesign</Name><ParentRef><FullName>Acme Corporation</FullName></ParentRef></CustomerAdd></CustomerAddRq>
<CustomerAddRq><CustomerAdd><Name>Globex Inc</Name><CompanyName>Globex Inc</CompanyName><FirstName>Hank</FirstName><LastName>Scorpio</LastName></CustomerAdd></CustomerAddRq>
<CustomerAddRq><CustomerAdd><Name>Initech</Name><CompanyName>Initech</CompanyName><Email>ap@initech.example</Email></CustomerAdd></CustomerAddRq>
<CustomerAddRq><CustomerAdd><Name>Umbrella LLC</Name><CompanyName>Umbrella LLC</CompanyName></CustomerAdd></CustomerAddRq>
<CustomerAddRq><CustomerAdd><Name>Stark Industries</Name><CompanyName>Stark Industries</CompanyName><CreditLimit>5000</CreditLimit></CustomerAdd></CustomerAddRq>
<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Acme Corporation</FullName></CustomerRef><TxnDate>2026-01-05</TxnDate><InvoiceLineAdd><ItemRef><FullName>Consulting</FullName></ItemRef><Quantity>4</Quantity><Rate>150.00</Rate></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>
<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Acme Corporation:Website Redesign</FullName></CustomerRef><TxnDate>2026-01-08</TxnDate><InvoiceLineAdd><ItemRef><FullName>Consulting</FullName></ItemRef><Quantity>10</Quantity><Rate>150.00</Rate></InvoiceLineAdd><InvoiceLineAdd><ItemRef><FullName>Widget</FullName></ItemRef><Quantity>3</Quantity><Rate>25.00</Rate></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>
<InvoiceAddRq><InvoiceAdd><CustomerRef><FullName>Globex Inc</FullName></CustomerRef><TxnDate>2026-01-10</TxnDate><InvoiceLineAdd><ItemRef><FullName>Widget</FullName></ItemRef><Quantity>12</Quantity><Rate>25.00</Rate></InvoiceLineAdd></InvoiceAdd></InvoiceAddRq>
<BillAddRq><BillAdd><VendorRef><FullName>Paper Supply Co</FullName></VendorRef><TxnDate>2026-01-09</TxnDate><RefNumber>PS-1001</RefNumber><ExpenseLineAdd><AccountRef><FullName>Office Supplies</FullName></AccountRef><Amount>180.00</Amount><Memo>Paper and toner</Memo></ExpenseLineAdd></BillAdd></BillAddRq>
`;

/** Loads the sample records into `file`; throws if any seed request fails (a bug in the seed). */
export function seedSampleCompany(file: CompanyFile, host: HostInfo): void {
  const xml = `<?xml version="1.0"?><?qbxml version="13.0"?><QBXML><QBXMLMsgsRq onError="stopOnError">${SEED_REQUESTS}</QBXMLMsgsRq></QBXML>`;
  const result = processDocument(xml, {
    file,
    host,
    iterators: new Map(),
    newGuid: () => "{00000000-0000-0000-0000-000000000000}",
  });
  if (
    !result.ok ||
    !result.response.includes("</BillAddRs>\n</QBXMLMsgsRs>") ||
    /statusSeverity="(Error|Warn)"/.test(result.response)
  ) {
    throw new Error(`sample seed failed: ${result.ok ? result.response : result.message}`);
  }
}
