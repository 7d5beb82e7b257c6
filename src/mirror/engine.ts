import type { Deps } from "../deps.ts";
import { ServiceError } from "../errors/service-error.ts";
import { typedOperation } from "../ledger/operations.ts";
import type { ResourceDefinition } from "../ledger/resources/definitions.ts";
import type { ParamValue } from "../ledger/typed/filters.ts";
import { findings, pollQueries, recordsOf, type PollQuery } from "../change-feed/poller.ts";
import { BackgroundWork } from "../requests/background-loop.ts";
import { settledRows } from "../requests/request-watch.ts";
import { submit } from "../requests/submit.ts";
import { prepareTypedCall } from "../requests/typed-call.ts";
import {
  advanceWritesThrough,
  claimDueMirrors,
  dropOlderGenerations,
  otherFillRunning,
  runningMirrors,
  updateClaimed,
  writeRecords,
  type MirrorClaim,
  type MirrorWork,
} from "../store/mirrors.ts";
import type { RequestRow } from "../store/requests.ts";
import { mirrorableGroups, storedFormParams } from "./groups.ts";
import { copyOf } from "./copy.ts";
import { dependentQueries, refreshOf, refreshQueries } from "./dependents.ts";
import { mirroredRecord, offsetOf, UnreadableRecord } from "./stored-records.ts";
import { MIRROR_CHANNEL, PAUSING_STATUSES } from "./settings.ts";

/**
 * The mirror engine (issue 26 item 2, decision 0044): fills each mirrored group and keeps it fresh,
 * as background Requests a connection's queue hands out after every developer's call.
 *
 *   filling ──fill pages (application cursor, one page in flight)──▶ last page ──catch-up poll──▶ ready
 *   ready ──poll every MIRROR_POLL_INTERVAL_SECONDS: modified since the window + deleted list──▶ ready
 *   a change it cannot apply (a record without ID or time, a window older than the deleted lists
 *   keep) ──▶ filling again (a new generation; the old copy is not served meanwhile)
 *
 * A fill walks the group with the application's cursor, one page in flight, so a caller's Request
 * waits behind at most one page. The fill's first page starts the fill's window: the catch-up poll
 * after the last page applies whatever changed while the pages were read, and only then is the copy
 * `ready`, as of the moment the poll's queries were sent (`as_of`: every change the application made
 * before it is in the copy). A poll's window reaches back `CHANGE_FEED_OVERLAP_SECONDS` before the
 * last `as_of` (the application's clock is not ours); what overlaps is applied again, unchanged.
 * Work is claimed with compare-and-set (`work_started_at`), so any number of instances may run the
 * engine; a Request already submitted is awaited by whichever instance finds the work running.
 */
export interface MirrorEngine {
  /** One pass: start due work, attach to running work (tests drive it; the loop calls it). */
  pass(): Promise<void>;
  stop(): Promise<void>;
}

/** Mirrors started or attached per pass. */
const MIRRORS_PER_PASS = 50;
/** How long the deleted lists keep a deletion (the application keeps them 90 days). */
const DELETED_LIST_RETENTION_MS = 90 * 24 * 3600 * 1000;
/** A claim that never recorded its Requests is released after this long (its instance died). */
const UNRECORDED_CLAIM_MS = 60_000;
/** A fill page or poll Request waits in the queue at most this long (the PC may be off for hours). */
const QUEUE_TTL_SECONDS = 86_400;

type Step = "fill" | "poll" | "paused";

function stepOf(work: MirrorWork): Step {
  if (work.connection_id === null || PAUSING_STATUSES.has(work.connection_status ?? "")) return "paused";
  if (work.state === "error") return "fill";
  return work.state === "filling" && work.fill_cursor !== FILL_DONE ? "fill" : "poll";
}

/** Refusals before queueing that no retry changes: the company file cannot answer the group. */
const PERMANENT_REFUSALS = new Set([
  "LEDGER_FIELD_UNSUPPORTED_BY_VERSION",
  "LEDGER_REGION_UNSUPPORTED",
  "LEDGER_OPERATION_UNSUPPORTED",
]);

