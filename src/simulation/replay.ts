import { openStore, type Store } from "../store/database.ts";
import { systemClock } from "../platform/clock.ts";
import {
  ReplayApplication,
  replayEntries,
  type BundleDocument,
  type Divergence,
} from "../simulator/replay.ts";
import type { SimulatedCountry, SimulatedXmlVersion } from "../simulator/ledger/index.ts";
import type { SimulatedWebConnector } from "../simulator/web-connector.ts";
import { waitingReasonsOf } from "../support/waiting-history.ts";
import { startSystem, type System } from "../testing/system.ts";
import { ConnectionPlayer } from "./replay-connection.ts";
import {
  callOf,
  compareEnds,
  recordedEnd,
  replayedEnd,
  type BundleRequest,
  type ReplayedEnd,
} from "./replay-ends.ts";
import { recordedEventTypes, startReplayWebhooks, type ReplayWebhooks } from "./replay-webhooks.ts";

/**
 * `ledger-bridge replay bundle.json` (issue 28 item 2, decision 0049): a fresh service on an
 * in-memory store, one end user whose simulated Web Connector drives a {@link ReplayApplication}
 * over the bundle, and the bundle's calls made again through the public API, in the order they were
 * made, interleaved with the connection's recorded status changes. Each Request's end is compared
 * with the bundle's (replay-ends.ts): status, outcome, error code, the shape of its timeline,
 * recovered, its waiting reasons (read from the replay's status history as a bundle reads them)
 * and the event types of its webhooks; every document the bundle
 * does not hold is a divergence.
 *
 * What is replayed: the calls a developer made (typed operations with their recorded JSON input,
 * passthrough with its recorded message); the answers and the faults the bundle shows at the
 * application (an answer, an HRESULT, an answer lost and recovered); the connection going
 * `offline` (the connector silent) or `ledger_unavailable` (a session's `connectionError`: the
 * application closed, starting, behind a dialog, the file held) and coming back, in order with the
 * Requests, so a Request made meanwhile waits as it did (replay-connection.ts); the webhooks of
 * Request events, delivered by the service's dispatcher to a loopback receiver (replay-webhooks.ts);
 * and, with `recordedTiming`, each answer's recorded application time, spent on the replay's
 * service clock (`sleep`). What is not: background Requests (the change feed's and the mirror's:
 * their engines are not run), a refused login, a company file mismatch, connection events'
 * webhooks, and the real time between calls and check-ins.
 */
export interface ReplayedRequest {
  originalId: string;
  replayId: string | null;
  operationId: string;
  original: ReplayedEnd;
  replayed: ReplayedEnd | null;
  /** The replayed Request's application time (`timings.ledgerMs`), not compared. */
  replayedLedgerMs: number | null;
  same: boolean;
  /** Why it is not the same, one line each (empty when it is). */
  differences: string[];
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
  /**
   * How a recorded application time is waited (with `recordedTiming`): by default the replay's
   * service clock is moved on by it, so the replayed Request's `timings` show it without waiting
   * it in real time.
   */
  sleep?: (ms: number, sys: System) => Promise<void>;
  /** Real-time bound of one Request's replay. */
  requestTimeoutMs?: number;
}

