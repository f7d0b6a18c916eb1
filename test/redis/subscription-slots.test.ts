import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemorySubscriptionSlots } from '../../src/operations/subscription-limit.ts';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import { RedisSubscriptionSlots, SLOT_TTL_MS } from '../../src/redis/subscription-slots.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';

const serverPath = redisServerOrSkip();

/** SUBSCRIPTIONS_PER_CLIENT across replicas: one count per principal in Redis, slots of a dead replica lapse. */
describe.skipIf(!serverPath)('subscription slots on Redis', () => {
  let redis: TestRedis;
  let a: RedisConnection;
  let b: RedisConnection;
  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    [a, b] = await Promise.all([
      openRedis({ url: redis.url, prefix: 'slots:' }),
      openRedis({ url: redis.url, prefix: 'slots:' }),
    ]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  it('two replicas together hold at most the limit for one principal; a released slot is free on either; another principal has its own', async () => {
    const onA = new RedisSubscriptionSlots(a, 3, new MemorySubscriptionSlots(3));
    const onB = new RedisSubscriptionSlots(b, 3, new MemorySubscriptionSlots(3));
    const first = await onA.acquire('acme/web');
    expect(first).toBeTypeOf('function');
    expect(await onB.acquire('acme/web')).toBeTypeOf('function');
    expect(await onA.acquire('acme/web')).toBeTypeOf('function');
    expect(await onB.acquire('acme/web')).toBeNull();
    expect(await onA.acquire('acme/web')).toBeNull();
    expect(await onB.acquire('globex/web')).toBeTypeOf('function');
    first!();
    await expect.poll(async () => (await onB.acquire('acme/web')) !== null).toBe(true);
    onA.close();
    onB.close();
  });

  it('the slots of a replica that stopped renewing lapse, so its principal is not locked out', async () => {
    let now = 1_000_000;
    const dead = new RedisSubscriptionSlots(a, 1, new MemorySubscriptionSlots(1), () => now);
    const alive = new RedisSubscriptionSlots(b, 1, new MemorySubscriptionSlots(1), () => now);
    dead.close();
    expect(await dead.acquire('acme/ops')).toBeTypeOf('function');
    expect(await alive.acquire('acme/ops')).toBeNull();
    now += SLOT_TTL_MS + 1;
    expect(await alive.acquire('acme/ops')).toBeTypeOf('function');
    alive.close();
  });
});
