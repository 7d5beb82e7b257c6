import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import { jsonEnumValue, nameTable } from "../ledger/resources/names.ts";
import { listFilters, type ParamValue } from "../ledger/typed/filters.ts";
import { typedOperation } from "../ledger/operations.ts";
import { newId } from "../platform/ids.ts";
import { BackgroundWork } from "../requests/background-loop.ts";
import { settledRows } from "../requests/request-watch.ts";
import { submit } from "../requests/submit.ts";
import { prepareTypedCall } from "../requests/typed-call.ts";
import {
  abandonPoll,
  claimDuePolls,
  completePoll,
  deleteSeenBefore,
  ensurePolls,
  insertSeen,
  runningPolls,
  seenRevisions,
  setPollRequests,
  type PollWork,
} from "../store/change-feed.ts";
import { EVENTS_CHANNEL, insertEventIfSubscribed } from "../store/events.ts";
import type { RequestRow } from "../store/requests.ts";
import type { Tenant } from "../store/tenant.ts";
import { CHANGE_FEED_CHANGES_PER_EVENT, type ChangeFeedChangesData } from "../webhooks/event-types.ts";
import { chunks, classify, type DeletedRecord, type ListedRecord } from "./changes.ts";
import { deletedListOf, resourceNamed, watchableResources } from "./resources.ts";

/**
 * The change feed poller (issue 9 item 5; decision 0010). For each enabled subscription and each
 * set-up connection of its project and mode, every `intervalMinutes` it queries the company file
 * through the typed list operations — one Request per watched group, filtered by `updatedAfter` —
 * and the deleted lists for the groups' delete types, as background Requests (a connection's queue
 * hands them out after every developer's call). The window starts where the last completed poll
 * started, less an overlap (`CHANGE_FEED_OVERLAP_SECONDS`: the application's times have whole
 * seconds and its clock is not ours); what overlaps is deduplicated by record ID and revision.
 * When every query of a poll succeeded, its `change_feed.changes` events, what it reported and the
 * window's move are written in one transaction; a poll with a failed query moves nothing and the
 * next poll asks again from the same point, so a change is never lost and never reported twice.
 */
export interface ChangeFeedPoller {
  /** One pass: start due polls, complete finished ones (tests drive it; the loop calls it). */
  pass(): Promise<void>;
  stop(): Promise<void>;
}

/** Wakes the poller when subscriptions change (their polls are set up at once). */
export const CHANGE_FEED_CHANNEL = "change_feed";

/** How long what was reported is remembered (longer than any overlap with a later window). */
const SEEN_RETENTION_MS = 24 * 3600 * 1000;
/** Polls started or completed per pass. */
const POLLS_PER_PASS = 50;

/** A query of one poll: what it lists, and how its records are read back. */
export interface PollQuery {
  resource: ResourceDefinition;
  values: Map<string, ParamValue>;
  /** The deleted list's query: the watched groups by their deleted-list type value. */
  deletedTypes?: Map<string, ResourceDefinition>;
}

/** Where a poll's window starts: the last poll's start less the overlap, never before coverage began. */
function windowStartOf(deps: Deps, poll: PollWork): number {
  const reachBack = poll.polled_until.getTime() - deps.config.CHANGE_FEED_OVERLAP_SECONDS * 1000;
  return Math.max(reachBack, poll.covered_from.getTime());
}