const SETTLED = new Set(["succeeded", "failed", "canceled"]);

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
    webhooks: true,
    config: { CONNECTOR_HOLD_MS: "300", RATE_LIMIT_MAX: "1000000", WEBHOOK_ALLOW_LOOPBACK: "on" },
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
  let webhooks: ReplayWebhooks | null = null;
  /** Answers lost on the bundle's word: the connector then checks in again, as it did then. */
  let answersLost = 0;
  const sleep = options.sleep ?? ((ms: number, on: System) => on.fakeClock?.advance(ms) ?? Promise.resolve());
  try {
    const file = bundle.connection?.companyFile;
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
          ...(options.recordedTiming ? { sleep: (ms: number) => sleep(ms, sys) } : {}),
        })),
    });
    connector = eu.connector;
    const recordedWebhooks = recordedEventTypes(bundle.webhookDeliveries ?? []);
    const types = new Set([...recordedWebhooks.values()].flat());
    webhooks = await startReplayWebhooks(sys, eu.key, [...types]);
    const player = new ConnectionPlayer(sys, eu);
    eu.connector.start();
    await player.untilStatus("online", 60_000);

    /** Waits until the replayed Request ends as the original did (or settles). */
    const settle = async (original: BundleRequest["request"], replayId: string) => {
      let seen: BundleRequest["request"] | null = null;
      return until(`${original.id} settles`, options.requestTimeoutMs ?? 60_000, async () => {
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
    };
    const ended = new Map<string, BundleRequest["request"]>();
    /** Requests made while the connection was away: they end after it comes back. */
    let waiting: Array<{ original: BundleRequest["request"]; replayId: string }> = [];
    const settleWaiting = async () => {
      for (const w of waiting) ended.set(w.replayId, await settle(w.original, w.replayId));
      waiting = [];
    };
    const changes = bundle.connection?.statusChanges ?? [];
    let nextChange = 0;
    const playChangesUntil = async (at: string | null) => {
      while (nextChange < changes.length) {
        const change = changes[nextChange] as (typeof changes)[number];
        if (at !== null && change.changedAt > at) return;
        nextChange += 1;
        await player.play(change);
        if (player.awayReason === null) await settleWaiting();
      }
    };
    const calls = [...bundle.requests].sort((a, b) => a.request.createdAt.localeCompare(b.request.createdAt));
    const made: Array<{ entry: BundleRequest; replayId: string | null }> = [];
    for (const entry of calls) {
      const original = entry.request;
      if (entry.background === true || original.operationId.startsWith("internal.")) continue;
      const call = callOf(entry, bundle.endUser.id, eu.endUserId);
      if (typeof call === "string") {
        report.skipped.push({ originalId: original.id, reason: call });
        continue;
      }
      await playChangesUntil(original.createdAt);
      const response = await sys.call(call.method, call.path, {
        key: eu.key,
        endUserId: eu.endUserId,
        headers: { prefer: "respond-async" },
        ...(call.body === undefined ? {} : { body: call.body }),
      });
      const replayId = response.headers.get("svc-request-id");
      made.push({ entry, replayId });
      if (!replayId) continue;
      if (player.awayReason === null) {
        ended.set(replayId, await settle(original, replayId));
        continue;
      }
      // Away as it was then: the Request is seen waiting before the connection comes back.
      const reason = player.awayReason;
      await until(`${original.id} waits`, 10_000, async () => {
        const now = await readRequest(sys, eu.key, replayId);
        return now.waitingReason === reason || SETTLED.has(now.status);
      }).catch(() => undefined);
      waiting.push({ original, replayId });
    }
    await playChangesUntil(null);
    await player.comeBack();
    await settleWaiting();
    await webhooks?.settled(30_000);
    // As a bundle of the replay's service would show them (support/waiting-history.ts).
    const replayedChanges = await player.changes();
    for (const { entry, replayId } of made) {
      const last = replayId ? ended.get(replayId) : undefined;
      const original = recordedEnd(entry, recordedWebhooks);
      const replayed =
        replayId && last
          ? replayedEnd(last, original, {
              waitingReasons: waitingReasonsOf(last, replayedChanges, sys.clock.now()),
              webhooks: webhooks?.typesOf(replayId) ?? [],
            })
          : null;
      const differences = compareEnds(original, replayed);
      report.requests.push({
        originalId: entry.request.id,
        replayId,
        operationId: entry.request.operationId,
        original,
        replayed,
        replayedLedgerMs: last?.timings.ledgerMs ?? null,
        same: differences.length === 0,
        differences,
      });
    }
  } finally {
    await webhooks?.close();
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
