import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import {
  type EndpointStore,
  MemoryEndpointStore,
  RedisEndpointStore,
  type WebhookEndpoint,
} from '../../src/webhooks/endpoint-store.ts';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';

/*
 * The endpoint stores, in memory and on Redis, held to one contract: a licensee sees, changes and
 * deletes only its own endpoints, whatever id it names; sequences grow per reservation, one per
 * change however often it asks.
 */

/** A change asking for its sequence. */
const told = (key: string, toldAt = 10, waited = false) => ({ key, toldAt, waited });

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

  it('saves a change whole, and gives each change of a reservation the next sequence per licensee, the same one when it asks again', async () => {
    const store = make();
    await store.save(endpoint('ep_d', '1003'));
    await store.save(endpoint('ep_d', '1003', { enabled: false, disabledReason: 'disabled by its client' }));
    expect(await store.get('1003', 'ep_d')).toMatchObject({ enabled: false, disabledReason: 'disabled by its client' });

    expect(await store.sequenceOf('1003', 5003, 700001, told('700001:a'))).toBe(1);
    expect(await store.sequenceOf('1003', 5003, 700001, told('700001:a'))).toBe(1);
    expect(await store.sequenceOf('1003', 5003, 700001, told('700001:b', 20))).toBe(2);
    expect(await store.sequenceOf('1003', 5003, 700002, told('700002:a'))).toBe(1);
    expect(await store.sequenceOf('1004', 5003, 700001, told('700001:a'))).toBe(1);
  });

  it('gives none to a change that waited when a change of its reservation told after it had one meanwhile', async () => {
    const store = make();
    expect(await store.sequenceOf('1005', 5003, 700001, told('700001:newer', 30))).toBe(1);
    // Kept at 10 while the store was away: superseded by the state told at 30.
    expect(await store.sequenceOf('1005', 5003, 700001, told('700001:older', 10, true))).toBeUndefined();
    expect(await store.sequenceOf('1005', 5003, 700001, told('700001:later', 40, true))).toBe(2);
    // One that did not wait always gets the next (a replica's clock stepping back loses nothing).
    expect(await store.sequenceOf('1005', 5003, 700001, told('700001:fresh', 5))).toBe(3);
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

    it('what one replica saves, another reads; sequences never repeat across them, and a change told by both takes one', async () => {
      const [one, two] = stores;
      await one.save(endpoint('ep_r', '1009'));
      expect((await two.get('1009', 'ep_r'))?.url).toBe('https://receiver.example/ep_r');
      const given = await Promise.all(
        Array.from({ length: 20 }, (_, n) => (n % 2 ? one : two).sequenceOf('1009', 5003, 700009, told(`700009:${n}`))),
      );
      expect(given.sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(Array.from({ length: 20 }, (_, n) => n + 1));
      const same = await Promise.all(
        Array.from({ length: 10 }, (_, n) => (n % 2 ? one : two).sequenceOf('1009', 5003, 700010, told('700010:x'))),
      );
      expect(same).toEqual(Array.from({ length: 10 }, () => 1));
      expect(await two.sequenceOf('1009', 5003, 700010, told('700010:y'))).toBe(2);
    });
  });

  describe('with WEBHOOK_SECRET_KEY', () => {
    const KEY = 'a'.repeat(64);
    const NEXT_KEY = 'b'.repeat(64);
    const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

    it('seals the secrets in Redis, opens them on reading, and reads a secret stored in clear before', async () => {
      const prefix = `sealed-${++prefixes}:`;
      const connection = await openRedis({ url: redis.url, prefix });
      connections.push(connection);
      const clear = new RedisEndpointStore(connection);
      await clear.save(endpoint('ep_old', '1001', { secrets: [{ value: 'whsec_b2xk' }] }));
      const sealed = new RedisEndpointStore(connection, new SecretBox([KEY]));
      await sealed.save(
        endpoint('ep_s', '1001', { secrets: [{ value: SECRET }, { value: 'whsec_cHJldg==', until: 9 }] }),
      );

      const raw = await redis.client().hget(`${prefix}webhooks:endpoints`, 'ep_s');
      expect(raw).not.toContain(SECRET);
      expect(raw).not.toContain('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
      expect(raw).toContain('aes256gcm:');
      expect((await sealed.get('1001', 'ep_s'))?.secrets).toEqual([
        { value: SECRET },
        { value: 'whsec_cHJldg==', until: 9 },
      ]);
      expect((await sealed.list('1001')).map((each) => each.secrets[0]?.value).sort()).toEqual(
        [SECRET, 'whsec_b2xk'].sort(),
      );
      // Without the key, a sealed record is refused with what to set; the key changed, the old one still opens.
      await expect(clear.get('1001', 'ep_s')).rejects.toThrow('set WEBHOOK_SECRET_KEY');
      const changed = new RedisEndpointStore(connection, new SecretBox([NEXT_KEY, KEY]));
      expect((await changed.get('1001', 'ep_s'))?.secrets[0]?.value).toBe(SECRET);
      await expect(new RedisEndpointStore(connection, new SecretBox([NEXT_KEY])).get('1001', 'ep_s')).rejects.toThrow(
        'sealed with a key WEBHOOK_SECRET_KEY does not hold',
      );
      // Its key lost, an endpoint can still be deleted (by its own licensee only).
      expect(await clear.delete('1002', 'ep_s')).toBe(false);
      expect(await clear.delete('1001', 'ep_s')).toBe(true);
      expect((await sealed.list('1001')).map((each) => each.id)).toEqual(['ep_old']);
    });
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(['0123456789abcdef'.repeat(4)]);

  it('seals afresh each time, opens only for the same record, and refuses a changed seal', () => {
    const once = box.seal('whsec_abc', 'ep_1');
    expect(box.seal('whsec_abc', 'ep_1')).not.toBe(once);
    expect(box.open(once, 'ep_1')).toBe('whsec_abc');
    expect(() => box.open(once, 'ep_2')).toThrow('ep_2');
    const flipped = `${once.slice(0, -2)}${once.at(-2) === 'A' ? 'B' : 'A'}${once.at(-1)}`;
    expect(() => box.open(flipped, 'ep_1')).toThrow();
  });

  it('takes only 256-bit keys', () => {
    expect(() => new SecretBox(['abcd'])).toThrow('64 hex digits');
    expect(() => new SecretBox([])).toThrow();
  });
});
