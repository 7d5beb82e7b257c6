import assert from "node:assert/strict";
import type { ApplicationSession } from "../simulator/application.ts";
import { SoapByHand } from "./soap-by-hand.ts";
import type { ConnectedEndUser, System } from "./system.ts";

/**
 * Driving the connector endpoint call by call (tests of the session machine and of the at-most-once
 * branches): an end user of its own with a hand-driven SOAP client, an open session, and the
 * simulated application behind the company file to answer what is handed over.
 */
export interface HandSetup {
  sys: System;
  eu: ConnectedEndUser;
  hand: SoapByHand;
}

let files = 0;

/** A new end user (its own connection and company file) on `sys`, with a SOAP client driven by hand. */
export async function handSetup(sys: System | undefined, companyName: string): Promise<HandSetup> {
  assert.ok(sys, "the service is up");
  files += 1;
  const eu = await sys.connectEndUser({ companyName: `${companyName} ${files}` });
  return { sys, eu, hand: SoapByHand.for(sys, eu) };
}

/** A session whose company file was accepted (the first sendRequestXML held and answered ""). */
export async function openSession(s: HandSetup): Promise<string> {
  const ticket = await s.hand.ticket();
  assert.equal(await s.hand.send(ticket, s.eu.companyFilePath), "");
  return ticket;
}

/** The simulated application behind the company file, to answer handed-over documents. */
export async function applicationOf(s: HandSetup): Promise<ApplicationSession> {
  const opened = await s.sys.ledger.beginSession({
    companyFilePath: s.eu.companyFilePath,
    appName: "hand",
    ownerId: "{00000000-0000-0000-0000-000000000001}",
    fileId: "{00000000-0000-0000-0000-000000000002}",
    stampFileId: false,
  });
  assert.ok(opened.ok);
  return opened.session;
}

/** The application's answer to a handed-over document. */
export async function answerWith(app: ApplicationSession, xml: string): Promise<string> {
  const result = await app.processRequest(xml);
  assert.ok(result.ok, JSON.stringify(result));
  return result.response;
}

/**
 * What the company file holds, asked by another user of it (a session of its own on the simulated
 * application, not through the service): the application's answer to `messages` (request message
 * elements), so that a test sees exactly what reached the file.
 */
export async function askCompanyFile(
  eu: Pick<ConnectedEndUser, "ledger" | "companyFilePath">,
  messages: string,
): Promise<string> {
  const opened = await eu.ledger.beginSession({
    companyFilePath: eu.companyFilePath,
    appName: "Auditor",
    ownerId: "{00000000-0000-0000-0000-00000000a0d1}",
    fileId: "{00000000-0000-0000-0000-00000000f11e}",
    stampFileId: false,
  });
  assert.ok(opened.ok);
  try {
    const result = await opened.session.processRequest(
      `<?xml version="1.0" encoding="utf-8"?><?qbxml version="16.0"?><QBXML><QBXMLMsgsRq onError="stopOnError">${messages}</QBXMLMsgsRq></QBXML>`,
    );
    assert.ok(result.ok, JSON.stringify(result));
    return result.response;
  } finally {
    opened.session.end();
  }
}
