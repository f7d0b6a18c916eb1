import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/server.ts';
import { RateBudget, WRITE_SHARE } from '../../src/upstream/budget.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { RateLimitedError, type UpstreamError } from '../../src/upstream/errors.ts';
import {
  busiestWindow,
  clientFor,
  count,
  emulatorAndClient,
  LICENSEE_1001,
  LICENSEE_2002,
  settle,
} from '../helpers/upstream.ts';

describe('budget against the emulator, both at 50 calls per 2 s', () => {
  let emulator: Emulator;
  let client: UpstreamClient;
  beforeAll(async () => {
    ({ emulator, client } = await emulatorAndClient(
      { rateLimit: 50, rateWindowMs: 2_000 },
      { rateLimit: 50, rateWindowMs: 2_000, deadlineMs: 5_000 },
    ));
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it('1,000 concurrent calls for distinct resources: one authenticate, never over the limit, no 429, each served or RATE_LIMITED', async () => {
    const calls = Array.from({ length: 1000 }, (_, i) =>
      client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i }),
    );
    const { ok, errors } = await settle(calls);
    expect(count(emulator, 'authenticate')).toBe(1);
    expect(busiestWindow(emulator, 2_000)).toBeLessThanOrEqual(50);
    expect(emulator.state.log.filter((r) => r.status === 429)).toHaveLength(0);
    expect(ok.length + errors.length).toBe(1000);
    // What the budget guarantees whatever the machine's speed: the first window's worth of reads
    // (47 less the writes' share: 43, less the authenticate's slot) starts at once; how many later
    // windows fit the deadline is timing.
    const reads = client.budget.effectiveLimit - Math.floor(client.budget.effectiveLimit * WRITE_SHARE);
    expect(ok.length).toBeGreaterThanOrEqual(reads - 1);
    for (const e of errors) expect(e).toBeInstanceOf(RateLimitedError);
    // Refused callers learn when a slot could be theirs: those just past the 5 s deadline soon
    // after it, deeper ones spread over the windows their queue position needs (43 a window).
    const waits = errors.map((e) => (e as RateLimitedError).retryAfterSeconds);
    expect(Math.min(...waits)).toBeLessThanOrEqual(5 + 2);
    expect(Math.max(...waits)).toBeLessThanOrEqual(Math.ceil(1000 / reads) * 2 + 2);
    expect(new Set(waits).size).toBeGreaterThan(5);
    // Every served call is a getreservation the log shows once.
    expect(count(emulator, 'getreservation')).toBe(ok.length);
  }, 30_000);

  it('the same 1,000 calls for one resource make one upstream call', async () => {
    // Licensee 2002: a budget of its own, untouched by the previous test's full windows.
    emulator.state.log = [];
    const calls = Array.from({ length: 1000 }, () =>
      client.call(LICENSEE_2002, 'getreservation', { eventId: 6001, reservationNumber: 900_010 }),
    );
    const { ok, errors } = await settle(calls);
    expect(errors).toEqual([]);
    expect(ok).toHaveLength(1000);
    expect(count(emulator, 'getreservation')).toBe(1);
  });
});

