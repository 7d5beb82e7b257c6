/**
 * `npm run simulator`: a standalone simulated end user (Web Connector + accounting application with
 * one company file) for a ledger-bridge service running elsewhere, or with SIMULATOR=off. It reaches
 * the service only as a real end user's computer does: the setup link (or a `.qwc` file and its
 * password) and then the connector protocol over HTTP.
 *
 *   npm run simulator -- --setup-url "<authFlowUrl>" [--company NAME] [--file PATH] [--size SIZE] [--latency PROFILE]
 *   npm run simulator -- --qwc FILE.qwc --password PASSWORD [--company NAME] [--file PATH] [--size SIZE] [--latency PROFILE]
 *
 * Environment instead of flags: LEDGER_SIMULATOR_SETUP_URL, LEDGER_SIMULATOR_QWC,
 * LEDGER_SIMULATOR_PASSWORD, LEDGER_SIMULATOR_FILE, LEDGER_SIMULATOR_SIZE, LEDGER_SIMULATOR_LATENCY.
 * A new company file holds the demo company (`small`, or `large`: 10,000 invoices). `--connector-url`
 * replaces the `.qwc`'s AppURL (the service's connector endpoint, for example when the file names a
 * public address). `--latency` makes the computer as slow as a real one (decision 0034).
 * `--replay bundle.json` answers with a support bundle's answers and faults (decision 0049).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  formatLatencyProfile,
  isZeroLatency,
  parseLatencyProfile,
  type LatencyProfile,
} from "../platform/latency-profile.ts";
import { SimulatedLedgerApplication } from "./ledger/application.ts";
import { DEMO_COMPANY_SIZES, type DemoCompanySize } from "./ledger/demo-company/demo-company.ts";
import { simulatedLatency } from "./latency.ts";
import { PersistedApplication } from "./ledger/persisted-application.ts";
import { JsonFileStore } from "./json-file-store.ts";
import { SimulatedWebConnector } from "./web-connector.ts";
import { ReplayApplication, readBundle, replayEntries } from "./replay.ts";

const USAGE = `Usage:
  npm run simulator -- --setup-url "<authFlowUrl>" [--company NAME] [--file PATH] [--size SIZE]
  npm run simulator -- --qwc FILE.qwc --password PASSWORD [--company NAME] [--file PATH] [--size SIZE]

  --setup-url      the auth session's authFlowUrl: the .qwc and the password are taken from it
  --qwc, --password  a .qwc file and the password shown on the setup page
  --connector-url  use this connector endpoint instead of the .qwc's AppURL
  --company        company name of a new company file (default "Simulated Company")
  --file           keep the company file here as JSON (default ./simulated-company.json); an
                   existing file is used as it is
  --size           a new company file's demo company: small (default; a contractor's year, about
                   150 invoices) or large (10,000 invoices, for benches; takes 10-20 s to make)
  --latency        how slow this computer is: zero (default), realistic, or milliseconds per key,
                   e.g. soap:80,messageSet:150,request:30,record:2 (a connector call's network
                   round trip; the application's time per message set, per request, per record)
  --replay         a support bundle (ledger-bridge support-bundle): its messages are answered with
                   its answers, in order, with its faults (an HRESULT, a lost answer); a message it
                   does not hold is answered by this simulator and printed as a divergence
Environment: LEDGER_SIMULATOR_SETUP_URL, LEDGER_SIMULATOR_QWC, LEDGER_SIMULATOR_PASSWORD,
LEDGER_SIMULATOR_FILE, LEDGER_SIMULATOR_SIZE, LEDGER_SIMULATOR_LATENCY.`;

interface Registration {
  qwc: string;
  password: string;
}

/** Follows the setup link as the end user does: downloads the .qwc and reads the password shown. */
async function fromSetupLink(setupUrl: string): Promise<Registration> {
  const url = new URL(setupUrl);
  const page = await fetch(url);
  if (page.status !== 200) throw new Error(`The setup link answered ${page.status}: is it still valid?`);
  const password = /<code id="password">([A-Za-z0-9]+)<\/code>/.exec(await page.text())?.[1];
  if (!password) throw new Error("The setup page shows no password: the setup may be finished already.");
  const qwcUrl = new URL(url);
  qwcUrl.pathname = `${url.pathname.replace(/\/$/, "")}/qwc`;
  const qwc = await fetch(qwcUrl);
  if (qwc.status !== 200) throw new Error(`The .qwc download answered ${qwc.status}.`);
  return { qwc: await qwc.text(), password };
}

