import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import {
  type EndpointStore,
  MemoryEndpointStore,
  RedisEndpointStore,
  type WebhookEndpoint,
} from '../../src/webhooks/endpoint-store.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';

/*
 * The endpoint stores, in memory and on Redis, held to one contract: a licensee sees, changes and
 * deletes only its own endpoints, whatever id it names; sequences grow per reservation.
 */

const endpoint = (id: string, licenseeId: string, fields: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id,
  licenseeId,
  url: `https://receiver.example/${id}`,
  eventIds: [5003],
  kinds: ['CREATED', 'CHANGED', 'CANCELLED'],
  description: null,
  secrets: [{ value: 'whsec_c2VjcmV0' }],
  enabled: true,
  disabledReason: null,
  failingSince: null,
  createdAt: 1,
  ...fields,
});

function contract(make: () => EndpointStore) {
  it('keeps each licensee to its own endpoints', async () => {
    const store = make();
    await store.save(endpoint('ep_a', '1001', { createdAt: 2 }));
    await store.save(endpoint('ep_b', '1001', { createdAt: 1, eventIds: [5004], enabled: false }));
    await store.save(endpoint('ep_c', '1002', { eventIds: [5003, 5005] }));

    expect((await store.list('1001')).map((each) => each.id)).toEqual(['ep_b', 'ep_a']);
    expect(await store.get('1002', 'ep_a')).toBeUndefined();
    expect((await store.get('1001', 'ep_a'))?.url).toBe('https://receiver.example/ep_a');
    expect(await store.delete('1002', 'ep_a')).toBe(false);
    expect(await store.get('1001', 'ep_a')).toBeDefined();
    expect((await store.forEvent('1001', 5003)).map((each) => each.id)).toEqual(['ep_a']);
    expect(await store.forEvent('1001', 5004)).toEqual([]);
    expect(await store.eventsWatched('1001')).toEqual([5003]);
    expect(await store.eventsWatched('1002')).toEqual([5003, 5005]);

    expect(await store.delete('1001', 'ep_a')).toBe(true);
    expect(await store.get('1001', 'ep_a')).toBeUndefined();
    expect((await store.list('1001')).map((each) => each.id)).toEqual(['ep_b']);
  });

  it('saves a change whole, and gives each reservation a growing sequence per licensee', async () => {
    const store = make();
    await store.save(endpoint('ep_d', '1003'));
    await store.save(endpoint('ep_d', '1003', { enabled: false, disabledReason: 'disabled by its client' }));
    expect(await store.get('1003', 'ep_d')).toMatchObject({ enabled: false, disabledReason: 'disabled by its client' });

    expect(await store.nextSequence('1003', 5003, 700001)).toBe(1);
    expect(await store.nextSequence('1003', 5003, 700001)).toBe(2);
    expect(await store.nextSequence('1003', 5003, 700002)).toBe(1);
    expect(await store.nextSequence('1004', 5003, 700001)).toBe(1);
  });
}

describe('MemoryEndpointStore', () => {
  contract(() => new MemoryEndpointStore());

  it('hands out copies: changing one changes nothing stored', async () => {
    const store = new MemoryEndpointStore();
    await store.save(endpoint('ep_e', '1001'));
    const got = await store.get('1001', 'ep_e');
    got?.eventIds.push(9999);
    expect((await store.get('1001', 'ep_e'))?.eventIds).toEqual([5003]);
  });
});

const serverPath = redisServerOrSkip();

describe.skipIf(!serverPath)('RedisEndpointStore', () => {
  let redis: TestRedis;
  const connections: RedisConnection[] = [];
  beforeAll(async () => {
    redis = await startRedis(serverPath!);
  }, 30_000);
  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.close()));
    await redis?.close();
  });

  let prefixes = 0;
  const replicaPair = async () => {
    const prefix = `endpoints-${++prefixes}:`;
    const pair = await Promise.all([openRedis({ url: redis.url, prefix }), openRedis({ url: redis.url, prefix })]);
    connections.push(...pair);
    return pair.map((connection) => new RedisEndpointStore(connection)) as [RedisEndpointStore, RedisEndpointStore];
  };

  describe('shared by replicas', () => {
    let stores: [RedisEndpointStore, RedisEndpointStore];
    beforeAll(async () => {
      stores = await replicaPair();
    });
    contract(() => stores[0]);

    it('what one replica saves, another reads; sequences never repeat across them', async () => {
      const [one, two] = stores;
      await one.save(endpoint('ep_r', '1009'));
      expect((await two.get('1009', 'ep_r'))?.url).toBe('https://receiver.example/ep_r');
      const given = await Promise.all(
        Array.from({ length: 20 }, (_, n) => (n % 2 ? one : two).nextSequence('1009', 5003, 700009)),
      );
      expect(given.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n + 1));
    });
  });
});
