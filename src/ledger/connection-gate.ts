import { ServiceError } from "../errors/service-error.ts";
import type { Shape } from "./resources/shape.ts";
import { fieldPathOf } from "./typed/versions.ts";
import { firstRefusedElement, type ConnectionCapabilities } from "./xml/availability.ts";
import type { XmlElement } from "./xml/tree.ts";

/**
 * The gate between a call and its connection (spec "Versioning"; decision 0016): request messages
 * that use an element newer than the message version negotiated with the end user's application, or
 * one the company file's regional edition lacks, are refused before anything is queued. Typed calls
 * and passthrough go through the same gate; the application would refuse the whole message set
 * (HRESULT 0x80040400) without saying which element, after a round trip to the end user's machine.
 */

/** What the gate needs of a connection (a store row carries both columns). */
export interface GatedConnection {
  readonly xml_version: string | null;
  readonly country: string | null;
}

interface Refusal {
  /** The typed body's field (`lines[0].itemId`) where one wrote the element, else `elementPath`. */
  readonly path: string;
  /** Whether `path` is a field of the typed body. */
  readonly isField: boolean;
  /** The element, from its message down: `BillAddRq/BillAdd/ClassRef`. */
  readonly elementPath: string;
}

export type GateRefusal =
  | (Refusal & {
      readonly code: "LEDGER_FIELD_UNSUPPORTED_BY_VERSION";
      readonly minimumXmlVersion: string;
      readonly xmlVersion: string;
    })
  | (Refusal & { readonly code: "LEDGER_REGION_UNSUPPORTED"; readonly country: string });

/** The version and edition a connection reported; nothing is known before its first session. */
export function capabilitiesOf(connection: GatedConnection | null): ConnectionCapabilities {
  return { xmlVersion: connection?.xml_version ?? null, country: connection?.country ?? null };
}

/**
 * The first element of `messages` that `connection` cannot take, or null. `body` is the input shape
 * of a typed call's body (the `<X>Add`/`<X>Mod` element of its message): the refusal then names the
 * body's JSON field where it can. A connection that has not reported its version or edition yet is
 * not gated on it.
 */
export function gateMessages(
  messages: readonly XmlElement[],
  connection: GatedConnection | null,
  body?: Shape,
): GateRefusal | null {
  const found = firstRefusedElement(messages, capabilitiesOf(connection));
  if (!found) return null;
  const field = body ? fieldPathOf(body, found.steps) : null;
  const path = field ?? found.elementPath;
  const common = { path, isField: field !== null, elementPath: found.elementPath };
  return found.code === "LEDGER_FIELD_UNSUPPORTED_BY_VERSION"
    ? {
        code: found.code,
        ...common,
        minimumXmlVersion: found.minimumXmlVersion,
        xmlVersion: found.xmlVersion,
      }
    : { code: found.code, ...common, country: found.country };
}

/**
 * The refusal as the catalogue's error. `param` defaults to the body's field (typed calls); a
 * passthrough names its body. The message names the element either way.
 */
export function gateError(refusal: GateRefusal, param?: string | null): ServiceError {
  const named = refusal.isField
    ? `\`${refusal.path}\` (\`${refusal.elementPath}\`)`
    : `\`${refusal.elementPath}\``;
  const at = param === undefined ? (refusal.isField ? refusal.path : null) : param;
  if (refusal.code === "LEDGER_FIELD_UNSUPPORTED_BY_VERSION") {
    return new ServiceError("LEDGER_FIELD_UNSUPPORTED_BY_VERSION", {
      param: at,
      details: { minimumXmlVersion: refusal.minimumXmlVersion, xmlVersion: refusal.xmlVersion },
      message: `${named} needs message version ${refusal.minimumXmlVersion}; this company file's application speaks ${refusal.xmlVersion}.`,
    });
  }
  return new ServiceError("LEDGER_REGION_UNSUPPORTED", {
    param: at,
    details: { country: refusal.country },
    message: `${named} is not available in the ${refusal.country} edition of the application that holds this company file.`,
  });
}
