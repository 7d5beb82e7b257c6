/**
 * Reads a connector call as its text arrives (issue 23, decision 0031), without building a tree:
 * the connector endpoint faces the internet, and whatever it does before it has seen credentials,
 * anyone can make it do. Each element is judged when it opens, so a body that is not a SOAP 1.1
 * call of the protocol's methods is refused at its first wrong element, whatever its size:
 *
 *   Envelope (SOAP 1.1)            anything else at the root: VersionMismatch or Client fault
 *   ├─ Header                      entries marked mustUnderstand="1": MustUnderstand fault;
 *   │                              others skipped (their text is not kept)
 *   ├─ Body                        exactly one, holding exactly one element:
 *   │  └─ operation                a known method in the connector namespace
 *   │     └─ parameter             in the connector namespace, once each, text only
 *   └─ (elements of other namespaces beside them are skipped, as SOAP 1.1 §4.3 allows)
 *
 * Only the text of the operation's parameters is kept. The caller feeds decoded text with
 * {@link SoapCallReader.write} and may look at the ticket as soon as it has been read (the
 * endpoint uses it to let a live session's call grow past the small limit of unauthenticated
 * ones); {@link SoapCallReader.end} returns the call. Errors are {@link SoapParseError}s with the
 * fault code that names the kind of problem, as the tree reader they replace raised them.
 */
import { SaxesParser } from "saxes";
import { PlainCallTokenizer, type CallTag } from "./plain-call-tokens.ts";
import { SOAP_12_ENVELOPE_NAMESPACE, SOAP_ENVELOPE_NAMESPACE, SoapParseError } from "./envelope.ts";
import { MAX_DEPTH, noteDocumentRead } from "../ledger/xml/parse.ts";
import {
  CONNECTOR_NAMESPACE,
  SOAP_PARAMETERS,
  isSoapMethod,
  type SoapCall,
  type SoapMethod,
} from "./soap.ts";

/** Where the reader is: what the innermost open element is. */
type Place = "envelope" | "header" | "headerEntry" | "body" | "operation" | "parameter" | "skipped";

/** The parameters that carry a session's ticket. */
const TICKET_PARAMETERS: ReadonlySet<string> = new Set(["ticket", "wcTicket"]);

/** Parses a whole request body's text (tests, and any caller holding the body already). */
export function parseSoapCall(body: string): SoapCall {
  const reader = new SoapCallReader();
  reader.write(body);
  return reader.end();
}

export class SoapCallReader {
  /**
   * The purpose-built tokenizer reads the call while it stays in its subset (decision 0035); the
   * text it was given is kept, and at the first thing outside the subset the call is read again
   * from its start by saxes (`parser`), which reads every call from then on.
   */
  private tokens: PlainCallTokenizer | null = new PlainCallTokenizer({
    open: (tag) => this.open(tag),
    text: (text) => this.text(text),
    close: () => this.close(),
  });
  private received: string[] | null = [];
  private parser: SaxesParser<{ xmlns: true; position: false }> | null = null;
  private places: Place[] = [];
  private method: SoapMethod | null = null;
  private parameters = new Map<string, string>();
  private parameterName: string | null = null;
  private parameterKept = false;
  private parameterText: string[] = [];
  private sawEnvelope = false;
  private sawBody = false;
  private bodyEntries = 0;
  private started = false;
  private blank = true;
  private ticketRead: string | null = null;

  /**
   * @param checkMethod called as soon as the operation's method is known (the endpoint checks the
   *   `SOAPAction` header against it there); may throw a {@link SoapParseError}.
   */
  constructor(
    private readonly checkMethod: (method: SoapMethod) => void = () => undefined,
    options: { general?: boolean } = {},
  ) {
    noteDocumentRead();
    // Tests read with saxes alone, to compare the two.
    if (options.general) this.toSaxes();
  }

  /** Whether the purpose-built tokenizer has read the call so far (saxes was not needed). */
  get readByTokens(): boolean {
    return this.tokens !== null;
  }

