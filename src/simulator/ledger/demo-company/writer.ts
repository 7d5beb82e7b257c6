/**
 * Runs the demo company's requests through the simulated application's own request processor, in
 * message sets of a bounded size, as an integration would send them: every request must succeed
 * (a refusal is a bug in the generator, and throws). The IDs the application gives new records are
 * kept under the generator's keys, for the requests that name them later (payments applied to
 * invoices, deposits of payments).
 */
import { createHash, type Hash } from "node:crypto";
import { firstRefusedElement } from "../../../ledger/xml/availability.ts";
import { parseDocument } from "../../../ledger/xml/parse.ts";
import { ledgerSchema } from "../../../ledger/xml/schema.ts";
import { messageProblem } from "../../../ledger/xml/validate-tree.ts";
import { attr, childText, node, renderDocument, type XmlElement } from "../../../ledger/xml/tree.ts";
import type { CompanyFile } from "../company-file.ts";
import type { HostInfo } from "../hcp.ts";
import { processDocument } from "../processor.ts";
import { validateRequest } from "../request-catalogue.ts";
import { slotNamed } from "../objects.ts";
import { refTarget } from "../refs.ts";
import { addRq, otherRq, type RefResolver, type Spec } from "./messages.ts";

/** Requests per message set: large enough to be quick, small enough to keep each document modest. */
const MESSAGE_SET_REQUESTS = 400;

/** The message version the demo's requests are written for (every simulated application speaks it). */
const MESSAGE_VERSION = "13.0";

interface Pending {
  readonly rq: XmlElement;
  readonly key: string | undefined;
  /** The object an Add creates. */
  readonly object?: string;
}

export class DemoWriter {
  private pending: Pending[] = [];
  private readonly ids = new Map<string, string>();
  /** ListIDs of list objects by `<object>|<full name in lower case>`. */
  private readonly listIds = new Map<string, string>();
  private readonly digest: Hash = createHash("sha256");
  /** Message sets sent so far. */
  documents = 0;
  /** Requests sent so far. */
  requests = 0;

  constructor(
    private readonly file: CompanyFile,
    private readonly host: HostInfo,
  ) {}

  /**
   * Queues the Add of a list object; `key` keeps its ListID for {@link DemoWriter.id}. Its name is
   * remembered too: later references to it (by FullName in the generator) are sent by ListID.
   */
  list(object: string, spec: Spec, key?: string): void {
    const ret = `${object}Ret`;
    const names = ["FullName", "Name"].filter((n) => slotNamed(ret, n) !== undefined);
    this.pending.push({ rq: addRq(object, spec, ["ListID", ...names], this.resolver(object)), key, object });
  }

  /** Queues the Add of a transaction; `key` keeps its TxnID for {@link DemoWriter.id}. */
  txn(object: string, spec: Spec, key?: string): void {
    this.pending.push({ rq: addRq(object, spec, ["TxnID"], this.resolver(object)), key, object });
  }

  /** References of `owner`'s records to list objects sent earlier: by ListID when exactly one fits. */
  private resolver(owner: string): RefResolver {
    return (refElement, fullName) => {
      const { objects } = refTarget(refElement, owner);
      const name = fullName.toLowerCase();
      let found: string | undefined;
      for (const object of objects) {
        const id = this.listIds.get(`${object}|${name}`);
        if (id === undefined) continue;
        if (found !== undefined) return undefined;
        found = id;
      }
      return found;
    };
  }

  /** Queues any other request (a delete, a void, a custom field value). */
  other(name: string, spec: Spec): void {
    this.pending.push({ rq: otherRq(name, spec, this.resolver(name)), key: undefined });
  }

  /** The ID the application gave the record queued under `key` (sent by an earlier {@link flush}). */
  id(key: string): string {
    const id = this.ids.get(key);
    if (id === undefined) throw new Error(`demo company: no record ${key} (not flushed yet?)`);
    return id;
  }

  /** Sends every queued request, in order; throws at the first one the application refuses. */
  flush(): void {
    const queued = this.pending;
    this.pending = [];
    for (let start = 0; start < queued.length; start += MESSAGE_SET_REQUESTS) {
      this.send(queued.slice(start, start + MESSAGE_SET_REQUESTS));
    }
  }

  /** A SHA-256 of every document sent so far (what a determinism check compares). */
  documentsDigest(): string {
    return this.digest.copy().digest("hex");
  }

  private send(batch: readonly Pending[]): void {
    const body = renderDocument(
      node("QBXML", [
        node(
          "QBXMLMsgsRq",
          batch.map((p) => p.rq),
          [["onError", "stopOnError"]],
        ),
      ]),
    ).replace(/^<\?xml[^>]*>\n/, "");
    const xml = `<?xml version="1.0"?><?qbxml version="${MESSAGE_VERSION}"?>${body}`;
    this.digest.update(xml);
    this.documents += 1;
    const result = processDocument(xml, {
      file: this.file,
      host: this.host,
      iterators: new Map(),
      newGuid: () => "{00000000-0000-0000-0000-000000000000}",
    });
    if (!result.ok) {
      const reader = { xmlVersion: MESSAGE_VERSION, country: this.host.country };
      const wrong = batch.find((p) => validateRequest(p.rq, reader) === undefined);
      const detail =
        wrong === undefined
          ? ""
          : `: ${messageProblem(ledgerSchema(), wrong.rq) ?? JSON.stringify(firstRefusedElement([wrong.rq], reader))}\n${renderDocument(wrong.rq)}`;
      throw new Error(`demo company: a message set was refused (${result.message})${detail}`);
    }
    const responses = parseDocument(result.response)?.root.children[0]?.children ?? [];
    batch.forEach((pending, index) => {
      const rs = responses[index];
      const status = rs === undefined ? undefined : attr(rs, "statusCode");
      if (rs === undefined || status !== "0") {
        const message = rs === undefined ? "no answer" : `${status}: ${attr(rs, "statusMessage") ?? ""}`;
        throw new Error(
          `demo company: ${pending.rq.name} failed (${message}):\n${renderDocument(pending.rq)}`,
        );
      }
      const ret = rs.children[0];
      const listId = ret === undefined ? undefined : childText(ret, "ListID");
      const id = ret === undefined ? undefined : (childText(ret, "TxnID") ?? listId);
      // A list object's name, for later references to it by ListID.
      const name = ret === undefined ? undefined : (childText(ret, "FullName") ?? childText(ret, "Name"));
      if (pending.object !== undefined && listId !== undefined && name !== undefined)
        this.listIds.set(`${pending.object}|${name.toLowerCase()}`, listId);
      if (pending.key === undefined) return;
      if (id === undefined) throw new Error(`demo company: ${pending.rq.name} answered no ID`);
      this.ids.set(pending.key, id);
    });
    this.requests += batch.length;
  }
}
