import { XMLBuilder } from "fast-xml-parser";

/**
 * The `.qwc` file the end user adds to the Web Connector (ledger-protocol §1.5). One file per
 * company file: AppName carries the company name so the connector treats each as its own app.
 */
export interface QwcOptions {
  appName: string;
  appDescription: string;
  connectorUrl: string;
  supportUrl: string;
  userName: string;
  ownerId: string;
  fileId: string;
  runEverySeconds: number;
  isReadOnly: boolean;
}

const builder = new XMLBuilder({ format: true, indentBy: "  ", suppressEmptyNode: false });

export function qwcDocument(options: QwcOptions): string {
  const scheduler =
    options.runEverySeconds % 60 === 0
      ? { RunEveryNMinutes: String(options.runEverySeconds / 60) }
      : { RunEveryNSeconds: String(options.runEverySeconds) };
  const body = builder.build({
    QBWCXML: {
      AppName: options.appName,
      AppID: "",
      AppURL: options.connectorUrl,
      AppDescription: options.appDescription,
      AppSupport: options.supportUrl,
      UserName: options.userName,
      OwnerID: options.ownerId,
      FileID: options.fileId,
      QBType: "QBFS",
      Scheduler: scheduler,
      IsReadOnly: String(options.isReadOnly),
      UnattendedModePref: "umpOptional",
      PersonalDataPref: "pdpOptional",
    },
  });
  return `<?xml version="1.0" encoding="utf-8"?>\n${body}`;
}
