import assert from "node:assert/strict";
import { test } from "node:test";
import { startSystem, type System } from "../../src/testing/system.ts";
import {
  startWebhookReceiver,
  verifySignature,
  type ReceivedWebhook,
} from "../../src/testing/webhook-receiver.ts";
import type { ChangeFeedChangesData } from "../../src/webhooks/event-types.ts";
import {
  asOtherUser,
  bringOnline,
  eventually,
  json,
  otherUserOf as otherUser,
  xmlText as tag,
} from "./helpers.ts";
import { SYSTEM_CONFIG, endpointFor, ofType } from "./webhook-helpers.ts";

/**
 * The change feed end to end (issue 9 item 5): another user of the company file (a session of its
 * own on the simulated application, not through the service) creates, updates and deletes
 * records; within one interval of the service clock the poller's background Requests find them
 * through the typed list operations and the deleted lists, and `change_feed.changes` events carry
 * each change once. Later polls overlap the earlier windows and report nothing again.
 */
const INTERVAL_MS = 60_000;

type Change = ChangeFeedChangesData["changes"][number];

/**
 * The changes received, as a receiver sees them after deduplicating deliveries by `webhook-id`
 * (delivery is at least once: an attempt cut by the fake clock's jumps is sent again).
 */
const changesIn = (received: ReceivedWebhook[]): Change[] => {
  const events = new Map(ofType(received, "change_feed.changes").map((w) => [w.event.id, w]));
  return [...events.values()].flatMap((w) => (w.event.data as unknown as ChangeFeedChangesData).changes);
};

/** Moves the service clock one interval and waits until the poll it starts has completed. */
async function oneInterval(sys: System, subscriptionId: string, connectionId: string): Promise<void> {
  const before = await pollState(sys, subscriptionId, connectionId);
  await sys.fakeClock?.advance(INTERVAL_MS);
  await eventually("the poll completed", async () => {
    const now = await pollState(sys, subscriptionId, connectionId);
    return (
      now && before && now.polled_until.getTime() > before.polled_until.getTime() && now.started_at === null
    );
  });
}

async function pollState(sys: System, subscriptionId: string, connectionId: string) {
  return sys.deps.db
    .selectFrom("change_feed_polls")
    .selectAll()
    .where("subscription_id", "=", subscriptionId)
    .where("connection_id", "=", connectionId)
    .executeTakeFirst();
}

