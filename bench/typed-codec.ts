/**
 * Typed operations' codec figures (issue 7 benchmarks): JSON → XML and XML → JSON for 1,000 invoices
 * with 5 lines each, through the same engines the routes use (input validation + writer; the
 * engine's one read of an answer, `readAnswer`, + the record reader). Printed by `npm run bench`,
 * never asserted.
 *
 * What a running service pays: measured in a process of its own (`codecInChildProcess`; in the
 * bench's own process the heap left by the sections before made every collection dearer, which
 * moved JSON → XML by 35 ms with no change to its code), after {@link WARMUP} rounds that are not
 * counted (the first rounds run before V8 has optimised the code: 2–3× slower), the median of
 * {@link RUNS}.
 */
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseFields } from "../src/ledger/fields.ts";
import { resourceByPath } from "../src/ledger/resources/definitions.ts";
import { createMessage, decodeRecords, firstResponse } from "../src/ledger/typed/actions.ts";
import { inputSchema } from "../src/ledger/typed/input.ts";
import { readAnswer } from "../src/ledger/xml/answer.ts";
import { renderElementText } from "../src/ledger/xml/tree.ts";

const INVOICES = 1000;
const LINES = 5;
const WARMUP = 3;
const RUNS = 9;

function invoiceBody(n: number): Record<string, unknown> {
  return {
    customerId: "80000001-1700000000",
    transactionDate: "2026-11-02",
    refNumber: `INV-${n}`,
    memo: `Invoice ${n} for services rendered`,
    billingAddress: { line1: "1 Main Street", city: "Springfield", postalCode: "12345" },
    lines: Array.from({ length: LINES }, (_, i) => ({
      itemId: "80000002-1700000000",
      description: `Line ${i + 1} of invoice ${n}`,
      quantity: i + 1,
      rate: "12.50000",
    })),
  };
}

export function invoiceRet(n: number): string {
  const lines = Array.from(
    { length: LINES },
    (_, i) =>
      `<InvoiceLineRet><TxnLineID>${(n * 10 + i).toString(16).toUpperCase()}-1700000000</TxnLineID><ItemRef><ListID>80000002-1700000000</ListID><FullName>Consulting</FullName></ItemRef><Desc>Line ${i + 1} of invoice ${n}</Desc><Quantity>${i + 1}</Quantity><Rate>12.50</Rate><Amount>${((i + 1) * 12.5).toFixed(2)}</Amount><SalesTaxCodeRef><ListID>80000003-1700000000</ListID><FullName>Non</FullName></SalesTaxCodeRef></InvoiceLineRet>`,
  ).join("");
  return `<InvoiceRet><TxnID>${n.toString(16).toUpperCase()}-1700000000</TxnID><TimeCreated>2026-11-02T10:00:00-05:00</TimeCreated><TimeModified>2026-11-02T10:00:00-05:00</TimeModified><EditSequence>1700000000</EditSequence><TxnNumber>${n}</TxnNumber><CustomerRef><ListID>80000001-1700000000</ListID><FullName>Acme Corporation</FullName></CustomerRef><ARAccountRef><ListID>80000004-1700000000</ListID><FullName>Accounts Receivable</FullName></ARAccountRef><TxnDate>2026-11-02</TxnDate><RefNumber>INV-${n}</RefNumber><BillAddress><Addr1>1 Main Street</Addr1><City>Springfield</City><PostalCode>12345</PostalCode></BillAddress><IsPending>false</IsPending><DueDate>2026-12-02</DueDate><Subtotal>187.50</Subtotal><SalesTaxPercentage>0.00</SalesTaxPercentage><SalesTaxTotal>0.00</SalesTaxTotal><AppliedAmount>0.00</AppliedAmount><BalanceRemaining>187.50</BalanceRemaining><Memo>Invoice ${n} for services rendered</Memo><IsPaid>false</IsPaid><IsToBePrinted>true</IsToBePrinted><IsToBeEmailed>false</IsToBeEmailed>${lines}</InvoiceRet>`;
}

export interface CodecFigures {
  encodeMs: number;
  decodeMs: number;
  xmlBytes: number;
}

/** Median of RUNS timings (after WARMUP uncounted rounds) of each direction for the whole batch of 1,000 invoices. */
export function measureCodec(): CodecFigures {
  const invoices = resourceByPath("invoices");
  if (!invoices?.create) throw new Error("no invoices resource");
  const schema = inputSchema(invoices.create);
  const bodies = Array.from({ length: INVOICES }, (_, n) => invoiceBody(n + 1));
  const response = `<?xml version="1.0" ?>\n<QBXML><QBXMLMsgsRs><InvoiceQueryRs statusCode="0" statusSeverity="Info" statusMessage="Status OK">${Array.from({ length: INVOICES }, (_, n) => invoiceRet(n + 1)).join("")}</InvoiceQueryRs></QBXMLMsgsRs></QBXML>`;
  const encode: number[] = [];
  const decode: number[] = [];
  for (let run = 0; run < WARMUP + RUNS; run++) {
    let started = performance.now();
    for (const body of bodies) renderElementText(createMessage(invoices, parseFields(schema, body)));
    if (run >= WARMUP) encode.push(performance.now() - started);
    started = performance.now();
    const answer = readAnswer(response);
    const message = answer ? firstResponse(answer.root) : null;
    if (!message) throw new Error("unparsable benchmark document");
    const page = decodeRecords(invoices, message);
    if (page.data.length !== INVOICES || page.warnings.length > 0) throw new Error("decode lost records");
    if (run >= WARMUP) decode.push(performance.now() - started);
  }
  const median = (values: number[]): number =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  return { encodeMs: median(encode), decodeMs: median(decode), xmlBytes: response.length };
}

/** {@link measureCodec} in a fresh process (so that no other section's heap is in its figures). */
export function codecInChildProcess(): CodecFigures {
  const child = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--json"], {
    encoding: "utf8",
    timeout: 120_000,
  });
  if (child.status !== 0) throw new Error(`codec bench failed: ${child.stderr || child.error?.message}`);
  return JSON.parse(child.stdout.trim().split("\n").pop() ?? "") as CodecFigures;
}

if (process.argv[1]?.endsWith("typed-codec.ts")) {
  const figures = measureCodec();
  if (process.argv.includes("--json")) console.log(JSON.stringify(figures));
  else
    console.log(
      `JSON→XML 1,000 invoices × 5 lines: ${figures.encodeMs.toFixed(1)} ms; XML→JSON: ${figures.decodeMs.toFixed(1)} ms (${(figures.xmlBytes / 1e6).toFixed(2)} MB)`,
    );
}
