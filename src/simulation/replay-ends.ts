import { parseDocument } from "../ledger/xml/parse.ts";
import { renderElementText } from "../ledger/xml/tree.ts";
import type { BundleDocument } from "../simulator/replay.ts";

/**
 * How a Request ended, as a replay compares it (issue 28 item 2, decision 0049): status, outcome,
 * error code, the statuses of its timeline, recovered, its waiting reasons (the bundle's
 * `waitingReasons`, support/waiting-history.ts) and the event types of its webhooks. A field the
 * bundle cannot show is null on both sides and not compared: waiting reasons of a bundle made
 * before they were recorded; webhooks when the bundle shows no Request event at all, or for a sync
 * call with none (its project's endpoints may not have asked for sync calls' events).
 */
export type BundleRequest = BundleDocument["requests"][number];

export interface ReplayedEnd {
  status: string;
  outcome: string;
  errorCode: string | null;
  timeline: string[];
  recovered: boolean;
  waitingReasons: string[] | null;
  webhooks: string[] | null;
}

/** The recorded end of `entry`; `recorded`: the bundle's Request event types by Request. */
export function recordedEnd(entry: BundleRequest, recorded: ReadonlyMap<string, string[]>): ReplayedEnd {
  const r = entry.request;
  const webhooks = recorded.get(r.id) ?? (recorded.size > 0 && r.mode !== "sync" ? [] : null);
  return {
    ...common(r),
    waitingReasons: entry.waitingReasons ?? null,
    webhooks,
  };
}

/** The replayed end, shown as far as the recorded one is (`like`). */
export function replayedEnd(
  r: BundleRequest["request"],
  like: ReplayedEnd,
  seen: { waitingReasons: string[]; webhooks: string[] },
): ReplayedEnd {
  return {
    ...common(r),
    waitingReasons: like.waitingReasons === null ? null : seen.waitingReasons,
    webhooks: like.webhooks === null ? null : seen.webhooks,
  };
}

const common = (r: BundleRequest["request"]) => ({
  status: r.status,
  outcome: r.outcome,
  errorCode: r.error?.code ?? null,
  timeline: r.timeline.map((e) => e.status),
  recovered: r.recovered,
});

const shown = (value: unknown): string => JSON.stringify(value);

/** One line per field that differs (none: the same end). */
export function compareEnds(original: ReplayedEnd, replayed: ReplayedEnd | null): string[] {
  if (replayed === null) return ["the call made no Request"];
  const differences: string[] = [];
  for (const field of Object.keys(original) as Array<keyof ReplayedEnd>)
    if (shown(original[field]) !== shown(replayed[field]))
      differences.push(`${field}: recorded ${shown(original[field])}, replayed ${shown(replayed[field])}`);
  return differences;
}

/** The HTTP call that made `entry`, addressed to `endUserId`; a reason when the bundle cannot say. */
export function callOf(
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