function tenantOf(poll: PollWork): Tenant {
  return { projectId: poll.project_id, mode: poll.is_test ? "test" : "live" };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");

/** The change feed's form of a group's records: inactive ones too; no line items (not needed to tell what changed). */
function changeFeedForm(resource: ResourceDefinition): Map<string, ParamValue> {
  const values = new Map<string, ParamValue>();
  const params = new Set(queryParams(resource));
  if (params.has("status")) values.set("status", "all");
  if (params.has("includeLineItems")) values.set("includeLineItems", false);
  return values;
}

/**
 * The poll's queries, in a fixed order (their Requests are matched back by position): per group the
 * list of records modified since `updatedAfterMs` in the form `formOf` gives, then the deleted lists.
 */
export function pollQueries(
  resources: readonly string[],
  updatedAfterMs: number,
  formOf: (resource: ResourceDefinition) => Map<string, ParamValue> = changeFeedForm,
): PollQuery[] {
  const watchable = watchableResources();
  const queries: PollQuery[] = [];
  const deleted = new Map<"deletedListObjects" | "deletedTransactions", Map<string, ResourceDefinition>>();
  for (const name of resources) {
    const resource = watchable.get(name);
    if (!resource) continue;
    const values = new Map<string, ParamValue>([["updatedAfter", iso(updatedAfterMs)], ...formOf(resource)]);
    queries.push({ resource, values });
    const list = deletedListOf(resource);
    if (list && resource.delType) {
      const types = deleted.get(list) ?? new Map<string, ResourceDefinition>();
      const element = list === "deletedListObjects" ? "ListDelType" : "TxnDelType";
      types.set(jsonEnumValue(nameTable(), element, resource.delType), resource);
      deleted.set(list, types);
    }
  }
  for (const [list, types] of deleted) {
    const resource = resourceNamed(list);
    if (!resource) continue;
    const typesParam = list === "deletedListObjects" ? "objectTypes" : "transactionTypes";
    queries.push({
      resource,
      values: new Map<string, ParamValue>([
        [typesParam, [...types.keys()]],
        ["deletedAfter", iso(updatedAfterMs)],
      ]),
      deletedTypes: types,
    });
  }
  return queries;
}

function queryParams(resource: ResourceDefinition): string[] {
  return listFilters(resource).params.map((p) => p.name);
}

/** The field of a deleted-list record that names the deleted record's type. */
const deletedTypeField = (list: string): string =>
  list === "deletedListObjects" ? "listType" : "transactionType";

/** Reads the records of a succeeded list Request (the list envelope's `data`). */
export function recordsOf(row: RequestRow): Record<string, unknown>[] {
  const result = row.result as { data?: unknown } | null;
  return Array.isArray(result?.data) ? (result.data as Record<string, unknown>[]) : [];
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** What the poll's answers say changed. */
export function findings(queries: readonly PollQuery[], rows: readonly RequestRow[]) {
  const listed: ListedRecord[] = [];
  const deleted: DeletedRecord[] = [];
  queries.forEach((query, index) => {
    const row = rows[index];
    if (!row) return;
    for (const record of recordsOf(row)) {
      const id = text(record.id);
      if (!id) continue;
      if (query.deletedTypes) {
        const type = text(record[deletedTypeField(query.resource.entry.resource)]);
        const resource = type === null ? undefined : query.deletedTypes.get(type);
        if (resource) deleted.push({ id, objectType: resource.entry.objectType });
      } else {
        listed.push({
          id,
          objectType: text(record.objectType) ?? query.resource.entry.objectType,
          revisionNumber: text(record.revisionNumber),
          createdAt: text(record.createdAt),
        });
      }
    }
  });
  return { listed, deleted };
}

export function startChangeFeed(deps: Deps): ChangeFeedPoller {
  const background = new BackgroundWork();
  const { shutdown } = background;
  const waiting = new Set<string>();

  const track = (task: Promise<void>): void => background.track(task);

  const startPoll = async (poll: PollWork): Promise<void> => {
    const startedAt = poll.started_at ?? new Date(deps.clock.now());
    const key = { ...poll, started_at: startedAt };
    const intervalMs = poll.interval_minutes * 60_000;
    const windowStart = windowStartOf(deps, poll);
    const queries = pollQueries(poll.resources, windowStart);
    const ids: string[] = [];
    try {
      for (const query of queries) {
        const operation = typedOperation(`${query.resource.operationPrefix}.list`);
        if (!operation) throw new Error(`${query.resource.operationPrefix} has no list`);
        const prepared = await prepareTypedCall(
          deps,
          operation,
          { query: Object.fromEntries(query.values) },
          {
            principal: tenantOf(poll),
            mode: "whole",
            background: true,
            call: {
              endUserId: poll.end_user_id,
              endUserParam: "Svc-End-User-Id",
              async: true,
              timeoutSeconds: 60,
              // A poll that cannot run within its interval gives way to the next one.
              queueTtlSeconds: Math.max(60, poll.interval_minutes * 60),
              idempotencyKey: null,
            },
          },
        );
        if (prepared.kind !== "submit") throw new Error("a whole list is always a Request");
        const outcome = await submit(deps, prepared.submission);
        ids.push(outcome.row.id);
      }
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      deps.logger.info(
        { err: error, connectionId: poll.connection_id },
        "change feed poll could not be queued",
      );
      await abandonPoll(deps.db, key, new Date(deps.clock.now() + intervalMs));
      return;
    }
    if (!(await setPollRequests(deps.db, key, ids))) return;
    track(awaitPoll({ ...poll, started_at: startedAt, request_ids: ids }));
  };

  /** Waits (real time, woken by the Requests settling) until the poll's Requests settle, then completes it. */
  const awaitPoll = async (poll: PollWork): Promise<void> => {
    const name = `${poll.subscription_id}/${poll.connection_id}`;
    if (waiting.has(name)) return;
    waiting.add(name);
    try {
      const rows = await settledRows(deps, poll.request_ids, shutdown.signal);
      if (rows) await completeOrAbandon(poll, rows);
    } finally {
      waiting.delete(name);
    }
  };

  const completeOrAbandon = async (poll: PollWork, rows: ReadonlyArray<RequestRow | null>): Promise<void> => {
    if (!poll.started_at) return;
    const key = { ...poll, started_at: poll.started_at };
    const nextPollAt = new Date(poll.started_at.getTime() + poll.interval_minutes * 60_000);
    const windowStart = windowStartOf(deps, poll);
    const queries = pollQueries(poll.resources, windowStart);
    const succeeded = rows.length === queries.length && rows.every((r) => r?.status === "succeeded");
    if (!succeeded) {
      // The window stays: the next poll asks again from the same point.
      await abandonPoll(deps.db, key, nextPollAt);
      return;
    }
    const { listed, deleted } = findings(queries, rows as RequestRow[]);
    const polledAt = new Date(deps.clock.now());
    const written = await deps.db.transaction().execute(async (trx) => {
      if (!(await completePoll(trx, key, nextPollAt))) return 0;
      const seen = await seenRevisions(trx, key, [...listed.map((r) => r.id), ...deleted.map((r) => r.id)]);
      const { changes, seen: remember } = classify(listed, deleted, seen, windowStart);
      await insertSeen(trx, key, remember, polledAt);
      let events = 0;
      for (const part of chunks(changes, CHANGE_FEED_CHANGES_PER_EVENT)) {
        const data: ChangeFeedChangesData = {
          objectType: "change_feed_changes",
          subscriptionId: poll.subscription_id,
          endUserId: poll.end_user_id,
          connectionId: poll.connection_id,
          updatedAfter: new Date(windowStart).toISOString(),
          polledAt: polledAt.toISOString(),
          changes: part,
        };
        const inserted = await insertEventIfSubscribed(trx, {
          id: newId("event"),
          projectId: poll.project_id,
          isTest: poll.is_test,
          type: "change_feed.changes",
          data: JSON.stringify(data),
          at: polledAt,
        });
        if (inserted) events += 1;
      }
      return events;
    });
    if (written > 0) await deps.store.notifier.notify(EVENTS_CHANNEL);
  };

  const pass = async (): Promise<void> => {
    const now = new Date(deps.clock.now());
    await ensurePolls(deps.db, now);
    // Polls whose waiter is gone (a restart, another instance's claim that died with it).
    for (const poll of await runningPolls(deps.db, POLLS_PER_PASS)) {
      const name = `${poll.subscription_id}/${poll.connection_id}`;
      if (waiting.has(name)) continue;
      if (poll.request_ids.length === 0) {
        // Claimed but its Requests were never recorded: start over at once.
        if (
          poll.started_at &&
          now.getTime() - poll.started_at.getTime() > deps.config.CHANGE_FEED_TICK_MS * 3
        )
          await abandonPoll(deps.db, { ...poll, started_at: poll.started_at }, now);
        continue;
      }
      track(awaitPoll(poll));
    }
    for (const poll of await claimDuePolls(deps.db, now, POLLS_PER_PASS)) await startPoll(poll);
    await deleteSeenBefore(deps.db, new Date(now.getTime() - SEEN_RETENTION_MS));
  };

  background.start(deps, {
    channel: CHANGE_FEED_CHANNEL,
    tickMs: deps.config.CHANGE_FEED_TICK_MS,
    what: "change feed",
    pass,
  });
  return { pass, stop: () => background.stop() };
}