test("records created, updated and deleted by another user appear as events within one interval, none twice", async (t) => {
  const sys = await startSystem(t, {
    ...SYSTEM_CONFIG,
    changeFeed: true,
    config: { ...SYSTEM_CONFIG.config, CHANGE_FEED_TICK_MS: "5000", CHANGE_FEED_OVERLAP_SECONDS: "120" },
  });
  const receiver = await startWebhookReceiver(t);
  const endpoint = await endpointFor(sys, receiver.url, { eventTypes: ["change_feed.changes", "request.*"] });
  const eu = await sys.connectEndUser({ companyName: "Feed Co" });
  await bringOnline(sys, eu);

  // Before the subscription: a customer with no transactions, deleted later.
  const other = await otherUser(sys, eu);
  const doomed = tag(
    await asOtherUser(
      other,
      `<CustomerAddRq><CustomerAdd><Name>Feed Doomed</Name></CustomerAdd></CustomerAddRq>`,
    ),
    "ListID",
  );

  // The simulated application keeps real time and the service a fake clock: the service clock is
  // brought just past the application's, so that the seeded sample records are history.
  await sys.fakeClock?.advance(Math.max(0, Date.now() - sys.clock.now()) + 1000);
  const created = await sys.call("POST", "/v1/change-feed-subscriptions", {
    body: { resources: ["customers", "invoices"], intervalMinutes: INTERVAL_MS / 60_000 },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const subscription = await json<{ id: string; resources: string[] }>(created);
  assert.deepEqual(subscription.resources, ["customers", "invoices"]);
  // The poller gives the connection a poll state at its next pass.
  await eventually(
    "the connection has a poll",
    async () => (await pollState(sys, subscription.id, eu.connectionId)) !== undefined,
  );

  // The application's times have whole seconds: the other user starts once its clock shows a
  // second at or after the subscription's start.
  const coveredFrom = sys.clock.now();
  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(0, Math.ceil(coveredFrom / 1000) * 1000 + 50 - Date.now())),
  );
  const existing = await asOtherUser(
    other,
    `<CustomerQueryRq><MaxReturned>1</MaxReturned></CustomerQueryRq>`,
  );
  const [first] = [
    ...existing.matchAll(/<ListID>([^<]*)<\/ListID>[\s\S]*?<EditSequence>([^<]*)<\/EditSequence>/g),
  ];
  assert.ok(first, "the sample file has customers");
  const added = await asOtherUser(
    other,
    `<CustomerAddRq><CustomerAdd><Name>Feed Newcomer</Name></CustomerAdd></CustomerAddRq>`,
  );
  const addedId = tag(added, "ListID");
  const modified = await asOtherUser(
    other,
    `<CustomerModRq><CustomerMod><ListID>${first[1]}</ListID><EditSequence>${first[2]}</EditSequence><Phone>555-0100</Phone></CustomerMod></CustomerModRq>`,
  );
  const modifiedRevision = tag(modified, "EditSequence");
  await asOtherUser(
    other,
    `<ListDelRq><ListDelType>Customer</ListDelType><ListID>${doomed}</ListID></ListDelRq>`,
  );

  await oneInterval(sys, subscription.id, eu.connectionId);
  const wanted: Change[] = [
    {
      id: addedId,
      objectType: "ledger_customer",
      revisionNumber: tag(added, "EditSequence"),
      changeKind: "created",
    },
    {
      id: first[1] as string,
      objectType: "ledger_customer",
      revisionNumber: modifiedRevision,
      changeKind: "updated",
    },
    { id: doomed, objectType: "ledger_customer", revisionNumber: null, changeKind: "deleted" },
  ];
  await receiver.waitFor("the changes", (r) => changesIn(r).length >= wanted.length);
  const sortById = (a: Change, b: Change): number => a.id.localeCompare(b.id);
  assert.deepEqual(changesIn(receiver.received).sort(sortById), [...wanted].sort(sortById));
  for (const webhook of receiver.received) verifySignature(endpoint.secret, webhook);
  const [event] = ofType(receiver.received, "change_feed.changes");
  const data = event?.event.data as unknown as ChangeFeedChangesData;
  assert.equal(data.subscriptionId, subscription.id);
  assert.equal(data.connectionId, eu.connectionId);
  assert.equal(data.endUserId, eu.endUserId);

  // The next poll overlaps the first window: nothing is reported twice.
  await oneInterval(sys, subscription.id, eu.connectionId);
  assert.equal(changesIn(receiver.received).length, wanted.length, "no change reported twice");

  // A further change to the new record is one update. Revision numbers have whole seconds in the
  // application: the other user waits for its next second (the service's clock is fake, so the
  // polls above may have taken no time at all).
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 50));
  const again = await asOtherUser(
    other,
    `<CustomerModRq><CustomerMod><ListID>${addedId}</ListID><EditSequence>${tag(added, "EditSequence")}</EditSequence><Phone>555-0199</Phone></CustomerMod></CustomerModRq>`,
  );
  await oneInterval(sys, subscription.id, eu.connectionId);
  await receiver.waitFor("the update", (r) => changesIn(r).length === wanted.length + 1);
  assert.deepEqual(changesIn(receiver.received).at(-1), {
    id: addedId,
    objectType: "ledger_customer",
    revisionNumber: tag(again, "EditSequence"),
    changeKind: "updated",
  });
  assert.deepEqual(
    receiver.received.filter((w) => w.event.type.startsWith("request.")),
    [],
    "the poller's background Requests send no request events",
  );
  other.end();
});
