import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import { RedisFanout } from '../../src/redis/fanout.ts';
import { RedisLease } from '../../src/redis/lease.ts';
import {
  findRedisServer,
  REDIS_INSTALL_HINT,
  redisServerOrSkip,
  startRedis,
  type TestRedis,
} from '../helpers/redis.ts';

const serverPath = redisServerOrSkip();

/** The pieces the change feeds need across replicas: one poller (a lease), every subscriber served (a fan-out). */
describe.skipIf(!serverPath)('Redis lease and fan-out', () => {
  let redis: TestRedis;
  let a: RedisConnection;
  let b: RedisConnection;

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    [a, b] = await Promise.all([
      openRedis({ url: redis.url, prefix: 'lease:' }),
      openRedis({ url: redis.url, prefix: 'lease:' }),
    ]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  it('one holder at a time; only the holder renews or releases; each grant has a larger fence', async () => {
    const leaseA = new RedisLease(a, 'changes:1001:5002', 5_000);
    const leaseB = new RedisLease(b, 'changes:1001:5002', 5_000);
    const first = await leaseA.acquire();
    expect(first).toEqual({ held: true, fence: expect.any(Number) });
    expect(await leaseB.acquire()).toEqual({ held: false });
    expect(await leaseB.renew()).toBe(false);
    expect(await leaseB.release()).toBe(false);
    expect(await leaseA.renew()).toBe(true);
    // Acquiring again while holding keeps the same grant.
    expect(await leaseA.acquire()).toEqual(first);
    expect(await leaseA.release()).toBe(true);
    const second = await leaseB.acquire();
    expect(second.held && first.held && second.fence > first.fence).toBe(true);
  });

  it('a holder that stops renewing loses the lease when it lapses, and cannot renew the next holder’s', async () => {
    const leaseA = new RedisLease(a, 'lapse', 150);
    const leaseB = new RedisLease(b, 'lapse', 5_000);
    expect((await leaseA.acquire()).held).toBe(true);
    await until(async () => (await leaseB.acquire()).held);
    expect(await leaseA.renew()).toBe(false);
    expect(await leaseA.release()).toBe(false);
    expect(await leaseB.renew()).toBe(true);
  });

  it('a message published on one replica reaches the subscribers of every replica, until they unsubscribe', async () => {
    const heard: string[] = [];
    const onA = await new RedisFanout<{ n: number }>(a, 'changes:1001:5002').subscribe(
      (m) => void heard.push(`A${m.n}`),
    );
    const onB = await new RedisFanout<{ n: number }>(b, 'changes:1001:5002').subscribe(
      (m) => void heard.push(`B${m.n}`),
    );
    const publisher = new RedisFanout<{ n: number }>(a, 'changes:1001:5002');
    await publisher.publish({ n: 1 });
    await until(async () => heard.length === 2);
    expect(heard.sort()).toEqual(['A1', 'B1']);
    await onB();
    await publisher.publish({ n: 2 });
    await until(async () => heard.length === 3);
    await onA();
    expect(heard.sort()).toEqual(['A1', 'A2', 'B1']);
  });
});

describe('finding redis-server', () => {
  it('skips without one, but fails under REQUIRE_REDIS=1, saying how to install it', async () => {
    const none = { PATH: '/nonexistent' };
    expect(findRedisServer(none)).toBeUndefined();
    expect(redisServerOrSkip(none)).toBeUndefined();
    expect(() => redisServerOrSkip({ ...none, REQUIRE_REDIS: '1' })).toThrow(
      `REQUIRE_REDIS=1 but ${REDIS_INSTALL_HINT}`,
    );
    expect(REDIS_INSTALL_HINT).toContain('apt-get install redis-server');
  });
});

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let polls = 0; !(await condition()); polls++) {
    if (polls > 200) throw new Error('the condition was never reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
