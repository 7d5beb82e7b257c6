/**
 * The request types the simulated application understands, derived from the record definitions,
 * with their content models and allowed attributes. A request outside this catalogue, or one that
 * does not match its model, rejects the whole message set (HRESULT 0x80040400).
 */
import { many, matchesModel, req, type Model } from "./content-model.ts";
import type { CompanyFile } from "./company-file.ts";
import { LEDGER_DEFINITIONS } from "./definitions/index.ts";
import { companyRet, hostRet, preferencesRet, type HostInfo } from "./hcp.ts";
import { queryRecords, type QueryContext } from "./query-ops.ts";
import { STATUS_OK } from "./status.ts";
import { addRecord, deleteRecord, modRecord, type OpResult } from "./write-ops.ts";
import { attr, child, childrenNamed, type XmlElement } from "./xml-tree.ts";

/** Everything a request handler may use. */
export interface RequestContext extends QueryContext {
  readonly file: CompanyFile;
  readonly host: HostInfo;
}

interface RequestType {
  readonly model: Model;
  readonly attributes: readonly string[];
  readonly handle: (rq: XmlElement, context: RequestContext) => OpResult;
}

const QUERY_ATTRS = ["requestID", "metaData", "iterator", "iteratorID"];
const WRITE_ATTRS = ["requestID"];
const ENUM_ATTRS: Readonly<Record<string, readonly string[]>> = {
  metaData: ["NoMetaData", "MetaDataOnly", "MetaDataAndResponseData"],
  iterator: ["Start", "Continue", "Stop"],
};

function retElements(rq: XmlElement): string[] {
  return childrenNamed(rq, "IncludeRetElement").map((c) => c.text);
}

function buildCatalogue(): Map<string, RequestType> {
  const catalogue = new Map<string, RequestType>();
  for (const def of LEDGER_DEFINITIONS) {
    const { addModel, modModel, queryModel } = def;
    if (addModel !== undefined) {
      catalogue.set(`${def.object}AddRq`, {
        model: [req(`${def.object}Add`, addModel), many("IncludeRetElement")],
        attributes: WRITE_ATTRS,
        handle: (rq, ctx) => addRecord(def, child(rq, `${def.object}Add`) ?? rq, ctx.file, retElements(rq)),
      });
    }
    if (modModel !== undefined) {
      catalogue.set(`${def.object}ModRq`, {
        model: [req(`${def.object}Mod`, modModel), many("IncludeRetElement")],
        attributes: WRITE_ATTRS,
        handle: (rq, ctx) => modRecord(def, child(rq, `${def.object}Mod`) ?? rq, ctx.file, retElements(rq)),
      });
    }
    if (queryModel !== undefined) {
      catalogue.set(`${def.object}QueryRq`, {
        model: queryModel,
        attributes: QUERY_ATTRS,
        handle: (rq, ctx) => queryRecords(def, rq, ctx.file, ctx),
      });
    }
  }
  catalogue.set("ListDelRq", {
    model: [req("ListDelType"), req("ListID")],
    attributes: WRITE_ATTRS,
    handle: (rq, ctx) => deleteRecord("list", rq, ctx.file),
  });
  catalogue.set("TxnDelRq", {
    model: [req("TxnDelType"), req("TxnID")],
    attributes: WRITE_ATTRS,
    handle: (rq, ctx) => deleteRecord("transaction", rq, ctx.file),
  });
  catalogue.set("HostQueryRq", {
    model: [many("IncludeRetElement")],
    attributes: WRITE_ATTRS,
    handle: (_rq, ctx) => ({ status: STATUS_OK, body: [hostRet(ctx.host)] }),
  });
  catalogue.set("CompanyQueryRq", {
    model: [many("IncludeRetElement"), many("OwnerID")],
    attributes: WRITE_ATTRS,
    handle: (rq, ctx) => ({
      status: STATUS_OK,
      body: [
        companyRet(
          ctx.file,
          childrenNamed(rq, "OwnerID").map((c) => c.text),
        ),
      ],
    }),
  });
  catalogue.set("PreferencesQueryRq", {
    model: [many("IncludeRetElement")],
    attributes: WRITE_ATTRS,
    handle: () => ({ status: STATUS_OK, body: [preferencesRet()] }),
  });
  return catalogue;
}

const CATALOGUE = buildCatalogue();

/** A validated request ready to run. */
export interface ValidRequest {
  readonly rq: XmlElement;
  readonly run: (context: RequestContext) => OpResult;
}

/** Validates one request element; undefined when the set must be rejected. */
export function validateRequest(rq: XmlElement): ValidRequest | undefined {
  const type = CATALOGUE.get(rq.name);
  if (type === undefined || rq.text.trim() !== "") return undefined;
  for (const [key, value] of rq.attrs) {
    if (!type.attributes.includes(key)) return undefined;
    const allowed = ENUM_ATTRS[key];
    if (allowed !== undefined && !allowed.includes(value)) return undefined;
  }
  const iterator = attr(rq, "iterator");
  if ((iterator === "Continue" || iterator === "Stop") && attr(rq, "iteratorID") === undefined)
    return undefined;
  if (!matchesModel(type.model, rq)) return undefined;
  return { rq, run: (context) => type.handle(rq, context) };
}
