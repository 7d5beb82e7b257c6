import { openStore, type Store } from "../store/database.ts";
import { systemClock } from "../platform/clock.ts";
import { parseDocument } from "../ledger/xml/parse.ts";
import { renderElementText } from "../ledger/xml/tree.ts";
import {
  ReplayApplication,
  replayEntries,
  type BundleDocument,
  type Divergence,
} from "../simulator/replay.ts";
import type { SimulatedCountry, SimulatedXmlVersion } from "../simulator/ledger/index.ts";
import type { SimulatedWebConnector } from "../simulator/web-connector.ts";
import { startSystem, type System } from "../testing/system.ts";

/**
 * `ledger-bridge replay bundle.json` (issue 28 item 2, decision 0049): a fresh service on an
 * in-memory store, one end user whose simulated Web Connector drives a {@link ReplayApplication}
 * over the bundle, and the bundle's calls made again through the public API, one after the other
 * as they were made. Each Request's end (status, outcome, error code, the shape of its timeline) is
 * compared with the bundle's; every document the bundle does not hold is a divergence.
 *
 * What is replayed: the calls a developer made (typed operations with their recorded JSON input,
 * passthrough with its recorded message), the answers and the faults the bundle shows at the
 * application (an answer, an HRESULT, an answer lost and recovered). What is not: background
 * Requests (the change feed's and the mirror's: their engines are not run), connection-level
 * faults that leave no Request (a connector offline for hours, a refused login), the recorded
 * timing unless asked for, and webhooks (the replay has no endpoint).
 */
export interface ReplayedEnd {
  status: string;
  outcome: string;
  errorCode: string | null;
  timeline: string[];
  recovered: boolean;
}

export interface ReplayedRequest {
  originalId: string;
  replayId: string | null;
  operationId: string;
  original: ReplayedEnd;
  replayed: ReplayedEnd | null;
  same: boolean;
}

export interface ReplayReport {
  objectType: "replay_report";
  bundleEndUserId: string;
  requests: ReplayedRequest[];
  skipped: Array<{ originalId: string; reason: string }>;
  divergences: Divergence[];
  /** Bundle Requests whose document the service never sent. */
  unplayed: string[];
  /** Every Request ended as recorded and nothing diverged. */
  ok: boolean;
}

export interface ReplayOptions {
  /** The store of the replay's service (an in-memory one by default). */
  store?: Store;
  /** Waits each answer the recorded application time (off by default). */
  recordedTiming?: boolean;
  /** Real-time bound of one Request's replay. */
  requestTimeoutMs?: number;
}

type BundleRequest = BundleDocument["requests"][number];
const SETTLED = new Set(["succeeded", "failed", "canceled"]);

const endOf = (r: BundleRequest["request"]): ReplayedEnd => ({
  status: r.status,
  outcome: r.outcome,
  errorCode: r.error?.code ?? null,
  timeline: r.timeline.map((e) => e.status),
  recovered: r.recovered,
});

const sameEnd = (a: ReplayedEnd, b: ReplayedEnd): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The HTTP call that made `entry`, addressed to `endUserId`; null when the bundle cannot say. */
function callOf(
  entry: BundleRequest,
  bundleEndUserId: string,
  endUserId: string,
): { method: string; path: string; body: unknown } | string {
  const { request, messages } = entry;
  const path = request.path.split(bundleEndUserId).join(endUserId);
  const input = messages.input.json;
  if (path.includes("/passthrough/")) {
    const msgs = parseDocument(messages.message.xml ?? "")?.root.children[0];
    if (msgs?.name !== "QBXMLMsgsRq") return "no message recorded";
    return { method: request.method, path, body: msgs.children.map((c) => renderElementText(c)).join("") };
  }
  if (input === null && request.method !== "GET") return "no input recorded";
  const query = (input?.query ?? {}) as Record<string, unknown>;
  const search = new URLSearchParams(
    Object.entries(query).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  ).toString();
  return { method: request.method, path: search ? `${path}?${search}` : path, body: input?.body };
}

async function readRequest(sys: System, key: string, id: string): Promise<BundleRequest["request"]> {
  const response = await sys.call("GET", `/v1/requests/${id}`, { key });
  return (await response.json()) as BundleRequest["request"];
}