/** The `--latency` profile; a bad one is a usage error naming what is wrong. */
function latencyProfile(text: string): LatencyProfile {
  try {
    return parseLatencyProfile(text);
  } catch (error) {
    throw new UsageError(`--latency: ${(error as Error).message}.`);
  }
}

/** The `--size` of a new company file; anything else is a usage error. */
function companySize(text: string): DemoCompanySize {
  const size = DEMO_COMPANY_SIZES.find((s) => s === text);
  if (size === undefined) throw new UsageError(`--size: give ${DEMO_COMPANY_SIZES.join(" or ")}.`);
  return size;
}

function withConnectorUrl(qwc: string, connectorUrl: string | undefined): string {
  if (!connectorUrl) return qwc;
  const escaped = connectorUrl.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  return qwc.replace(/<AppURL>[^<]*<\/AppURL>/, `<AppURL>${escaped}</AppURL>`);
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      "setup-url": { type: "string" },
      qwc: { type: "string" },
      password: { type: "string" },
      "connector-url": { type: "string" },
      company: { type: "string" },
      file: { type: "string" },
      latency: { type: "string" },
      size: { type: "string" },
      replay: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return void console.log(USAGE);
  const env = process.env;
  const profile = latencyProfile(values.latency ?? env.LEDGER_SIMULATOR_LATENCY ?? "zero");
  const latency = simulatedLatency(profile);
  const size = companySize(values.size ?? (env.LEDGER_SIMULATOR_SIZE || "small"));
  const setupUrl = values["setup-url"] ?? env.LEDGER_SIMULATOR_SETUP_URL;
  const qwcPath = values.qwc ?? env.LEDGER_SIMULATOR_QWC;
  const password = values.password ?? env.LEDGER_SIMULATOR_PASSWORD;
  let registration: Registration;
  if (setupUrl) registration = await fromSetupLink(setupUrl);
  else if (qwcPath && password) registration = { qwc: readFileSync(qwcPath, "utf8"), password };
  else throw new UsageError("Give --setup-url, or --qwc and --password.");

  const store = new JsonFileStore(values.file ?? env.LEDGER_SIMULATOR_FILE ?? "simulated-company.json");
  const ledger = new SimulatedLedgerApplication({ xmlVersion: "16.0", latency });
  const stored = store.load();
  const companyName = values.company ?? "Simulated Company";
  const file =
    stored === null
      ? ledger.createCompanyFile(`C:\\Company Files\\${companyName.replace(/[<>:"/\\|?*]+/g, "-")}.company`, {
          companyName,
          seed: "demo",
          demoSize: size,
        })
      : ledger.restoreCompanyFile(stored);
  const application = new PersistedApplication(ledger, store);
  if (stored === null) await application.save(file);
  else application.markSaved(file);

  let replay: ReplayApplication | null = null;
  if (values.replay) {
    // readBundle refuses anything but a bundle of version 1, naming the first place.
    const bundle = readBundle(readFileSync(values.replay, "utf8"));
    replay = new ReplayApplication({
      fallback: application,
      entries: replayEntries(bundle),
      loseAnswer: (write) =>
        connector.setFault(
          write ? { kind: "lose_answer_after_write" } : { kind: "send_again_without_answer", match: "read" },
        ),
      onDivergence: (divergence) => console.log(`divergence: ${JSON.stringify(divergence)}`),
    });
  }
  const connector: SimulatedWebConnector = new SimulatedWebConnector({
    qwc: withConnectorUrl(registration.qwc, values["connector-url"]),
    password: registration.password,
    application: replay ?? application,
    latency,
    onEvent: (event) => {
      if (event.type !== "session_ended") return;
      const { outcome, message, requestsProcessed } = event.report;
      console.log(
        `${new Date().toISOString()} check-in: ${outcome}${message ? ` (${message})` : ""}, ${requestsProcessed} request(s)`,
      );
      if (replay)
        console.log(
          `replay: ${replay.played.length} played, ${replay.unplayed.length} not played, ${replay.divergences.length} divergence(s)`,
        );
    },
  });
  const every = connector.intervalSeconds;
  console.log(
    `Simulated end user "${file.companyName}" (company file ${store.path}) checks in at ${connector.registration.appUrl}` +
      (isZeroLatency(profile) ? "" : ` (latency ${formatLatencyProfile(profile)})`) +
      (every === undefined ? " once." : ` now and every ${every} s. Ctrl+C stops it.`),
  );
  connector.start();
  const stop = (): void => {
    void connector.stop().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

class UsageError extends Error {}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(
    error instanceof UsageError
      ? `${error.message}\n\n${USAGE}`
      : error instanceof Error
        ? error.message
        : error,
  );
  process.exit(error instanceof UsageError ? 2 : 1);
});