/** `fill_cursor` once the last page is in: the catch-up poll comes next. */
export const FILL_DONE = "done";

function claimOf(work: MirrorWork): MirrorClaim {
  if (!work.work_started_at) throw new Error("mirror work without a claim");
  return { end_user_id: work.end_user_id, resource: work.resource, work_started_at: work.work_started_at };
}

export function startMirrorEngine(deps: Deps): MirrorEngine {
  const background = new BackgroundWork();
  const { shutdown } = background;
  const working = new Set<string>();
  const intervalMs = deps.config.MIRROR_POLL_INTERVAL_SECONDS * 1000;
  const now = (): Date => new Date(deps.clock.now());

  /**
   * Wakes the loop when `at` comes (a poll just scheduled on this instance): the next poll starts on
   * time instead of at the next tick, so the copy lags by one interval and a round trip.
   */
  const wakeAt = (at: Date): void => {
    const ms = at.getTime() - deps.clock.now();
    const due = ms > 0 ? deps.clock.sleep(ms, shutdown.signal) : Promise.resolve();
    void due.then(async () => {
      if (!shutdown.signal.aborted) await deps.store.notifier.notify(MIRROR_CHANNEL).catch(() => undefined);
    });
  };

  const track = (task: Promise<void>): void => background.track(task);

  /** Submits one background list Request for the mirror's end user; its ID. */
  const submitList = async (
    work: MirrorWork,
    resource: ResourceDefinition,
    values: ReadonlyMap<string, ParamValue>,
    mode: "call" | "whole",
  ): Promise<string> => {
    const operation = typedOperation(`${resource.operationPrefix}.list`);
    if (!operation) throw new Error(`${resource.operationPrefix} has no list`);
    const prepared = await prepareTypedCall(
      deps,
      operation,
      { query: Object.fromEntries(values) },
      {
        principal: { projectId: work.project_id, mode: work.is_test ? "test" : "live" },
        mode,
        background: true,
        call: {
          endUserId: work.end_user_id,
          endUserParam: "Svc-End-User-Id",
          async: true,
          timeoutSeconds: 60,
          queueTtlSeconds: QUEUE_TTL_SECONDS,
          idempotencyKey: null,
        },
      },
    );
    // A page repeated from its cursor (asked for twice across a restart) has no Request: the fill
    // cannot go on from it and starts again.
    if (prepared.kind !== "submit")
      throw new ServiceError("CURSOR_INVALID", {
        param: "cursor",
        message: "The fill's page was already served.",
      });
    return (await submit(deps, prepared.submission)).row.id;
  };

  /** One page of a fill: the group in the copy's form, from the cursor (null: the first page). */
  const submitFillPage = (
    work: MirrorWork,
    resource: ResourceDefinition,
    cursor: string | null,
  ): Promise<string> => {
    // A group the application cannot page (no iterator) is read whole in one answer.
    if (!resource.pages) return submitList(work, resource, storedFormParams(resource), "whole");
    const values = new Map<string, ParamValue>([
      ...storedFormParams(resource),
      ["limit", deps.config.MIRROR_FILL_PAGE_SIZE],
    ]);
    if (cursor) values.set("cursor", cursor);
    return submitList(work, resource, values, "call");
  };

  const release = (work: MirrorWork, changes: Parameters<typeof updateClaimed>[2]): Promise<boolean> =>
    updateClaimed(deps.db, claimOf(work), { ...changes, release: true }, now());

  /** Sends the mirror back to filling (a new generation), with why. */
  const refill = (work: MirrorWork, error: { code: string; message: string }): Promise<boolean> =>
    release(work, {
      state: "filling",
      fill_started_at: null,
      fill_cursor: null,
      fill_pages: 0,
      as_of: null,
      error,
      request_ids: [],
      next_work_at: now(),
    });

  /** Where a poll's window starts: the last `as_of` less the overlap (the application's clock is not ours). */
  const windowStartOf = (work: MirrorWork): number =>
    Math.max(
      (work.polled_until ?? work.fill_started_at ?? now()).getTime() -
        deps.config.CHANGE_FEED_OVERLAP_SECONDS * 1000,
      0,
    );

  const pollQueriesOf = (work: MirrorWork): PollQuery[] =>
    pollQueries([work.resource], windowStartOf(work), storedFormParams);

  /** Starts the claimed mirror's next step: submits its Requests and records them (null: released). */
  const start = async (work: MirrorWork): Promise<MirrorWork | null> => {
    const resource = mirrorableGroups().get(work.resource);
    const step = stepOf(work);
    if (!resource || step === "paused") {
      await release(work, { next_work_at: new Date(deps.clock.now() + deps.config.MIRROR_TICK_MS) });
      return null;
    }
    let ids: string[];
    let claimed = work;
    try {
      if (step === "fill") {
        if (work.fill_started_at === null || work.state === "error") {
          // One fill at a time per end user: fills walk application cursors, and a connection
          // keeps only a few open (a fourth would end another fill's).
          if (await otherFillRunning(deps.db, work)) {
            // Due again at once: the pass after the other fill's last page starts it.
            await release(work, { next_work_at: now() });
            return null;
          }
          // A new fill (or another try after an error): a new generation; the window of its
          // catch-up poll starts now.
          const fresh = {
            state: "filling" as const,
            generation: work.generation + 1,
            fill_started_at: now(),
            fill_cursor: null,
            fill_pages: 0,
          };
          if (!(await updateClaimed(deps.db, claimOf(work), fresh, now()))) return null;
          claimed = { ...work, ...fresh };
        }
        ids = [await submitFillPage(claimed, resource, claimed.fill_cursor)];
      } else {
        const started = work.polled_until ?? work.fill_started_at;
        if (started && deps.clock.now() - started.getTime() > DELETED_LIST_RETENTION_MS) {
          await refill(work, {
            code: "window_too_old",
            message: "The last poll is older than the application keeps its deleted lists: filled again.",
          });
          return null;
        }
        ids = [];
        for (const query of [...pollQueriesOf(work), ...dependentQueries(resource, windowStartOf(work))])
          ids.push(await submitList(work, query.resource, query.values, "whole"));
      }
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      // Refused before queueing (the connection gate, a cursor that is gone): try again later.
      deps.logger.info(
        { err: error, endUserId: work.end_user_id, resource: work.resource },
        "mirror work not queued",
      );
      const refused = errorOf(error);
      if (refused.code.startsWith("CURSOR_")) await refill(work, refused);
      else
        await release(work, {
          // The company file cannot answer this group (its version or region lacks it): an error
          // state until the connection changes; anything else is tried again.
          ...(PERMANENT_REFUSALS.has(refused.code) ? { state: "error" as const } : {}),
          next_work_at: new Date(deps.clock.now() + intervalMs),
          error: refused,
        });
      return null;
    }
    if (!(await updateClaimed(deps.db, claimOf(claimed), { request_ids: ids, work_kind: step }, now())))
      return null;
    return { ...claimed, request_ids: ids, work_kind: step };
  };

  /** Waits for the work's Requests, applies what they answered, and starts the next step. */
  const attend = async (work: MirrorWork): Promise<void> => {
    const name = `${work.end_user_id}/${work.resource}`;
    if (working.has(name)) return;
    working.add(name);
    try {
      for (let current: MirrorWork | null = work; current;) {
        const rows = await settledRows(deps, current.request_ids, shutdown.signal);
        if (!rows) return;
        if (current.work_kind === "fill") {
          // The next page, or the catch-up poll after the last one.
          const next = await applyPage(current, rows[0] ?? null);
          // Its next page already asked for, or the catch-up poll to start.
          current = next === null ? null : next.request_ids.length > 0 ? next : await start(next);
        } else {
          // Released, or still claimed with the Requests of a refresh to wait for.
          current = await applyPoll(current, rows);
        }
      }
    } finally {
      working.delete(name);
    }
  };

  /** Applies a fill page; the mirror to continue with (still claimed), or null when released. */
  const applyPage = async (work: MirrorWork, row: RequestRow | null): Promise<MirrorWork | null> => {
    if (!row || row.status !== "succeeded") {
      const code = (row?.error as { code?: string } | null)?.code ?? "MIRROR_PAGE_LOST";
      if (code.startsWith("CURSOR_")) {
        await refill(work, {
          code,
          message: "The application's cursor ended before the fill did: filled again.",
        });
      } else {
        await release(work, {
          request_ids: [],
          next_work_at: new Date(deps.clock.now() + deps.config.MIRROR_TICK_MS),
          error: { code, message: "A page of the fill did not succeed; it is asked again." },
        });
      }
      return null;
    }
    const result = row.result as { nextCursor?: string | null };
    let records;
    try {
      records = recordsOf(row).map(mirroredRecord);
    } catch (error) {
      if (!(error instanceof UnreadableRecord)) throw error;
      await release(work, {
        state: "error",
        error: error.reason,
        request_ids: [],
        next_work_at: new Date(deps.clock.now() + intervalMs),
      });
      return null;
    }
    const done = !result.nextCursor;
    const claim = claimOf(work);
    // The next page is asked for before this one is written: the store's work overlaps the round
    // trip. (Should this instance end in between, the page is read again from its cursor.)
    const resource = mirrorableGroups().get(work.resource);
    let nextPage: string | null = null;
    if (result.nextCursor && resource) {
      try {
        nextPage = await submitFillPage(work, resource, result.nextCursor);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        await refill(work, errorOf(error));
        return null;
      }
    }
    const changes = {
      fill_cursor: result.nextCursor ?? FILL_DONE,
      fill_pages: work.fill_pages + 1,
      utc_offset: work.utc_offset ?? offsetOf(recordsOf(row)),
      request_ids: nextPage ? [nextPage] : ([] as string[]),
      polled_until: done ? work.fill_started_at : work.polled_until,
    };
    const kept = await deps.db.transaction().execute(async (trx) => {
      if (!(await updateClaimed(trx, claim, changes, now()))) return false;
      await writeRecords(trx, work, work.generation, records);
      if (done) await dropOlderGenerations(trx, work, work.generation);
      return true;
    });
    // The last page is in: a fill of another group of the end user may start now.
    if (kept && done) await deps.store.notifier.notify(MIRROR_CHANNEL);
    return kept ? { ...work, ...changes } : null;
  };

  /**
   * Applies a poll's answers in one transaction; null (released) in every case, or the mirror
   * still claimed with the Requests of its refresh (values computed from other records) submitted.
   */
  const applyPoll = async (
    work: MirrorWork,
    rows: ReadonlyArray<RequestRow | null>,
  ): Promise<MirrorWork | null> => {
    const resource = mirrorableGroups().get(work.resource);
    const own = pollQueriesOf(work);
    const dependent = resource ? dependentQueries(resource, windowStartOf(work)) : [];
    const firstPhase = own.length + dependent.length;
    const refreshing = work.work_kind === "refresh" || work.work_kind === "reread";
    const failed = rows.find((r) => r?.status !== "succeeded");
    if (!resource || rows.length < firstPhase || failed !== undefined) {
      // The window stays: the next poll asks again from the same point.
      await release(work, {
        request_ids: [],
        next_work_at: new Date(deps.clock.now() + intervalMs),
        error: {
          code: (failed?.error as { code?: string } | null)?.code ?? "MIRROR_POLL_LOST",
          message: "A poll did not succeed; the next one asks again from the same point.",
        },
      });
      return null;
    }
    const settled = rows as RequestRow[];
    const listed = settled[0] ? recordsOf(settled[0]) : [];
    if (!refreshing && dependent.length > 0) {
      const transactions = settled[own.length] ? recordsOf(settled[own.length] as RequestRow) : [];
      const deletedTransactions = settled[own.length + 1]
        ? recordsOf(settled[own.length + 1] as RequestRow)
        : [];
      const copy = await copyOf(deps.db, work);
      const refresh = refreshOf(
        resource,
        transactions,
        deletedTransactions.map((r) => String(r.id)),
        copy.byId,
        // Read already, or gone: neither is asked for again (an ID list naming a deleted record fails).
        new Set([
          ...listed.map((r) => String(r.id)),
          ...findings(own, settled.slice(0, own.length)).deleted.map((d) => d.id),
        ]),
      );
      if (refresh.kind !== "none") {
        const ids = [...work.request_ids];
        for (const query of refreshQueries(resource, refresh))
          ids.push(await submitList(work, query.resource, query.values, "whole"));
        const kind = refresh.kind === "whole" ? "reread" : "refresh";
        if (!(await updateClaimed(deps.db, claimOf(work), { request_ids: ids, work_kind: kind }, now())))
          return null;
        return { ...work, request_ids: ids, work_kind: kind };
      }
    }
    let records;
    let again: ReturnType<typeof mirroredRecord>[];
    try {
      records = listed.map(mirroredRecord);
      again = settled.slice(firstPhase).flatMap((row) => recordsOf(row).map(mirroredRecord));
    } catch (error) {
      if (!(error instanceof UnreadableRecord)) throw error;
      await refill(work, error.reason);
      return null;
    }
    const { deleted } = findings(own, settled.slice(0, own.length));
    for (const gone of deleted) records.push({ id: gone.id, data: null, updatedMs: Number.MAX_SAFE_INTEGER });
    // As of the moment the application was first asked: every change before it is in the answers.
    const asOf = new Date(
      Math.min(...settled.slice(0, firstPhase).map((r) => (r.sent_at ?? r.completed_at ?? now()).getTime())),
    );
    const at = now();
    // The next poll is one interval after this one asked: answers that took long do not push the
    // freshness of the copy further back.
    const nextPollAt = new Date(Math.max(asOf.getTime() + intervalMs, at.getTime()));
    const whole = work.work_kind === "reread";
    await deps.db
      .transaction()
      .execute(async (trx) => {
        // A whole group read again replaces the copy: what it no longer lists is gone.
        const generation = whole ? work.generation + 1 : work.generation;
        const first = await writeRecords(trx, work, generation, whole ? [...records, ...again] : records);
        const second = whole ? first : await writeRecords(trx, work, generation, again);
        const moved = await updateClaimed(
          trx,
          claimOf(work),
          {
            state: "ready",
            generation,
            as_of: asOf,
            polled_until: asOf,
            error: null,
            request_ids: [],
            release: true,
            next_work_at: nextPollAt,
            utc_offset: work.utc_offset ?? offsetOf(listed),
            ...(first.changed + second.changed > 0 || whole || work.state !== "ready"
              ? { last_change_applied_at: at }
              : {}),
          },
          at,
        );
        if (!moved) throw new ClaimLost();
        if (whole) await dropOlderGenerations(trx, work, generation);
        await advanceWritesThrough(trx, work, { at: asOf, id: "" });
      })
      .then(() => wakeAt(nextPollAt))
      .catch((error: unknown) => {
        if (!(error instanceof ClaimLost)) throw error;
      });
    return null;
  };

  const pass = async (): Promise<void> => {
    const at = now();
    // Work whose waiter is gone (a restart, another instance's claim that died with it).
    for (const work of await runningMirrors(deps.db, MIRRORS_PER_PASS)) {
      if (working.has(`${work.end_user_id}/${work.resource}`)) continue;
      if (work.request_ids.length === 0) {
        if (work.work_started_at && at.getTime() - work.work_started_at.getTime() > UNRECORDED_CLAIM_MS)
          await release(work, { next_work_at: at });
        continue;
      }
      track(attend(work));
    }
    for (const work of await claimDueMirrors(deps.db, at, MIRRORS_PER_PASS)) {
      const started = await start(work);
      if (started) track(attend(started));
    }
  };

  background.start(deps, {
    channel: MIRROR_CHANNEL,
    tickMs: deps.config.MIRROR_TICK_MS,
    what: "mirror",
    pass,
  });
  return { pass, stop: () => background.stop() };
}

class ClaimLost extends Error {}

function errorOf(error: Error & { code: string }): { code: string; message: string } {
  return { code: String(error.code), message: error.message };
}