/** The budget alone, on vitest's fake clock: what starts when, asserted by order and counts. */
describe('RateBudget', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Acquires in the background, recording the names of the calls that got a slot, in order. */
  function queue(budget: RateBudget, names: string[], deadline: number, licensee = 'x') {
    const started: string[] = [];
    const slots = new Map<string, string>();
    const outcomes = names.map((name) =>
      budget.acquire(licensee, deadline).then(
        (slot) => {
          started.push(name);
          slots.set(name, slot);
        },
        (error: unknown) => error,
      ),
    );
    return { started, slots, outcomes };
  }

  // Fault (seen in the benchmark's frontend session under the real rate limit): a call whose slot
  // could not come before its deadline waited the whole deadline out (15 s) to be refused; it is
  // refused at once, with the time its slot would come.
  it('refuses at once a call whose place in the queue cannot come before its deadline, with the seconds until it would', async () => {
    const budget = new RateBudget({ limit: 3, windowMs: 2_500, margin: 0 });
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) await budget.finish('x', await budget.acquire('x', t0 + 1_000));
    const late = budget.acquire('x', t0 + 2_000).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(0);
    expect(budget.waiting('x')).toBe(0);
    const error = await late;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).code).toBe('RATE_LIMITED');
    // The first slot frees 2.5 s after t0.
    expect((error as RateLimitedError).retryAfterSeconds).toBe(3);
  });

  it('spreads callers refused together over the windows they need, at most ten windows ahead', async () => {
    const budget = new RateBudget({ limit: 2, windowMs: 1_000, margin: 0 });
    for (let i = 0; i < 2; i++) await budget.finish('x', await budget.acquire('x', Date.now() + 500));
    const refused = await Promise.all(
      Array.from({ length: 100 }, () =>
        budget.acquire('x', Date.now() + 500).then(
          () => undefined,
          (e: unknown) => e as RateLimitedError,
        ),
      ),
    );
    const waits = refused.map((e) => e!.retryAfterSeconds);
    // Two a window: the first two return after one window, the next two after two, …
    expect(waits.slice(0, 6)).toEqual([1, 1, 2, 2, 3, 3]);
    // …and a flood is told at most ten windows (the list of places it keeps stays bounded).
    expect(Math.max(...waits)).toBeLessThanOrEqual(11);
  });

  it('a call that could start before its deadline waits, and is refused at its deadline if the slot does not come', async () => {
    const budget = new RateBudget({ limit: 1, windowMs: 1_000, margin: 0 });
    await budget.acquire('x', Date.now() + 1_000); // in flight: frees a window after it finishes
    const waiting = budget.acquire('x', Date.now() + 1_500).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_499);
    expect(budget.waiting('x')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toBeInstanceOf(RateLimitedError);
  });

  it('serves interactive calls before background ones queued earlier', async () => {
    const budget = new RateBudget({ limit: 1, windowMs: 100, margin: 0 });
    const held = await budget.acquire('x', Date.now() + 10_000);
    const started: string[] = [];
    const take = (name: string, priority: 'interactive' | 'background') =>
      budget.acquire('x', Date.now() + 10_000, undefined, priority).then(async (slot) => {
        started.push(name);
        await budget.finish('x', slot);
      });
    const all = [
      take('poll-1', 'background'),
      take('poll-2', 'background'),
      take('query-1', 'interactive'),
      take('query-2', 'interactive'),
    ];
    await budget.finish('x', held);
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all(all);
    expect(started).toEqual(['query-1', 'query-2', 'poll-1', 'poll-2']);
  });

  it('counts the sends of the current window, calls in flight included', async () => {
    const budget = new RateBudget({ limit: 5, windowMs: 1_000, margin: 0 });
    await budget.finish('x', await budget.acquire('x', Date.now() + 1_000));
    await budget.acquire('x', Date.now() + 1_000);
    expect(await budget.used('x')).toBe(2);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(await budget.used('x')).toBe(1);
  });

  it('starts queued calls in order as the window frees, a window’s worth at a time', async () => {
    const budget = new RateBudget({ limit: 2, windowMs: 400, margin: 0 });
    const { started, slots } = queue(budget, ['a', 'b', 'c', 'd', 'e'], Date.now() + 5_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['a', 'b']);
    for (const name of ['a', 'b']) await budget.finish('x', slots.get(name)!);
    await vi.advanceTimersByTimeAsync(399);
    expect(started).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(2);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps a margin of the limit unused and budgets each licensee apart', async () => {
    const budget = new RateBudget({ limit: 20, windowMs: 10_000, margin: 0.05 });
    expect(budget.effectiveLimit).toBe(19);
    const deadline = Date.now() + 200;
    const first = queue(
      budget,
      Array.from({ length: 20 }, (_, i) => `a${i}`),
      deadline,
      'a',
    );
    const other = queue(
      budget,
      Array.from({ length: 19 }, (_, i) => `b${i}`),
      deadline,
      'b',
    );
    await vi.advanceTimersByTimeAsync(200);
    // Reads: 19 less the writes' share (WRITE_SHARE), 18 each.
    expect([first.started.length, other.started.length]).toEqual([18, 18]);
    expect((await Promise.all(first.outcomes)).filter((e) => e instanceof RateLimitedError)).toHaveLength(2);
  });

  it('holds everything back while paused', async () => {
    const budget = new RateBudget({ limit: 10, windowMs: 1_000, margin: 0 });
    budget.pause('x', Date.now() + 300);
    const { started } = queue(budget, ['a'], Date.now() + 2_000);
    await vi.advanceTimersByTimeAsync(299);
    expect(started).toEqual([]);
    await vi.advanceTimersByTimeAsync(2);
    expect(started).toEqual(['a']);
  });

  it('caps a Retry-After at the window (a stray Retry-After: 86400 must not freeze a licensee for a day)', async () => {
    const budget = new RateBudget({ limit: 10, windowMs: 60_000, margin: 0 });
    const slot = await budget.acquire('x', Date.now() + 1_000);
    expect(budget.throttle('x', slot, 86_400_000)).toBe(60_000);
    await budget.finish('x', slot);
    const { started } = queue(budget, ['a'], Date.now() + 120_000);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(started).toEqual([]);
    await vi.advanceTimersByTimeAsync(2);
    expect(started).toEqual(['a']);
  });

  it('after a 429 without Retry-After, probes one call at a time with backoff 1 s, 2 s, 4 s … and resumes on the first success (not a whole window)', async () => {
    const budget = new RateBudget({ limit: 100, windowMs: 60_000, margin: 0 });
    const first = await budget.acquire('x', Date.now() + 100_000);
    expect(budget.throttle('x', first, undefined)).toBe(1_000);
    await budget.finish('x', first);
    const { started, slots } = queue(budget, ['a', 'b', 'c', 'd'], Date.now() + 100_000);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(started).toEqual(['a']); // one probe, the others wait for its answer
    expect(budget.throttle('x', slots.get('a')!, undefined)).toBe(2_000);
    await budget.finish('x', slots.get('a')!);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(started).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(2);
    expect(started).toEqual(['a', 'b']);
    expect(budget.throttle('x', slots.get('b')!, undefined)).toBe(4_000);
    await budget.finish('x', slots.get('b')!);
    await vi.advanceTimersByTimeAsync(4_001);
    expect(started).toEqual(['a', 'b', 'c']);
    budget.recovered('x');
    await budget.finish('x', slots.get('c')!);
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  // Fault: setTimeout fires after 1 ms for delays over 2^31 - 1 ms, so such a waiter was refused at once.
  it.each([
    ['no deadline (Infinity)', Infinity],
    ['a deadline beyond what setTimeout holds', Date.now() + 2 ** 32],
  ])('a call with %s waits for a slot instead of being refused at once', async (_name, deadline) => {
    const budget = new RateBudget({ limit: 1, windowMs: 1_000, margin: 0 });
    const held = await budget.acquire('x', Date.now() + 1_000);
    const { started, outcomes } = queue(budget, ['a'], deadline);
    await vi.advanceTimersByTimeAsync(100);
    expect(budget.waiting('x')).toBe(1);
    await budget.finish('x', held);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(started).toEqual(['a']);
    expect(await outcomes[0]).toBeUndefined();
  });

  // Fault: close left wake timers and queued waiters alive.
  it('close refuses every queued call and leaves no timer behind', async () => {
    const budget = new RateBudget({ limit: 1, windowMs: 60_000, margin: 0 });
    await budget.finish('x', await budget.acquire('x', Date.now() + 1_000));
    const { outcomes } = queue(budget, ['a', 'b'], Date.now() + 300_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    budget.close();
    const errors = (await Promise.all(outcomes)) as UpstreamError[];
    expect(errors.map((e) => e.code)).toEqual(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);
    expect(vi.getTimerCount()).toBe(0);
    expect(((await budget.acquire('x', Date.now() + 1_000).catch((e: unknown) => e)) as UpstreamError).code).toBe(
      'UPSTREAM_UNAVAILABLE',
    );
  });

  it('a 429 to a call sent before probing began does not lengthen the backoff', async () => {
    const budget = new RateBudget({ limit: 100, windowMs: 60_000, margin: 0 });
    const burst = await Promise.all(Array.from({ length: 5 }, () => budget.acquire('x', Date.now() + 10_000)));
    expect(burst.map((slot) => budget.throttle('x', slot, undefined))).toEqual([1_000, 1_000, 1_000, 1_000, 1_000]);
  });
});

describe('client.close', () => {
  // Fault: client.close() did not close the budget: queued calls waited on after it.
  it('refuses the calls still waiting for the budget', async () => {
    const client = clientFor({ url: 'http://127.0.0.1:9' }, { rateLimit: 1, rateMargin: 0 });
    await client.budget.acquire(LICENSEE_1001.systemIdentifier, Date.now() + 1_000);
    const waiting = client.budget.acquire(LICENSEE_1001.systemIdentifier, Date.now() + 60_000).catch((e: unknown) => e);
    await client.close();
    expect(((await waiting) as UpstreamError).code).toBe('UPSTREAM_UNAVAILABLE');
  });
});
