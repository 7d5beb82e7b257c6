/**
 * The requests the simulated application understands: every request of the schema table, checked
 * against it (element names, order, occurrences, attributes, values). A request that fails the check,
 * or that uses an element newer than the message's version or one the application's edition lacks
 * (the availability table), rejects the whole message set (HRESULT 0x80040400). Valid requests are routed by their family: Add / Mod / Query of a stored object type,
 * delete, void, merge, custom fields, host / company / preferences.
 */
import { firstRefusedElement, type ConnectionCapabilities } from "../../ledger/xml/availability.ts";
import { messageProblem } from "../../ledger/xml/validate-tree.ts";
import { ledgerSchema } from "../../ledger/xml/schema.ts";
import { attr, child, childrenNamed, type XmlElement } from "../../ledger/xml/tree.ts";
import type { CompanyFile } from "./company-file.ts";
import { addDef, changeDataExt, delDef, modDef, queryDefs } from "./custom-fields.ts";
import { companyRet, hostRet, preferencesRet, type HostInfo } from "./hcp.ts";
import { deleteRecord, mergeRecords, voidRecord } from "./lifecycle-ops.ts";
import { objectType } from "./objects.ts";
import { queryRecords, type QueryContext } from "./query-ops.ts";
import { reportAnswer } from "./reports.ts";
import { STATUS_NO_MATCH, STATUS_OK, statusNotAvailable, type Status } from "./status.ts";
import { assembliesCanBuild } from "./views.ts";
import { addRecord, modRecord, type OpResult } from "./write-ops.ts";

/** Everything a request handler may use. */
export interface RequestContext extends QueryContext {
  readonly file: CompanyFile;
  readonly host: HostInfo;
  /**
   * The status a request is refused with before it runs (a feature turned off, a user who may not
   * write), by its element name; undefined lets it run.
   */
  readonly refuse?: (requestName: string) => Status | undefined;
}

type Handler = (rq: XmlElement, context: RequestContext) => OpResult;

function retElements(rq: XmlElement): string[] {
  return childrenNamed(rq, "IncludeRetElement").map((c) => c.text);
}

function body(rq: XmlElement, name: string): XmlElement {
  return child(rq, name) ?? rq;
}

const SPECIAL: Readonly<Record<string, Handler>> = {
  ListDelRq: (rq, ctx) => deleteRecord("list", rq, ctx.file),
  TxnDelRq: (rq, ctx) => deleteRecord("transaction", rq, ctx.file),
  TxnVoidRq: (rq, ctx) => voidRecord(rq, ctx.file),
  ListMergeRq: (rq, ctx) => mergeRecords(rq, ctx.file),
  DataExtDefAddRq: (rq, ctx) => addDef(body(rq, "DataExtDefAdd"), ctx.file),
  DataExtDefModRq: (rq, ctx) => modDef(body(rq, "DataExtDefMod"), ctx.file),
  DataExtDefDelRq: (rq, ctx) => delDef(rq, ctx.file),
  DataExtDefQueryRq: (rq, ctx) => queryDefs(rq, ctx.file),
  DataExtAddRq: (rq, ctx) => changeDataExt("add", body(rq, "DataExtAdd"), ctx.file),
  DataExtModRq: (rq, ctx) => changeDataExt("mod", body(rq, "DataExtMod"), ctx.file),
  DataExtDelRq: (rq, ctx) => changeDataExt("del", body(rq, "DataExtDel"), ctx.file),
  HostQueryRq: (_rq, ctx) => ({ status: STATUS_OK, body: [hostRet(ctx.host)] }),
  CompanyQueryRq: (rq, ctx) => ({
    status: STATUS_OK,
    body: [
      companyRet(
        ctx.file,
        childrenNamed(rq, "OwnerID").map((c) => c.text),
      ),
    ],
  }),
  PreferencesQueryRq: (_rq, ctx) => ({ status: STATUS_OK, body: [preferencesRet(ctx.host)] }),
  ItemAssembliesCanBuildQueryRq: (rq, ctx) => assembliesCanBuild(rq, ctx.file),
};

function handlerOf(name: string): Handler {
  const special = SPECIAL[name];
  if (special !== undefined) return special;
  const family = /^(\w+?)(Add|Mod|Query)Rq$/.exec(name);
  const object = family === null ? undefined : objectType(family[1] ?? "");
  if (object !== undefined && family?.[2] === "Add")
    return (rq, ctx) => addRecord(object, body(rq, `${object.name}Add`), ctx.file, retElements(rq));
  if (object !== undefined && family?.[2] === "Mod")
    return (rq, ctx) => modRecord(object, body(rq, `${object.name}Mod`), ctx.file, retElements(rq));
  if (name.endsWith("ReportQueryRq")) return (rq, ctx) => reportAnswer(rq, ctx.file);
  if (family?.[2] === "Query") {
    // Queries of things the simulator keeps none of (templates, payroll…) simply match nothing.
    return (rq, ctx) => queryRecords(rq, ctx.file, ctx) ?? { status: STATUS_NO_MATCH, body: [] };
  }
  return () => ({ status: statusNotAvailable(name), body: [] });
}

/** A validated request ready to run. */
export interface ValidRequest {
  readonly rq: XmlElement;
  readonly run: (context: RequestContext) => OpResult;
}

/**
 * Validates one request element of a message set for the application that reads it: the message's
 * version (its `<?qbxml version?>`) and the application's edition. An element newer than that
 * version, or one the edition lacks, is unknown to the application's parser, as any unknown element
 * is; undefined when the set must be rejected.
 */
export function validateRequest(rq: XmlElement, reader: ConnectionCapabilities): ValidRequest | undefined {
  const schema = ledgerSchema();
  if (!schema.requests.has(rq.name)) return undefined;
  if (messageProblem(schema, rq) !== null) return undefined;
  if (firstRefusedElement([rq], reader) !== null) return undefined;
  const iterator = attr(rq, "iterator");
  if ((iterator === "Continue" || iterator === "Stop") && attr(rq, "iteratorID") === undefined)
    return undefined;
  const handler = handlerOf(rq.name);
  return { rq, run: (context) => handler(rq, context) };
}
