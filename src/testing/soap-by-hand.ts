import {
  SOAP_CONTENT_TYPE,
  parseSoapResponse,
  soapAction,
  soapRequest,
  type SoapCall,
  type SoapResult,
} from "../connector/soap.ts";
import { parseQwc } from "../simulator/qwc.ts";
import type { ConnectedEndUser, System } from "./system.ts";

/**
 * A connector driven call by call over HTTP (tests of the protocol's edge cases, where the
 * simulated connector would do the right thing on its own). Each method is one SOAP call.
 */
export class SoapByHand {
  readonly userName: string;

  constructor(
    private readonly url: string,
    private readonly eu: Pick<ConnectedEndUser, "connectorQwc" | "password">,
  ) {
    this.userName = parseQwc(eu.connectorQwc).userName;
  }

  static for(sys: System, eu: ConnectedEndUser): SoapByHand {
    return new SoapByHand(`${sys.url}/connector`, eu);
  }

  async call(call: SoapCall, signal?: AbortSignal): Promise<SoapResult> {
    const res = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": SOAP_CONTENT_TYPE, soapaction: soapAction(call.method) },
      body: soapRequest(call),
      ...(signal ? { signal } : {}),
    });
    return parseSoapResponse(call.method, await res.text());
  }

  /** authenticate → [ticket, status, …]. */
  async authenticate(): Promise<string[]> {
    const result = await this.call({
      method: "authenticate",
      strUserName: this.userName,
      strPassword: this.eu.password,
    });
    if (!Array.isArray(result)) throw new Error("authenticate returned no array");
    return result;
  }

  /** A ticket of an open session (fails when authenticate answers none/nvu). */
  async ticket(): Promise<string> {
    const [ticket, status] = await this.authenticate();
    if (!ticket || status === "none" || status === "nvu") throw new Error(`no session: ${String(status)}`);
    return ticket;
  }

  async send(ticket: string, companyFileName = "C:\\Files\\Hand.qbw", signal?: AbortSignal): Promise<string> {
    return String(
      await this.call(
        {
          method: "sendRequestXML",
          ticket,
          strHCPResponse: "",
          strCompanyFileName: companyFileName,
          qbXMLCountry: "US",
          qbXMLMajorVers: "16",
          qbXMLMinorVers: "0",
        },
        signal,
      ),
    );
  }

  async receive(ticket: string, response: string, hresult = "", message = ""): Promise<number> {
    return Number(await this.call({ method: "receiveResponseXML", ticket, response, hresult, message }));
  }

  async lastError(ticket: string): Promise<string> {
    return String(await this.call({ method: "getLastError", ticket }));
  }

  async close(ticket: string): Promise<string> {
    return String(await this.call({ method: "closeConnection", ticket }));
  }

  async connectionError(ticket: string, hresult: string, message = "failed"): Promise<string> {
    return String(await this.call({ method: "connectionError", ticket, hresult, message }));
  }
}
