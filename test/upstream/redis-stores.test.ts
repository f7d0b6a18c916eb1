import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import { RateBudget } from '../../src/upstream/budget.ts';
import type { UpstreamCall } from '../../src/upstream/call.ts';
import { type AnyEndpoint, ENDPOINTS, type EndpointName, schemasOf } from '../../src/upstream/endpoints.ts';
import { RateLimitedError } from '../../src/upstream/errors.ts';
import { SharedReads } from '../../src/upstream/layers/shared-reads.ts';
import { LazyList } from '../../src/upstream/lazy-list.ts';
import { type SharedStores, sharedStores } from '../../src/upstream/stores/redis-stores.ts';
import { TokenManager } from '../../src/upstream/tokens.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/subscriptions.ts';
import { LICENSEE_1001 } from '../helpers/upstream.ts';

const serverPath = redisServerOrSkip();

/**
 * Fault: replicas that each kept their own budget, token and cache (the memory stores) sent
 * N times the budget, authenticated N times and served each other's stale answers. Here two
 * "replicas" (separate connections and stores) share one Redis, and must behave as one.
 */
describe.skipIf(!serverPath)('Redis stores shared by replicas', () => {
  let redis: TestRedis;
  const opened: { connection: RedisConnection; stores: SharedStores }[] = [];
  let prefixes = 0;

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
  });
  afterAll(async () => {
    for (const { connection, stores } of opened) {
      stores.close();
      await connection.close();
    }
    await redis?.close();
  });

  /** `count` replicas on one fresh prefix (so tests do not see each other's keys). */
  async function replicas(count: number, windowMs: number, lines: string[] = []) {
    const prefix = `test${++prefixes}:`;
    const logger = {
      warn: (_: object, msg: string) => void lines.push(msg),
      info: (_: object, msg: string) => void lines.push(msg),
    };
    return Promise.all(
      Array.from({ length: count }, async () => {
        const connection = await openRedis({ url: redis.url, prefix });
        const stores = await sharedStores(connection, { windowMs, timeoutMs: 20_000, fallbackShare: 1 / 2, logger });
        opened.push({ connection, stores });
        return stores;
      }),
    );
  }

  const budgetOn = (stores: SharedStores, limit: number, windowMs: number) =>
    new RateBudget({ limit, windowMs, margin: 0, store: stores.budget });

  it('two replicas together send at most the limit in any rolling window (each alone would send it twice)', async () => {
    const windowMs = 600;
    const stores = await replicas(2, windowMs);
    const budgets = stores.map((s) => budgetOn(s, 5, windowMs));
    const sentAt: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const budget = budgets[i % 2]!;
        const slot = await budget.acquire('1001', Infinity);
        sentAt.push(Date.now());
        await budget.finish('1001', slot);
      }),
    );
    sentAt.sort((a, b) => a - b);
    // The 6th send after any send comes a full window later at the earliest.
    for (let i = 0; i + 5 < sentAt.length; i++) expect(sentAt[i + 5]! - sentAt[i]!).toBeGreaterThanOrEqual(windowMs);
  });

  it('a waiter that found every slot in flight on another replica is woken when that call finishes', async () => {
    const windowMs = 200;
    const [a, b] = await replicas(2, windowMs);
    const budgetA = budgetOn(a!, 1, windowMs);
    const budgetB = budgetOn(b!, 1, windowMs);
    const slot = await budgetA.acquire('1001', Infinity);
    // In flight on A: B has no time to wake at but the in-flight bound (3 × 20 s), far past its deadline.
    const waiting = budgetB.acquire('1001', Date.now() + 5_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const finishedAt = Date.now();
    await budgetA.finish('1001', slot);
    await expect(waiting).resolves.toEqual(expect.any(String));
    expect(Date.now()).toBeGreaterThanOrEqual(finishedAt + windowMs);
  });

  it('a waiter whose slot cannot come before its deadline is refused at once with the time it would come', async () => {
    const windowMs = 10_000;
    const [a, b] = await replicas(2, windowMs);
    const budgetA = budgetOn(a!, 2, windowMs);
    for (let i = 0; i < 2; i++) await budgetA.finish('1001', await budgetA.acquire('1001', Infinity));
    const refused = await budgetOn(b!, 2, windowMs)
      .acquire('1001', Date.now() + 1_000)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(9);
  });

  it('the background lane keeps its floor across replicas: while one replica’s polls ask, the others’ calls leave a tenth of each window to them', async () => {
    const windowMs = 60_000;
    const [a, b] = await replicas(2, windowMs);
    const now = Date.now();
    const lane = (background: boolean) => ({ background, floor: 2 });
    const takes = async (store: SharedStores, count: number, background: boolean) => {
      let taken = 0;
      for (let i = 0; i < count; i++)
        if ((await store.budget.take('1001', now, 10, windowMs, lane(background))).taken) taken++;
      return taken;
    };
    // Nobody polls: replica A's users may take the whole window.
    expect(await takes(a!, 5, false)).toBe(5);
    // Replica B's poll asks; from then on A's users leave the floor's two slots.
    expect(await takes(b!, 1, true)).toBe(1);
    expect(await takes(a!, 5, false)).toBe(3);
    expect(await takes(b!, 1, true)).toBe(1);
    // The window is full (the floor spent): a poll past it waits like anyone's call.
    expect(await takes(b!, 1, true)).toBe(0);
    expect(await takes(a!, 1, false)).toBe(0);
  });

  it('replicas wait in order: one replica’s queue is served first come, first served', async () => {
    const windowMs = 150;
    const [a] = await replicas(1, windowMs);
    const budget = budgetOn(a!, 1, windowMs);
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3].map(async (n) => {
        const slot = await budget.acquire('1001', Infinity);
        order.push(n);
        await budget.finish('1001', slot);
      }),
    );
    expect(order).toEqual([0, 1, 2, 3]);
  });

  /** Three replicas' token managers on one Redis, and how many authenticates (30 ms each) they sent. */
  async function tokenReplicas() {
    const stores = await replicas(3, 60_000);
    let sent = 0;
    const authenticate = async () => {
      sent++;
      await new Promise((resolve) => setTimeout(resolve, 30));
      return `token-${sent}`;
    };
    return {
      managers: stores.map((s) => new TokenManager(authenticate, { store: s.tokens })),
      authenticates: () => sent,
    };
  }

  it('one authenticate for all replicas together; a rejected token is dropped once and renewed once', async () => {
    const { managers, authenticates } = await tokenReplicas();
    const first = await Promise.all(managers.flatMap((m) => [m.get(LICENSEE_1001), m.get(LICENSEE_1001)]));
    expect(new Set(first)).toEqual(new Set(['token-1']));
    expect(authenticates()).toBe(1);
    // Every replica sees the service reject token-1 and asks again.
    await Promise.all(managers.map((m) => m.reject(LICENSEE_1001, 'token-1')));
    const second = await Promise.all(managers.map((m) => m.get(LICENSEE_1001)));
    expect(new Set(second)).toEqual(new Set(['token-2']));
    expect(authenticates()).toBe(2);
  });

  it('calls on every replica that saw one token refused share one authenticate, and a late one takes its result', async () => {
    const { managers, authenticates } = await tokenReplicas();
    const refused = await managers[0]!.lease(LICENSEE_1001);
    const renewed = await Promise.all(
      managers.flatMap((m) => [1, 2, 3].map(() => m.renewRefused(LICENSEE_1001, refused.token))),
    );
    expect(new Set(renewed.map((held) => held.token))).toEqual(new Set(['token-2']));
    // A call that met the same refusal only now: the token renewed since serves it, with no authenticate.
    expect((await managers[2]!.renewRefused(LICENSEE_1001, refused.token)).token).toBe('token-2');
    expect(authenticates()).toBe(2);
  });

  it('the cache is shared, and an answer of a read started before another replica’s mutation is not stored', async () => {
    const [a, b] = await replicas(2, 60_000);
    const readsA = new SharedReads(a!.cache);
    const readsB = new SharedReads(b!.cache);
    let version = 1;
    const sent: string[] = [];
    let releaseSlowRead: (() => void) | undefined;
    const upstream = (call: UpstreamCall) => {
      sent.push(call.name);
      const answer = [{ questionId: 1, text: `v${version}` }];
      if (call.name === 'geteventquestions' && sent.length === 1)
        return new Promise((resolve) => (releaseSlowRead = () => resolve(answer)));
      if (call.name === 'posteventquestion') version++;
      return Promise.resolve(call.name === 'posteventquestion' ? { success: true } : answer);
    };
    const list = (reads: SharedReads) => reads.layer(upstream)(callOf('geteventquestions', { eventId: 5002 }));
    // B's read is answered from before the change, but only after A's mutation has invalidated.
    const slow = list(readsB);
    await until(() => releaseSlowRead !== undefined, 4_000);
    await readsA.layer(upstream)(callOf('posteventquestion', { eventId: 5002, questionId: 1 }));
    releaseSlowRead!();
    expect(await slow).toEqual([{ questionId: 1, text: 'v1' }]);
    // Neither replica serves that stale answer: the next read on either goes upstream, then is shared.
    expect(await list(readsA)).toEqual([{ questionId: 1, text: 'v2' }]);
    expect(await list(readsB)).toEqual([{ questionId: 1, text: 'v2' }]);
    expect(sent).toEqual(['geteventquestions', 'posteventquestion', 'geteventquestions']);
  });

  it('a page of reservations kept in Redis is read back by another replica as a page (it answered INTERNAL_SERVER_ERROR)', async () => {
    const [a, b] = await replicas(2, 60_000);
    const readsA = new SharedReads(a!.cache, 5_000);
    const readsB = new SharedReads(b!.cache, 5_000);
    const sent: string[] = [];
    const raw = [
      {
        reservationNumber: 910001,
        eventId: 5002,
        status: 'new',
        arrivalDate: '2027-03-12',
        departureDate: '2027-03-14',
      },
      { eventId: 5002 },
    ];
    const upstream = (call: UpstreamCall) => {
      sent.push(call.name);
      return Promise.resolve(schemasOf(call.name, LICENSEE_1001).response.parse(raw));
    };
    const page = (reads: SharedReads) =>
      reads.layer(upstream)(callOf('getreservation', { eventId: 5002, page: 1 })) as Promise<
        LazyList<{ reservationNumber: number }>
      >;
    const first = await page(readsA);
    const kept = await page(readsB);
    expect(sent).toEqual(['getreservation']);
    expect(kept).toBeInstanceOf(LazyList);
    expect(kept.length).toBe(2);
    expect(kept.at(0)?.reservationNumber).toBe(first.at(0)?.reservationNumber);
    expect(kept.at(0)?.reservationNumber).toBe(910001);
    // The record without a number reads as null, there as here.
    expect([first.at(1), kept.at(1)]).toEqual([null, null]);
  });

  it('one slow Redis answer (a busy server, the connection up) is served locally without switching the budget', async () => {
    const windowMs = 5_000;
    const lines: string[] = [];
    const [a] = await replicas(1, windowMs, lines);
    const budget = budgetOn(a!, 10, windowMs);
    // A script that spins for 1.5 s: Redis answers nothing meanwhile, longer than a command may wait (1 s).
    const busy = redis
      .client()
      .eval(
        `local start = redis.call('TIME') while true do local now = redis.call('TIME') if (now[1] - start[1]) * 1000000 + now[2] - start[2] > 1500000 then return 1 end end`,
        0,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await budget.finish('1001', await budget.acquire('1001', Infinity));
    expect(lines).toEqual([]);
    expect(a!.budget.isShared()).toBe(true);
    expect(await busy).toBe(1);
  });

  it('while Redis is away each replica budgets alone with its share, says so once, and writes its sends back when Redis returns', async () => {
    const windowMs = 2_000;
    const lines: string[] = [];
    const [a] = await replicas(1, windowMs, lines);
    const budget = budgetOn(a!, 8, windowMs);
    await budget.finish('1001', await budget.acquire('1001', Infinity));
    await redis.stop();
    // Share 1/2 of 8: three more sends (four with the one before) fit this window, the fifth must wait.
    const started: number[] = [];
    const calls = Array.from({ length: 5 }, async () => {
      const slot = await budget.acquire('1001', Date.now() + 300);
      started.push(Date.now());
      await budget.finish('1001', slot);
    });
    const results = await Promise.allSettled(calls);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)).toEqual([
      expect.any(RateLimitedError),
      expect.any(RateLimitedError),
    ]);
    expect(lines.filter((line) => line.includes('Redis unreachable'))).toHaveLength(1);

    await redis.start();
    await until(() => lines.some((line) => line.includes('Redis reachable again')), 4_000);
    const counted = await redis.client().zcard(`test${prefixes}:budget:{1001}:done`);
    expect(counted).toBe(4);
    expect(a!.budget.isShared()).toBe(true);
  }, 20_000);

  it('while Redis is away, a waiter past the local share whose slot cannot come in time is refused at once, not at its deadline', async () => {
    const windowMs = 10_000;
    const [a] = await replicas(1, windowMs);
    const budget = budgetOn(a!, 4, windowMs);
    await budget.finish('1001', await budget.acquire('1001', Infinity));
    await redis.stop();
    // Share 1/2 of 4: one more send fits this window; the next could start only in 10 s.
    await budget.finish('1001', await budget.acquire('1001', Infinity));
    const deadline = Date.now() + 3_000;
    const refused = await budget.acquire('1001', deadline).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(9);
    expect(Date.now()).toBeLessThan(deadline);
    await redis.start();
  }, 20_000);
});

function callOf(name: EndpointName, params: Record<string, unknown>): UpstreamCall {
  return {
    licensee: LICENSEE_1001,
    name,
    endpoint: ENDPOINTS[name] as unknown as AnyEndpoint,
    params,
    deadline: Date.now() + 5_000,
  };
}