/** Replays `bundle` and reports how each Request ended against how it ended then. */
export async function replayBundle(
  bundle: BundleDocument,
  options: ReplayOptions = {},
): Promise<ReplayReport> {
  if (bundle.bundleVersion !== 1)
    throw new Error(`bundleVersion ${bundle.bundleVersion} is not one this replay reads (1)`);
  const store = options.store ?? (await openStore({}));
  const sys = await startSystem(null, {
    store,
    config: { CONNECTOR_HOLD_MS: "300", RATE_LIMIT_MAX: "1000000" },
  });
  const report: ReplayReport = {
    objectType: "replay_report",
    bundleEndUserId: bundle.endUser.id,
    requests: [],
    skipped: [],
    divergences: [],
    unplayed: [],
    ok: false,
  };
  let connector: SimulatedWebConnector | null = null;
  let replay: ReplayApplication | null = null;
  /** Answers lost on the bundle's word: the connector then checks in again, as it did then. */
  let answersLost = 0;
  try {
    const file = (
      bundle as { connection?: { companyFile?: { xmlVersion?: string; country?: string } } | null }
    ).connection?.companyFile;
    const eu = await sys.connectEndUser({
      companyName: (bundle.endUser as { companyName?: string }).companyName ?? "Replayed Co",
      application: {
        ...(file?.xmlVersion ? { xmlVersion: file.xmlVersion as SimulatedXmlVersion } : {}),
        ...(file?.country ? { country: file.country as SimulatedCountry } : {}),
      },
      connectorApplication: (application) =>
        (replay = new ReplayApplication({
          fallback: application,
          entries: replayEntries(bundle),
          loseAnswer: (write) => {
            answersLost += 1;
            connector?.setFault(
              write
                ? { kind: "lose_answer_after_write" }
                : { kind: "send_again_without_answer", match: "read" },
            );
          },
          ...(options.recordedTiming
            ? { sleep: (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 60_000))) }
            : {}),
        })),
    });
    connector = eu.connector;
    eu.connector.start();
    await until("the replayed connection is online", 60_000, async () => {
      const user = (await (
        await sys.call("GET", `/v1/end-users/${eu.endUserId}`, { key: eu.key })
      ).json()) as {
        integrationConnections: Array<{ status: string }>;
      };
      return user.integrationConnections[0]?.status === "online";
    });
    const calls = [...bundle.requests].sort(
      (a, b) =>
        (a.request as { createdAt?: string }).createdAt?.localeCompare(
          (b.request as { createdAt?: string }).createdAt ?? "",
        ) ?? 0,
    );
    for (const entry of calls) {
      const original = entry.request;
      if ((original as { background?: boolean }).background || original.operationId.startsWith("internal."))
        continue;
      const call = callOf(entry, bundle.endUser.id, eu.endUserId);
      if (typeof call === "string") {
        report.skipped.push({ originalId: original.id, reason: call });
        continue;
      }
      const response = await sys.call(call.method, call.path, {
        key: eu.key,
        endUserId: eu.endUserId,
        headers: { prefer: "respond-async" },
        ...(call.body === undefined ? {} : { body: call.body }),
      });
      const replayId = response.headers.get("svc-request-id");
      let replayed: ReplayedEnd | null = null;
      if (replayId) {
        let seen: BundleRequest["request"] | null = null;
        const last = await until(`${original.id} settles`, options.requestTimeoutMs ?? 60_000, async () => {
          const now = await readRequest(sys, eu.key, replayId);
          seen = now;
          if (SETTLED.has(now.status)) return now;
          if (now.status === "outcome_unknown" && original.status === "outcome_unknown") return now;
          // After a lost answer the next check-in (joined while one runs) starts the recovery.
          if (answersLost > 0 && (now.status === "sent" || now.status === "outcome_unknown"))
            void eu.connector.checkInNow();
          return null;
        }).catch((error: unknown) => {
          const last: BundleRequest["request"] | null = seen;
          throw new Error(
            `${error instanceof Error ? error.message : String(error)} (${original.operationId}: ${last?.status ?? "?"}, ${last?.waitingReason ?? "no waiting reason"}, ${JSON.stringify(last?.timeline ?? [])})`,
          );
        });
        replayed = endOf(last);
      }
      report.requests.push({
        originalId: original.id,
        replayId,
        operationId: original.operationId,
        original: endOf(original),
        replayed,
        same: replayed !== null && sameEnd(endOf(original), replayed),
      });
    }
  } finally {
    await sys.close();
    if (!options.store) await store.close();
  }
  const played = replay as ReplayApplication | null;
  report.divergences = played?.divergences ?? [];
  report.unplayed = played?.unplayed ?? [];
  report.ok = report.divergences.length === 0 && report.requests.every((r) => r.same);
  return report;
}

async function until<T>(what: string, ms: number, check: () => Promise<T | null | false>): Promise<T> {
  const started = systemClock.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (systemClock.now() - started > ms) throw new Error(`replay: timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