  /**
   * Leaves the purpose-built tokenizer: what it built is dropped, and saxes reads the call from its
   * start (the text received so far), as if it had read it from the first byte.
   */
  private toSaxes(): SaxesParser {
    const replay = (this.received ?? []).join("");
    this.tokens = null;
    this.received = null;
    this.places = [];
    this.method = null;
    this.parameters = new Map();
    this.parameterName = null;
    this.parameterKept = false;
    this.parameterText = [];
    this.sawEnvelope = false;
    this.sawBody = false;
    this.bodyEntries = 0;
    this.ticketRead = null;
    const parser = new SaxesParser({ xmlns: true, position: false });
    this.parser = parser;
    parser.on("error", (error) => this.fail(error.message));
    parser.on("doctype", () => {
      throw new SoapParseError("A SOAP message must not contain a DTD.");
    });
    parser.on("opentag", (tag) => this.open(tag));
    parser.on("text", (text) => this.text(text));
    parser.on("cdata", (text) => this.text(text));
    parser.on("closetag", () => this.close());
    if (replay !== "") parser.write(replay);
    return parser;
  }

  /** The method, once its element has opened. */
  get methodName(): SoapMethod | null {
    return this.method;
  }

  /** The session ticket (`ticket` or `wcTicket`) once its element has closed; null before. */
  get ticket(): string | null {
    return this.ticketRead;
  }

  /** Reads the next piece of the body's text. */
  write(text: string): void {
    if (!this.started) {
      if (text === "") return;
      this.started = true;
      if (text.startsWith("\uFEFF")) text = text.slice(1);
    }
    if (this.blank && /\S/.test(text)) this.blank = false;
    if (this.tokens !== null) {
      this.received?.push(text);
      if (this.tokens.write(text)) return;
      this.toSaxes();
      return;
    }
    (this.parser ?? this.toSaxes()).write(text);
  }

  /** Ends the body; returns the call, or throws when the body did not hold a whole one. */
  end(): SoapCall {
    if (this.blank) throw new SoapParseError("The request body is empty.");
    if (this.tokens === null || !this.tokens.end()) (this.parser ?? this.toSaxes()).close();
    if (!this.sawBody) throw new SoapParseError("The SOAP Envelope has no Body.");
    if (this.method === null) throw new SoapParseError("The SOAP Body is empty.");
    return callOf(this.method, this.parameters);
  }

  private fail(message: string): never {
    const unbound = /unbound namespace prefix: "(.*)"/.exec(message);
    if (unbound)
      throw new SoapParseError(
        `The namespace prefix "${unbound[1]}" of an element or attribute is not declared.`,
      );
    throw new SoapParseError(`Not well-formed XML: ${message}`);
  }

  private open(tag: CallTag): void {
    if (this.places.length >= MAX_DEPTH) this.fail(`elements nest deeper than ${MAX_DEPTH} levels`);
    this.places.push(this.placeOf(tag, tag.uri === "" ? null : tag.uri));
  }

  /** What an opening element is, given where it opens; throws when it has no place in a call. */
  private placeOf(tag: CallTag, namespace: string | null): Place {
    const parent = this.places[this.places.length - 1];
    if (parent === undefined) return this.openEnvelope(tag.local, namespace);
    switch (parent) {
      case "envelope":
        return this.openEnvelopePart(tag.local, namespace);
      case "header":
        if (mustUnderstand(tag))
          throw new SoapParseError(
            `The header entry <${tag.local}> must be understood, and this service does not know it.`,
            "soap:MustUnderstand",
          );
        return "headerEntry";
      case "body":
        return this.openOperation(tag.local, namespace);
      case "operation":
        return this.openParameter(tag.local, namespace);
      case "parameter":
        throw new SoapParseError(`<${this.parameterName ?? tag.local}> must contain text only`);
      case "headerEntry":
      case "skipped":
        return "skipped";
    }
  }

  private openEnvelope(name: string, namespace: string | null): Place {
    if (this.sawEnvelope) this.fail("more than one root element");
    if (name !== "Envelope") throw new SoapParseError("The body is not a SOAP Envelope.");
    if (namespace === SOAP_12_ENVELOPE_NAMESPACE) {
      throw new SoapParseError(
        `This is a SOAP 1.2 envelope (${SOAP_12_ENVELOPE_NAMESPACE}); the connector protocol is SOAP 1.1 (${SOAP_ENVELOPE_NAMESPACE}).`,
        "soap:VersionMismatch",
      );
    }
    if (namespace !== SOAP_ENVELOPE_NAMESPACE) {
      throw new SoapParseError(
        `The Envelope must be in the SOAP 1.1 namespace ${SOAP_ENVELOPE_NAMESPACE} (found ${namespace ?? "no namespace"}).`,
        "soap:VersionMismatch",
      );
    }
    this.sawEnvelope = true;
    return "envelope";
  }

