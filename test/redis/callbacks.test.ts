import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { CALLBACK_ACCEPT, startTestRouter, type TestRouter } from '../helpers/callback-router.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { type Replica, startReplica } from '../helpers/replicas.ts';
import { book, RESERVATION_CHANGED, until } from '../helpers/subscriptions.ts';

/*
 * Callback subscriptions on Redis: recorded there, held by one replica at a time under a lease. When
 * the replica that holds one dies, another adopts it (a fresh check to the router, then the stream
 * runs again through its own execution), so a later booking still reaches the router.
 */

const serverPath = redisServerOrSkip();

describe.skipIf(!serverPath)('callback subscriptions across replicas on Redis', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  let router: TestRouter;
  let replicas: Replica[] = [];
  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    router = await startTestRouter();
    replicas = await Promise.all(
      [1, 2].map((n) =>
        startReplica({
          UPSTREAM_BASE_URL: emulator.url,
          UPSTREAM_KEY: 'demo-key-1001',
          UPSTREAM_SYSTEM_IDENTIFIER: '1001',
          UPSTREAM_USER_AGENT: `replica-${n}`,
          REDIS_URL: redis.url,
          REDIS_PREFIX: 'callbacks-test:',
          CHANGES_POLL_INTERVAL_MS: '500',
          SUBSCRIPTION_CALLBACK_URLS: router.prefix,
        }),
      ),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await router?.close();
    await emulator?.close();
    await redis?.close();
  });

  it('a replica holding a callback subscription dies: another adopts it, and a later booking reaches the router', async () => {
    const [first, second] = replicas as [Replica, Replica];
    const res = await fetch(first.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: CALLBACK_ACCEPT },
      body: JSON.stringify(router.subscription('kept', RESERVATION_CHANGED, { eventId: 5003 }, 0)),
    });
    expect(await res.json()).toEqual({ data: null });
    expect(await redis.client().hlen('callbacks-test:callbacks')).toBe(1);
    // It is live on the first replica: a booking reaches the router.
    const before = await book(emulator, { eventId: 5003 });
    await until(() => router.of('kept', 'next').length === 1);
    expect(router.of('kept', 'next')[0]?.payload?.data).toMatchObject({
      reservationChanged: { reservation: { reservationNumber: before.reservationNumber } },
    });

    await first.kill();
    // The second replica adopts it once the first one's lease lapsed: a fresh check says so.
    await until(() => router.of('kept', 'check').length === 2);
    await until(() => second.output().includes('callback subscription adopted'));
    const after = await book(emulator, { eventId: 5003 });
    await until(() =>
      router
        .of('kept', 'next')
        .some(
          (message) =>
            (message.payload?.data?.reservationChanged as { reservation?: { reservationNumber?: number } })?.reservation
              ?.reservationNumber === after.reservationNumber,
        ),
    );
    expect(router.of('kept', 'complete')).toEqual([]);
  }, 60_000);
});
