/**
 * The README's quick start, compiled by `npm run typecheck` (never run): if the generated types or
 * the client change shape, the example in the README fails to compile here first.
 */
import { LedgerBridge, LedgerBridgeError } from "../src/index.ts";
export async function snippet(): Promise<void> {
  const client = new LedgerBridge({
    apiKey: "sk_live_…",
    baseUrl: "http://localhost:8080",
    endUserId: "eu_…",
  });
  const invoice = await client.ledger.invoices.create({
    customerId: "80000001-1234567890",
    lines: [{ itemId: "…", amount: "10.00" }],
  });
  for await (const customer of client.ledger.customers.list({ limit: 50 })) console.log(customer.name);
  const report = await client.ledger.reports.aging({ reportType: "ap_aging_detail" }, { async: true });
  await client.ledger.invoices
    .retrieve("0-0")
    .catch((e) => e instanceof LedgerBridgeError && console.log(e.code));
  const eu = await client.endUsers.retrieve("eu_x");
  const page = await client.requests.list();
  console.log(invoice.id, report, eu, page);
}
