import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import { type Send, WebhookDeliveries } from '../../src/webhooks/deliveries.ts';
import { type DeliveryStore, MemoryDeliveryStore, type NewDelivery } from '../../src/webhooks/delivery-store.ts';
import { RedisEndpointStore, type WebhookEndpoint } from '../../src/webhooks/endpoint-store.ts';
import { RedisDeliveryStore } from '../../src/webhooks/redis-delivery-store.ts';
import { newSecret } from '../../src/webhooks/signature.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/subscriptions.ts';

/*
 * The delivery queue's stores, in memory and on Redis, held to one contract: lanes served head
 * first, claims, settling, pausing, listings. On Redis, a replica that dies mid-attempt leaves its
 * claim to lapse, and another replica sends the delivery, same webhook-id.
 */

let made = 0;
const delivery = (fields: Partial<NewDelivery> = {}): NewDelivery => ({
  endpointId: 'ep_1',
  licenseeId: '1001',
  messageId: `msg_${++made}`,
  type: 'reservation.changed',
  body: '{}',
  ...fields,
});

function contract(make: () => Promise<DeliveryStore>) {
  it('serves each lane head first, one claim at a time, and the next once the head is settled', async () => {
    const store = await make();
    const now = Date.now();
    const a1 = (await store.add(delivery({ lane: 'a' }), now)).delivery;
    const a2 = (await store.add(delivery({ lane: 'a' }), now)).delivery;
    const b1 = (await store.add(delivery({ lane: 'b' }), now)).delivery;
    expect((await store.due(now, 10)).map((d) => d.id).sort()).toEqual([a1.id, b1.id].sort());
    expect(await store.claim(a1.id, now)).toBe(true);
    expect(await store.claim(a1.id, now)).toBe(false);
    expect((await store.due(now, 10)).map((d) => d.id)).toEqual([b1.id]);

    await store.settle(
      a1.id,
      { at: now, status: 500, latencyMs: 1 },
      { status: 'PENDING', nextAttemptAt: now + 5_000 },
    );
    expect((await store.due(now, 10)).map((d) => d.id)).toEqual([b1.id]);
    expect(await store.nextDue()).toBe(now);
    expect((await store.due(now + 5_000, 10)).map((d) => d.id).sort()).toEqual([a1.id, b1.id].sort());

    expect(await store.claim(a1.id, now + 5_000)).toBe(true);
    await store.settle(a1.id, { at: now + 5_000, status: 204, latencyMs: 1 }, { status: 'SUCCEEDED' });
    expect((await store.due(now + 5_000, 10)).map((d) => d.id).sort()).toEqual([a2.id, b1.id].sort());
    expect((await store.get('1001', a1.id))?.attempts.map((attempt) => attempt.status)).toEqual([500, 204]);
    expect(await store.get('1002', a1.id)).toBeUndefined();
    expect(await store.backlog('ep_1')).toEqual({ pending: 2, oldestCreatedAt: now });
  });

  it('queues a message once unless asked again, holds a paused endpoint, and lists newest first by status', async () => {
    const store = await make();
    const now = Date.now();
    const first = await store.add(delivery({ endpointId: 'ep_2', messageId: 'msg_same' }), now);
    const twice = await store.add(delivery({ endpointId: 'ep_2', messageId: 'msg_same' }), now);
    expect(twice).toMatchObject({ added: false, delivery: { id: first.delivery.id } });
    expect(await store.has('ep_2', 'msg_same')).toBe(true);
    expect(await store.has('ep_2', 'msg_other')).toBe(false);
    expect(await store.has('ep_3', 'msg_same')).toBe(false);
    const again = await store.add(delivery({ endpointId: 'ep_2', messageId: 'msg_same' }), now, true);
    expect(again.added).toBe(true);

    await store.pause('ep_2');
    expect(await store.due(now, 10)).toEqual([]);
    expect(await store.nextDue()).toBeUndefined();
    await store.resume('ep_2');
    expect(await store.due(now, 10)).toHaveLength(2);

    expect(await store.claim(first.delivery.id, now)).toBe(true);
    await store.settle(first.delivery.id, undefined, { status: 'FAILED' });
    const listed = await store.list('ep_2', { first: 10 });
    expect(listed.map((d) => d.id)).toEqual([again.delivery.id, first.delivery.id]);
    expect((await store.list('ep_2', { first: 10, status: 'FAILED' })).map((d) => d.id)).toEqual([first.delivery.id]);
    expect((await store.list('ep_2', { first: 10, after: listed[0]!.position })).map((d) => d.id)).toEqual([
      first.delivery.id,
    ]);

    await store.dropEndpoint('ep_2');
    expect(await store.list('ep_2', { first: 10 })).toEqual([]);
    expect(await store.due(now, 10)).toEqual([]);
  });
}

