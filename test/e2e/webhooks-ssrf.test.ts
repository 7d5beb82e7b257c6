import assert from "node:assert/strict";
import { test } from "node:test";
import type { Resolver } from "../../src/webhooks/destination-guard.ts";
import type { Transport, TransportRequest } from "../../src/webhooks/transport.ts";
import { webhookRig, type DeliveryResource, type WebhookRig } from "./webhook-helpers.ts";

/**
 * The SSRF guard at every attempt (issue 9 item 4), through the dispatcher: endpoints whose names
 * resolve to non-public addresses are never contacted, and each attempt is recorded with
 * `blocked_destination: …`; a rebinding name server cannot redirect an attempt; the connection goes
 * to the checked address.
 */
const CASES: Array<[addresses: string[], label: string]> = [
  [["127.0.0.1"], "a loopback"],
  [["::1"], "a loopback"],
  [["::ffff:127.0.0.1"], "an IPv4-mapped form of 127.0.0.1 (loopback)"],
  [["10.1.2.3"], "a private"],
  [["172.20.0.1"], "a private"],
  [["192.168.0.10"], "a private"],
  [["::ffff:192.168.0.10"], "an IPv4-mapped form of 192.168.0.10 (private)"],
  [["fd00::10"], "a private (unique local)"],
  [["169.254.10.10"], "a link-local"],
  [["fe80::abcd"], "a link-local"],
  [["::ffff:169.254.10.10"], "an IPv4-mapped form of 169.254.10.10 (link-local)"],
  [["169.254.169.254"], "a cloud metadata"],
  [["fd00:ec2::254"], "a cloud metadata"],
  [["64:ff9b::a9fe:a9fe"], "a NAT64 form of 169.254.169.254 (cloud metadata)"],
  [["100.64.3.4"], "a carrier-grade NAT"],
  [["::ffff:0:100.64.3.4"], "an IPv4-translated form of 100.64.3.4 (carrier-grade NAT)"],
  [["224.0.0.251"], "a multicast"],
  [["ff05::2"], "a multicast"],
  [["0.0.0.0"], "an unspecified"],
  [["::"], "an unspecified"],
  [["198.51.100.20"], "a documentation"],
  [["2001:db8::20"], "a documentation"],
  [["2002:a00:1::"], "a 6to4 form of 10.0.0.1 (private)"],
  [["93.184.216.34", "10.9.8.7"], "a private"],
  [["2606:4700:4700::1111", "::ffff:127.0.0.2"], "an IPv4-mapped form of 127.0.0.2 (loopback)"],
];

interface StubTransport extends Transport {
  calls: TransportRequest[];
}

function stubTransport(): StubTransport {
  const calls: TransportRequest[] = [];
  return {
    calls,
    send: async (request) => {
      calls.push(request);
      return { statusCode: 200, headers: {}, bodyStart: "ok" };
    },
    close: async () => {},
  };
}

async function testDelivery(rig: WebhookRig, endpointId: string): Promise<DeliveryResource> {
  const res = await rig.api<DeliveryResource>("POST", `/v1/webhook-endpoints/${endpointId}/test`);
  assert.equal(res.status, 200);
  const [done] = await rig.untilDeliveries(endpointId, "attempted", (d) =>
    d.some((x) => x.id === res.body.id && x.attemptCount > 0),
  );
  assert.ok(done);
  return (await rig.deliveries(endpointId)).find((d) => d.id === res.body.id) ?? done;
}

test("every non-public destination, in IPv4 and IPv6 forms, is blocked at the attempt and recorded", async (t) => {
  const answers = new Map<string, string[]>();
  const resolve: Resolver = async (host) =>
    (answers.get(host) ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  const transport = stubTransport();
  const rig = await webhookRig(t, {
    config: { WEBHOOK_ALLOW_LOOPBACK: "off", WEBHOOK_ENDPOINT_LIMIT: "100" },
    dispatcher: { resolve, transport },
  });
  for (const [index, [addresses, label]] of CASES.entries()) {
    const host = `case-${index}.customer.com`;
    answers.set(host, addresses);
    const endpoint = await rig.createEndpoint({ url: `https://${host}/hooks` });
    const delivery = await testDelivery(rig, endpoint.id);
    const blocked = addresses.find((a) => a !== "93.184.216.34" && a !== "2606:4700:4700::1111");
    assert.deepEqual(
      delivery.attempts.map((a) => ({ ...a, at: null })),
      [
        {
          attempt: 1,
          at: null,
          statusCode: null,
          latencyMs: 0,
          responseExcerpt: null,
          error: `blocked_destination: ${host} resolves to ${blocked}, ${label} address`,
        },
      ],
      addresses.join(", "),
    );
    assert.equal(delivery.status, "pending", "a blocked attempt is retried later like any failure");
  }
  assert.equal(transport.calls.length, 0, "no request was ever sent");
});

test("a rebinding name server cannot move an attempt: it connects to the checked address, and the next attempt is checked again", async (t) => {
  const sequence = [["93.184.216.34"], ["127.0.0.1"]];
  let lookups = 0;
  const rebinding: Resolver = async () => {
    const addresses = sequence[Math.min(lookups, sequence.length - 1)] ?? [];
    lookups++;
    return addresses.map((address) => ({ address, family: 4 }));
  };
  const transport = stubTransport();
  const rig = await webhookRig(t, {
    config: { WEBHOOK_ALLOW_LOOPBACK: "off" },
    dispatcher: { resolve: rebinding, transport },
  });
  const endpoint = await rig.createEndpoint({ url: "https://rebind.customer.com/hooks" });
  const first = await testDelivery(rig, endpoint.id);
  assert.equal(first.status, "succeeded");
  assert.equal(lookups, 1, "one lookup per attempt");
  assert.equal(transport.calls.length, 1);
  assert.equal(transport.calls[0]?.address, "93.184.216.34", "the connection goes to the checked address");
  assert.equal(transport.calls[0]?.url.hostname, "rebind.customer.com");
  const second = await testDelivery(rig, endpoint.id);
  assert.equal(lookups, 2);
  assert.equal(
    second.attempts[0]?.error,
    "blocked_destination: rebind.customer.com resolves to 127.0.0.1, a loopback address",
  );
  assert.equal(transport.calls.length, 1, "the rebound attempt sent nothing");
});

test("the real transport connects to the checked address, never resolving the name itself", async (t) => {
  const rig = await webhookRig(t, {
    dispatcher: { resolve: async () => [{ address: "127.0.0.1", family: 4 }] },
  });
  const endpoint = await rig.createEndpoint();
  // Only the injected resolver knows this name answers on loopback; a lookup of its own by the
  // transport would not reach the receiver.
  const url = `http://pinned.example.com:${rig.receiver.port}/hooks`;
  await rig.h.deps.db.updateTable("webhook_endpoints").set({ url }).where("id", "=", endpoint.id).execute();
  const delivery = await rig.api<DeliveryResource>("POST", `/v1/webhook-endpoints/${endpoint.id}/test`);
  await rig.receiver.waitFor("pinned delivery", (r) => r.length === 1);
  assert.equal(rig.receiver.received[0]?.headers.host, `pinned.example.com:${rig.receiver.port}`);
  await rig.untilDeliveries(endpoint.id, "succeeded", (d) =>
    d.some((x) => x.id === delivery.body.id && x.status === "succeeded"),
  );
});
