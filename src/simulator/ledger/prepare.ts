/**
 * Turns the children of an `…Add` / `…Mod` element into storable fields: references resolved to
 * ListIDs (3140 when missing), amounts normalised to two decimals with big.js, fields the simulator
 * does not implement dropped with a 530 warning, and lines split off.
 */
import Big from "big.js";
import type { CompanyFile } from "./company-file.ts";
import type { RecordDefinition } from "./records.ts";
import { statusFieldNotSupported, statusInvalidReference, type Status } from "./status.ts";
import { leaf, node, type XmlElement } from "./xml-tree.ts";

/** Input line: `txnLineId` is set for `…LineMod` (`-1` = new line). */
export interface PreparedLine {
  readonly txnLineId: string | undefined;
  readonly fields: XmlElement[];
}

/** Prepared Add/Mod input. */
export interface PreparedInput {
  readonly fields: XmlElement[];
  /** Undefined when the request carried no lines. */
  readonly lines: PreparedLine[] | undefined;
  /** A 530 warning for an ignored field, if any. */
  readonly warning: Status | undefined;
}

const CORE_FIELDS = new Set(["ListID", "TxnID", "EditSequence"]);

/** Normalises an AMTTYPE value to two decimals. */
export function normaliseAmount(value: string): string {
  return new Big(value.replace(/^\+/, "")).toFixed(2);
}

function prepareFields(
  inputs: readonly XmlElement[],
  refs: Readonly<Record<string, string>>,
  amounts: readonly string[],
  file: CompanyFile,
  owner: { object: string; inLine: boolean },
): XmlElement[] | Status {
  const out: XmlElement[] = [];
  for (const input of inputs) {
    const refKind = refs[input.name];
    if (refKind !== undefined) {
      const target = file.resolveRef(refKind, input);
      if (target === undefined) {
        const shown =
          input.children.find((c) => c.name === "FullName")?.text ??
          input.children.find((c) => c.name === "ListID")?.text ??
          "";
        return statusInvalidReference(refKind, shown, owner.object, owner.inLine);
      }
      out.push(node(input.name, [leaf("ListID", target.id)]));
    } else if (amounts.includes(input.name)) {
      out.push(leaf(input.name, normaliseAmount(input.text)));
    } else {
      out.push(input);
    }
  }
  return out;
}

/** Prepares the children of an Add or Mod element of `def`. */
export function prepareInput(
  def: RecordDefinition,
  inputs: readonly XmlElement[],
  file: CompanyFile,
): PreparedInput | Status {
  let warning: Status | undefined;
  const plain: XmlElement[] = [];
  const lineInputs: XmlElement[] = [];
  for (const input of inputs) {
    if (CORE_FIELDS.has(input.name)) continue;
    if (def.unsupported.includes(input.name)) {
      warning ??= statusFieldNotSupported(input.name);
      continue;
    }
    if (def.lines !== undefined && (input.name === def.lines.addName || input.name === def.lines.modName)) {
      lineInputs.push(input);
      continue;
    }
    plain.push(input);
  }
  const fields = prepareFields(plain, def.refs, def.amounts, file, { object: def.object, inLine: false });
  if (!Array.isArray(fields)) return fields;
  const lineDef = def.lines;
  if (lineDef === undefined || lineInputs.length === 0) return { fields, lines: undefined, warning };
  const lines: PreparedLine[] = [];
  for (const input of lineInputs) {
    const txnLineId = input.children.find((c) => c.name === "TxnLineID")?.text;
    const body = input.children.filter((c) => c.name !== "TxnLineID");
    const prepared = prepareFields(body, lineDef.refs, lineDef.amounts, file, {
      object: def.object,
      inLine: true,
    });
    if (!Array.isArray(prepared)) return prepared;
    lines.push({ txnLineId, fields: prepared });
  }
  return { fields, lines, warning };
}
