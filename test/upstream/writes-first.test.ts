import { print } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import type { LogEntry } from '../../src/emulator/state.ts';
import { type BudgetPriority, RateBudget, WRITE_SHARE } from '../../src/upstream/budget.ts';
import { type AnyEndpoint, ENDPOINTS, isWrite } from '../../src/upstream/endpoints.ts';
import { UpsertAttendeeDocument } from '../documents/generated.ts';
import { type GraphQLAnswer, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { post, type Replica, startReplicas } from '../helpers/replicas.ts';
import { busiestWindow } from '../helpers/upstream.ts';

const serverPath = redisServerOrSkip();

/**
 * Fault (issue 37): a mutation waited in the same budget queue as everyone's reads, and during a
 * live event 19 of 40 `upsertAttendee` were refused RATE_LIMITED because reads had spent the
 * licensee's budget. A small budget in the service's real window (a minute), and a deadline of 2 s:
 * a call whose slot cannot come in time is refused at once, so nothing here waits for a window.
 */
const LIMIT = 40;
/** The limit less the 5 % margin: what writes may take in a window. */
const BUDGET = Math.floor(LIMIT * 0.95);
/** What reads may take: the budget less the writes' share. */
const READS = BUDGET - Math.floor(BUDGET * WRITE_SHARE);
const SETTINGS = { UPSTREAM_RATE_LIMIT: String(LIMIT), UPSTREAM_DEADLINE_MS: '2000' };
const RESERVATION =
  'query ($n: Int!) { event(eventId: 5002) { reservation(reservationNumber: $n) { reservationNumber } } }';
const UPSERT = print(UpsertAttendeeDocument);

const codesOf = (answers: { errors?: { extensions?: Record<string, unknown> }[] | undefined }[]) =>
  answers.flatMap((answer) => answer.errors ?? []).map((error) => error.extensions?.code);

/** The service saw no more than the limit in any window, answered no 429, and applied every write it was sent. */
function expectWithinTheLimit(emulator: Emulator): LogEntry[] {
  const log = emulator.state.log;
  expect(log.filter((entry) => entry.status === 429)).toEqual([]);
  expect(busiestWindow(emulator, 60_000)).toBeLessThanOrEqual(LIMIT);
  const writes = log.filter((entry) => entry.endpoint === 'postattendee');
  expect(writes.filter((entry) => entry.status !== 200)).toEqual([]);
  return writes;
}

describe('writes first', () => {
  it('every endpoint that changes something upstream is a write, and only those', () => {
    const writes = Object.entries(ENDPOINTS).filter(([, endpoint]) => isWrite(endpoint as unknown as AnyEndpoint));
    expect(writes.map(([name]) => name).sort()).toEqual(
      Object.keys(ENDPOINTS)
        .filter((name) => name.startsWith('post'))
        .sort(),
    );
  });

  it('a write queued after reads and a poll the floor moved ahead is served first, and reads leave it its share', async () => {
    vi.useFakeTimers();
    try {
      // 20 a window: 2 for writes alone, a floor of 2 for the background lane. Full until 1 s from now.
      const budget = new RateBudget({ limit: 20, windowMs: 1_000, margin: 0 });
      for (let i = 0; i < 20; i++)
        await budget.finish('x', await budget.acquire('x', Date.now() + 1_000, undefined, 'write'));
      const started: string[] = [];
      const calls: [string, BudgetPriority][] = [
        ['poll', 'background'],
        ...Array.from({ length: 20 }, (_, i) => [`page-${i + 1}`, 'interactive'] as [string, BudgetPriority]),
        ['write', 'write'],
      ];
      const outcomes = calls.map(([name, priority]) =>
        budget.acquire('x', Date.now() + 5_000, undefined, priority).then(async (slot) => {
          started.push(name);
          await budget.finish('x', slot);
        }),
      );
      const pages = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `page-${from + i}`);
      await vi.advanceTimersByTimeAsync(1_001);
      expect(started).toEqual(['write', 'poll', ...pages(1, 15)]);
      // The reads stopped at 17 counting the write and the poll, five pages still queued: two slots
      // stay free for writes, and one for the background lane's floor (its poll took the other).
      expect(await budget.used('x')).toBe(17);
      expect(budget.waiting('x')).toBe(5);
      await vi.advanceTimersByTimeAsync(1_001);
      await Promise.all(outcomes);
      expect(started).toEqual(['write', 'poll', ...pages(1, 20)]);
    } finally {
      vi.useRealTimers();
    }
  });

  describe('on one gateway', () => {
    let t: TestGateway;
    afterEach(async () => {
      await t.close();
    });

    it('with the budget spent by reads (refused), mutations sent at once are answered, and reads stay refused', async () => {
      t = await startGateway({ rateLimit: LIMIT }, SETTINGS);
      const reads = await Promise.all(Array.from({ length: 60 }, (_, i) => t.exec(RESERVATION, { n: 800_000 + i })));
      expect(new Set(codesOf(reads))).toEqual(new Set(['RATE_LIMITED']));
      // The authenticate and the reads took the window less the writes' share.
      expect(t.emulator.state.log).toHaveLength(READS);

      // The writes' share of the window (3 slots) is all there, whatever the reads asked.
      expect(BUDGET - READS).toBeGreaterThan(0);
      const writes = await Promise.all(
        Array.from({ length: BUDGET - READS }, (_, i) =>
          t.exec(UpsertAttendeeDocument, { input: { attendeeId: `W-${i}`, registrationEventId: 'REG-37' } }),
        ),
      );
      for (const [i, write] of writes.entries()) {
        expect(write.errors).toBeUndefined();
        expect(write.data!.upsertAttendee.attendee).toEqual({ attendeeId: `W-${i}`, registrationEventId: 'REG-37' });
      }
      // Reads do not take the writes' share back.
      expect(codesOf([await t.exec(RESERVATION, { n: 800_100 })])).toEqual(['RATE_LIMITED']);
      expect(expectWithinTheLimit(t.emulator)).toHaveLength(BUDGET - READS);
    });

    it('writes beyond the budget alone are refused RATE_LIMITED with retryAfterSeconds, and never sent', async () => {
      t = await startGateway({ rateLimit: LIMIT }, SETTINGS);
      const answers: GraphQLAnswer<unknown>[] = await Promise.all(
        Array.from({ length: BUDGET + 8 }, (_, i) =>
          t.exec(UpsertAttendeeDocument, { input: { attendeeId: `X-${i}`, registrationEventId: 'REG-37' } }),
        ),
      );
      const refused = answers.filter((answer) => answer.errors);
      // The budget less the authenticate's slot is answered; the rest is refused, each told when to come back.
      expect(answers.length - refused.length).toBe(BUDGET - 1);
      for (const answer of refused) {
        expect(answer.status).toBe(200);
        expect(answer.errors).toEqual([
          expect.objectContaining({
            path: ['upsertAttendee'],
            extensions: { code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) },
          }),
        ]);
      }
      expect(expectWithinTheLimit(t.emulator)).toHaveLength(BUDGET - 1);
    });
  });

  describe.skipIf(!serverPath)('on two replicas sharing one Redis', () => {
    let redis: TestRedis;
    let emulator: Emulator;
    let replicas: Replica[] = [];
    let runs = 0;

    beforeAll(async () => {
      redis = await startRedis(serverPath!);
    });
    afterEach(async () => {
      await Promise.all(replicas.map((replica) => replica.stop()));
      replicas = [];
      await emulator?.close();
    });
    afterAll(async () => {
      await redis?.close();
    });

    async function startBoth(): Promise<void> {
      emulator = await startEmulator({ port: 0, rateLimit: LIMIT });
      replicas = await startReplicas(2, emulator.url, redis.url, `writes${++runs}:`, {
        ...SETTINGS,
        REDIS_FALLBACK_SHARE: '1/2',
      });
    }

    const upsert = (replica: Replica, attendeeId: string) =>
      post(replica.url, UPSERT, { input: { attendeeId, registrationEventId: 'REG-37' } });

    it('with the budget spent by both replicas’ reads, a mutation sent at once to each is answered', async () => {
      await startBoth();
      const reads = await Promise.all(
        Array.from({ length: 60 }, (_, i) => post(replicas[i % 2]!.url, RESERVATION, { n: 810_000 + i })),
      );
      expect(new Set(codesOf(reads.map((read) => read.body)))).toEqual(new Set(['RATE_LIMITED']));
      expect(emulator.state.log).toHaveLength(READS);

      const writes = await Promise.all(replicas.map((replica, i) => upsert(replica, `R-${i}`)));
      expect(writes.map((write) => write.body.errors)).toEqual([undefined, undefined]);
      const sent = expectWithinTheLimit(emulator);
      expect(sent.map((entry) => entry.userAgent).sort()).toEqual(['replica-1', 'replica-2']);
    }, 60_000);

    it('while Redis is away, a replica whose reads spent its own share still answers a mutation', async () => {
      await startBoth();
      // A token first, with Redis up; then the replica budgets alone, on its half of the limit.
      expect((await post(replicas[0]!.url, RESERVATION, { n: 820_000 })).body.errors).toBeUndefined();
      await redis.stop();
      try {
        const reads = await Promise.all(
          Array.from({ length: 30 }, (_, i) => post(replicas[0]!.url, RESERVATION, { n: 820_001 + i })),
        );
        expect(codesOf(reads.map((read) => read.body))).toContain('RATE_LIMITED');
        const write = await upsert(replicas[0]!, 'AWAY-1');
        expect(write.body.errors).toBeUndefined();
        // Its own sends: half the reads' part of the window (the first read's included), then the
        // write, within half the whole budget.
        expect(emulator.state.log.filter((entry) => entry.endpoint !== 'postattendee')).toHaveLength(
          Math.floor(READS / 2),
        );
        expect(expectWithinTheLimit(emulator)).toHaveLength(1);
      } finally {
        await redis.start();
      }
    }, 60_000);
  });
});
