import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { RateLimitedError, type UpstreamError } from '../../src/upstream/errors.ts';
import { RateBudget } from '../../src/upstream/rate-limit.ts';
import { busiestWindow, count, emulatorAndClient, LICENSEE_1001, settle } from '../helpers/upstream.ts';

describe('budget against the emulator, both at 50 calls per 2 s', () => {
  let emulator: Emulator;
  let client: UpstreamClient;
  beforeAll(async () => {
    ({ emulator, client } = await emulatorAndClient({ rateLimit: 50, rateWindowMs: 2_000 }, { rateLimit: 50, rateWindowMs: 2_000, deadlineMs: 5_000 }));
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it('1,000 concurrent calls for distinct resources: one authenticate, never over the limit, no 429, each served or RATE_LIMITED at its deadline', async () => {
    const started = Date.now();
    const calls = Array.from({ length: 1000 }, (_, i) =>
      client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i }).then(
        (v) => ({ v, at: Date.now() }),
        (e: UpstreamError) => {
          throw Object.assign(e, { at: Date.now() });
        },
      ),
    );
    const { ok, errors } = await settle(calls);
    expect(count(emulator, 'authenticate')).toBe(1);
    expect(busiestWindow(emulator, 2_000)).toBeLessThanOrEqual(50);
    expect(emulator.state.log.filter((r) => r.status === 429)).toHaveLength(0);
    expect(ok.length + errors.length).toBe(1000);
    expect(ok.length).toBeGreaterThan(100);
    for (const e of errors) {
      expect(e).toBeInstanceOf(RateLimitedError);
      // Refused at its deadline, not before.
      expect((e as unknown as { at: number }).at - started).toBeGreaterThanOrEqual(4_900);
    }
    // Refused callers learn when a slot could be theirs: the head of the queue within a window,
    // deeper ones spread over the windows their queue position needs (47 a window).
    const waits = errors.map((e) => (e as RateLimitedError).retryAfterSeconds);
    expect(Math.min(...waits)).toBeLessThanOrEqual(2);
    expect(Math.max(...waits)).toBeLessThanOrEqual(Math.ceil(errors.length / 47) * 2 + 2);
    // Every served call is a getreservation the log shows once.
    expect(count(emulator, 'getreservation')).toBe(ok.length);
  }, 30_000);

  it('the same 1,000 calls for one resource make one upstream call', async () => {
    await new Promise((r) => setTimeout(r, 2_100)); // let the previous test's window pass
    emulator.state.log = [];
    const calls = Array.from({ length: 1000 }, () => client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_010 }));
    const { ok, errors } = await settle(calls);
    expect(errors).toEqual([]);
    expect(ok).toHaveLength(1000);
    expect(count(emulator, 'getreservation')).toBe(1);
  });
});

describe('RateBudget', () => {
  it('fails a call that cannot start before its deadline with RATE_LIMITED and the seconds until a slot frees', async () => {
    const budget = new RateBudget({ limit: 3, windowMs: 2_500, margin: 0 });
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) await budget.finish('x', await budget.acquire('x', t0 + 1_000));
    const error = await budget.acquire('x', t0 + 300).catch((e: unknown) => e);
    const elapsed = Date.now() - t0;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).code).toBe('RATE_LIMITED');
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1_500);
    // The first slot frees 2.5 s after t0, about 2.2 s after the refusal.
    expect((error as RateLimitedError).retryAfterSeconds).toBe(3);
  });

  it('starts queued calls in order as the window frees', async () => {
    const budget = new RateBudget({ limit: 2, windowMs: 400, margin: 0 });
    const order: string[] = [];
    const deadline = Date.now() + 5_000;
    await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((name) =>
        budget.acquire('x', deadline).then((slot) => {
          order.push(name);
          return budget.finish('x', slot);
        }),
      ),
    );
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('keeps a margin of the limit unused and budgets each licensee apart', async () => {
    const budget = new RateBudget({ limit: 20, windowMs: 10_000, margin: 0.05 });
    expect(budget.effectiveLimit).toBe(19);
    const deadline = Date.now() + 200;
    const first = await settle(Array.from({ length: 20 }, () => budget.acquire('a', deadline)));
    expect([first.ok.length, first.errors.length]).toEqual([19, 1]);
    const other = await settle(Array.from({ length: 19 }, () => budget.acquire('b', deadline)));
    expect(other.errors).toEqual([]);
  });

  it('holds everything back while paused by a 429', async () => {
    const budget = new RateBudget({ limit: 10, windowMs: 1_000, margin: 0 });
    budget.pause('x', Date.now() + 300);
    const t0 = Date.now();
    await budget.acquire('x', t0 + 2_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });
});