describe('MemoryDeliveryStore, the contract', () => {
  contract(async () => new MemoryDeliveryStore());
});

const serverPath = redisServerOrSkip();

describe.skipIf(!serverPath)('RedisDeliveryStore', () => {
  let redis: TestRedis;
  const connections: RedisConnection[] = [];
  let prefixes = 0;
  beforeAll(async () => {
    redis = await startRedis(serverPath!);
  }, 30_000);
  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.close()));
    await redis?.close();
  });
  const connect = async (prefix: string) => {
    const connection = await openRedis({ url: redis.url, prefix });
    connections.push(connection);
    return connection;
  };

  contract(async () => new RedisDeliveryStore(await connect(`deliveries-${++prefixes}:`)));

  it('a replica dies mid-attempt: its claim lapses and another replica delivers, with the same webhook-id', async () => {
    const prefix = `deliveries-${++prefixes}:`;
    const [one, two] = [await connect(prefix), await connect(prefix)];
    const endpoint: WebhookEndpoint = {
      id: 'ep_kill',
      licenseeId: '1001',
      url: 'https://receiver.example/hooks',
      eventIds: [5003],
      kinds: ['CREATED', 'CHANGED', 'CANCELLED'],
      description: null,
      secrets: [{ value: newSecret() }],
      enabled: true,
      disabledReason: null,
      failingSince: null,
      createdAt: Date.now(),
    };
    await new RedisEndpointStore(one).save(endpoint);
    const sent: { replica: string; id: string | undefined }[] = [];
    // The first replica's attempt never ends: it died with the request in flight.
    const dying: Send = async (_url, _body, headers) => {
      sent.push({ replica: 'one', id: headers['webhook-id'] });
      return new Promise(() => {});
    };
    const alive: Send = async (_url, _body, headers) => {
      sent.push({ replica: 'two', id: headers['webhook-id'] });
      return { status: 204, body: '', latencyMs: 1 };
    };
    const first = new WebhookDeliveries({
      endpoints: new RedisEndpointStore(one),
      queue: new RedisDeliveryStore(one, 300),
      send: dying,
    });
    await first.ping('1001', endpoint.id);
    await until(() => sent.length === 1);
    // Dead: it does nothing more (its attempt never ends, so it is not awaited).
    void first.close();

    const queue = new RedisDeliveryStore(two, 300);
    const second = new WebhookDeliveries({
      endpoints: new RedisEndpointStore(two),
      queue,
      send: alive,
      pollMs: 50,
    });
    second.wake();
    await until(() => sent.length === 2, 10_000);
    await second.idle();
    expect(sent).toEqual([
      { replica: 'one', id: sent[0]?.id },
      { replica: 'two', id: sent[0]?.id },
    ]);
    const [delivered] = await queue.list(endpoint.id, { first: 1 });
    expect(delivered?.status).toBe('SUCCEEDED');
    await second.close();
  });

  it('a queue outlives its replicas: what one queued, a replica started later delivers', async () => {
    const prefix = `deliveries-${++prefixes}:`;
    const stored = new RedisDeliveryStore(await connect(prefix));
    await stored.add(delivery({ endpointId: 'ep_later' }), Date.now());
    const later = new RedisDeliveryStore(await connect(prefix));
    expect((await later.due(Date.now(), 10)).map((d) => d.endpointId)).toEqual(['ep_later']);
  });
});
