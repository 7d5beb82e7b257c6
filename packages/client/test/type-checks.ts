/**
 * Compile-time checks of the generated namespaces, run by `npm run typecheck` (never executed):
 * each `@ts-expect-error` fails the type check if the line it marks ever compiles.
 */
import type { LedgerBridge } from "../src/index.ts";
import { LedgerBridgeError, type ErrorCode, type ItemOf, type ResultOf } from "../src/index.ts";

export async function typeChecks(client: LedgerBridge): Promise<void> {
  // Bodies are the document's: unknown fields and wrong types are refused.
  // @ts-expect-error -- not a field of an invoice
  await client.ledger.invoices.create({ customerId: "1", notAField: true });
  // @ts-expect-error -- customerId is required
  await client.ledger.invoices.create({ memo: "no customer" });
  // @ts-expect-error -- a quantity is a number
  await client.ledger.invoices.create({ customerId: "1", lines: [{ quantity: "two" }] });
  // Queries too, and required ones must be given.
  // @ts-expect-error -- `limit` is a number
  client.ledger.invoices.list({ limit: "3" });
  // @ts-expect-error -- deleting needs `confirm: "true"`
  await client.ledger.invoices.delete("1");
  await client.ledger.invoices.delete("1", { confirm: "true" });
  // @ts-expect-error -- retrieve takes the record's ID
  await client.ledger.invoices.retrieve();
  // Results are the document's types.
  const invoice: ResultOf<"ledger.invoices.retrieve"> = await client.ledger.invoices.retrieve("1");
  const item: ItemOf<"ledger.invoices.list"> = invoice;
  const objectType: "ledger_invoice" = item.objectType;
  // @ts-expect-error -- not a field of an invoice
  void invoice.notAField;
  // Error codes are the catalogue's.
  const code: ErrorCode = "LEDGER_OBJECT_NOT_FOUND";
  // @ts-expect-error -- not a code of the catalogue
  const wrong: ErrorCode = "NOT_A_CODE";
  const error = new LedgerBridgeError({ code, message: "m", httpStatus: 404 });
  void [objectType, wrong, error.code satisfies string];
}