  private openEnvelopePart(name: string, namespace: string | null): Place {
    if (namespace !== SOAP_ENVELOPE_NAMESPACE) return "skipped";
    if (name === "Header") return "header";
    if (name !== "Body") return "skipped";
    if (this.sawBody) throw new SoapParseError("The SOAP Envelope has more than one Body.");
    this.sawBody = true;
    return "body";
  }

  private openOperation(name: string, namespace: string | null): Place {
    this.bodyEntries += 1;
    if (this.bodyEntries > 1) throw new SoapParseError("The SOAP Body must hold one call, not more.");
    if (namespace === SOAP_ENVELOPE_NAMESPACE && name === "Fault")
      throw new SoapParseError("A SOAP Fault is not a call.");
    if (namespace !== CONNECTOR_NAMESPACE) {
      throw new SoapParseError(
        `The operation <${name}> must be in the namespace ${CONNECTOR_NAMESPACE} (found ${namespace ?? "no namespace"}).`,
      );
    }
    if (!isSoapMethod(name)) throw new SoapParseError(`Unknown method ${name}.`);
    this.method = name;
    this.checkMethod(name);
    return "operation";
  }

  private openParameter(name: string, namespace: string | null): Place {
    const method = this.method ?? "";
    if (namespace !== CONNECTOR_NAMESPACE) {
      throw new SoapParseError(
        `The parameter <${name}> of ${method} must be in the namespace ${CONNECTOR_NAMESPACE} (found ${namespace ?? "no namespace"}).`,
      );
    }
    if (this.parameters.has(name)) throw new SoapParseError(`More than one <${name}> in ${method}.`);
    this.parameterName = name;
    // A parameter the method does not take is read (and refused if it holds elements) but not kept.
    this.parameterKept = (SOAP_PARAMETERS[this.method as SoapMethod] as readonly string[]).includes(name);
    this.parameterText = [];
    return "parameter";
  }

  private text(text: string): void {
    if (this.places[this.places.length - 1] === "parameter" && this.parameterKept)
      this.parameterText.push(text);
  }

  private close(): void {
    const place = this.places.pop();
    if (place !== "parameter" || this.parameterName === null) return;
    const joined = this.parameterText.join("");
    const value = joined.trim() === "" ? "" : joined;
    this.parameters.set(this.parameterName, this.parameterKept ? value : "");
    if (TICKET_PARAMETERS.has(this.parameterName)) this.ticketRead = value;
    this.parameterName = null;
    this.parameterText = [];
  }
}

/** Whether a header entry carries `mustUnderstand="1"` in the SOAP 1.1 namespace. */
function mustUnderstand(tag: CallTag): boolean {
  for (const attribute of Object.values(tag.attributes)) {
    if (
      attribute.local === "mustUnderstand" &&
      attribute.uri === SOAP_ENVELOPE_NAMESPACE &&
      attribute.value === "1"
    )
      return true;
  }
  return false;
}

/** The call of `method` from its parameters; `<x />`, `<x></x>` and a missing element all mean "". */
function callOf(name: SoapMethod, parameters: ReadonlyMap<string, string>): SoapCall {
  const text = (field: string): string => parameters.get(field) ?? "";
  switch (name) {
    case "serverVersion":
      // Some WSDLs declare a `strVersion` child; the real connector sends none. Either is accepted.
      return { method: name };
    case "clientVersion":
      return { method: name, strVersion: text("strVersion") };
    case "authenticate":
      return { method: name, strUserName: text("strUserName"), strPassword: text("strPassword") };
    case "sendRequestXML":
      return {
        method: name,
        ticket: text("ticket"),
        strHCPResponse: text("strHCPResponse"),
        strCompanyFileName: text("strCompanyFileName"),
        qbXMLCountry: text("qbXMLCountry"),
        qbXMLMajorVers: text("qbXMLMajorVers"),
        qbXMLMinorVers: text("qbXMLMinorVers"),
      };
    case "receiveResponseXML":
      return {
        method: name,
        ticket: text("ticket"),
        response: text("response"),
        hresult: text("hresult"),
        message: text("message"),
      };
    case "connectionError":
      return { method: name, ticket: text("ticket"), hresult: text("hresult"), message: text("message") };
    case "getLastError":
    case "closeConnection":
    case "getServerVersion":
      return { method: name, ticket: text("ticket") };
    case "getInteractiveURL":
      return { method: name, wcTicket: text("wcTicket"), sessionID: text("sessionID") };
    case "interactiveDone":
      return { method: name, wcTicket: text("wcTicket") };
    case "interactiveRejected":
      return { method: name, wcTicket: text("wcTicket"), reason: text("reason") };
  }
}
