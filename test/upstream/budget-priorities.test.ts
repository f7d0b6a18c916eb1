import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CallPriority, RateBudget } from '../../src/upstream/budget.ts';
import { RateLimitedError } from '../../src/upstream/errors.ts';

/**
 * Who the budget serves first when it must choose, on vitest's fake clock: first pages and counts
 * (interactive), then deep pages, then the background lane (the change feeds, read-ahead), and a
 * read-ahead only from headroom nobody waits for.
 */
describe('RateBudget priorities', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Queues calls by name and priority; `started` lists those given a slot, in order (each gives it back at once). */
  function take(budget: RateBudget, calls: [string, CallPriority][], deadline = Date.now() + 60_000) {
    const started: string[] = [];
    const outcomes = calls.map(([name, priority]) =>
      budget.acquire('x', deadline, undefined, priority).then(
        async (slot) => {
          started.push(name);
          await budget.finish('x', slot);
        },
        (error: unknown) => error,
      ),
    );
    return { started, outcomes };
  }

  /** Fills the window until 1 s from now, with writes: reads never take its last tenth (WRITE_SHARE). */
  async function fillWindow(budget: RateBudget, limit: number) {
    for (let i = 0; i < limit; i++)
      await budget.finish('x', await budget.acquire('x', Date.now() + 1_000, undefined, 'write'));
  }

  /**
   * 20 a window (a floor of 2, 18 for reads), the window full until t0 + 1 s; then two polls, which
   * take the floor, and 40 first pages queued behind them.
   */
  async function floorTakenBeforeFortyPages() {
    const budget = new RateBudget({ limit: 20, windowMs: 1_000, margin: 0 });
    const t0 = Date.now();
    await fillWindow(budget, 20);
    const queued = take(budget, [
      ['poll-1', 'background'],
      ['poll-2', 'background'],
      ...Array.from({ length: 40 }, (_, i) => [`page-${i + 1}`, 'interactive'] as [string, CallPriority]),
    ]);
    await vi.advanceTimersByTimeAsync(0);
    return { budget, t0, ...queued };
  }

  it('serves first pages and counts before deep pages, and the background lane after both, in arrival order within each', async () => {
    const budget = new RateBudget({ limit: 1, windowMs: 100, margin: 0 });
    const held = await budget.acquire('x', Date.now() + 1_000);
    const { started, outcomes } = take(budget, [
      ['poll-1', 'background'],
      ['page-3', 'deep'],
      ['first-page', 'interactive'],
      ['page-2', 'deep'],
      ['count', 'interactive'],
      ['read-ahead', 'background'],
    ]);
    await budget.finish('x', held);
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all(outcomes);
    expect(started).toEqual(['first-page', 'count', 'page-3', 'page-2', 'poll-1', 'read-ahead']);
  });

  it('a deep page pushed back by a first page that came after it is refused at once when its turn can no longer come before its deadline', async () => {
    const budget = new RateBudget({ limit: 1, windowMs: 1_000, margin: 0 });
    const t0 = Date.now();
    await budget.finish('x', await budget.acquire('x', t0 + 1_000)); // the slot frees at t0 + 1 s
    const deep = budget.acquire('x', t0 + 1_500, undefined, 'deep').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(0);
    expect(budget.waiting('x')).toBe(1); // first in line: its slot comes at t0 + 1 s
    const first = budget.acquire('x', t0 + 5_000, undefined, 'interactive');
    await vi.advanceTimersByTimeAsync(0);
    // Second in line now: its slot would come a window after the first page's, at t0 + 2 s.
    const refused = await deep;
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterSeconds).toBe(2);
    expect(budget.waiting('x')).toBe(1);
    await vi.advanceTimersByTimeAsync(1_001);
    await expect(first).resolves.toEqual(expect.any(String));
  });

  it('keeps the background lane a tenth of the window while interactive calls keep the budget busy: a poll goes ahead of first pages queued before it, up to that floor', async () => {
    // 20 a window, 18 for reads: a floor of 2 background calls a window.
    const budget = new RateBudget({ limit: 20, windowMs: 1_000, margin: 0 });
    await fillWindow(budget, 20);
    const interactive = Array.from(
      { length: 30 },
      (_, i) => [`page-${i + 1}`, 'interactive'] as [string, CallPriority],
    );
    const { started, outcomes } = take(budget, [
      ...interactive.slice(0, 10),
      ['poll-1', 'background'],
      ...interactive.slice(10, 20),
      ['poll-2', 'background'],
      ['poll-3', 'background'],
      ...interactive.slice(20),
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await Promise.all(outcomes)).toEqual(Array(33).fill(undefined));
    const pages = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `page-${from + i}`);
    expect(started).toEqual([
      // The first window that frees: two polls first (the floor), then the first pages in arrival order.
      'poll-1',
      'poll-2',
      ...pages(1, 16),
      // The next: the third poll first again, then the rest.
      'poll-3',
      ...pages(17, 30),
    ]);
  });

  it('gives the background lane no more than its floor: past it, polls wait behind every first page', async () => {
    const budget = new RateBudget({ limit: 20, windowMs: 1_000, margin: 0 });
    await fillWindow(budget, 20);
    const { started, outcomes } = take(budget, [
      ['poll-1', 'background'],
      ['poll-2', 'background'],
      ['poll-3', 'background'],
      ['poll-4', 'background'],
      ...Array.from({ length: 10 }, (_, i) => [`page-${i + 1}`, 'interactive'] as [string, CallPriority]),
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(outcomes);
    expect(started.slice(0, 14)).toEqual([
      'poll-1',
      'poll-2',
      ...Array.from({ length: 10 }, (_, i) => `page-${i + 1}`),
      'poll-3',
      'poll-4',
    ]);
  });

  it('keeps a poll past the floor waiting for the lane’s next place when that comes before its deadline, instead of refusing it behind every first page', async () => {
    // 20 a window, 18 for reads: a floor of 2. Two polls take the floor when the window frees at
    // t0 + 1 s; a third is moved when the first of them leaves the window, at t0 + 2 s, ahead of the
    // 24 pages still queued then (behind them it would wait until t0 + 3 s, past its deadline).
    const { budget, t0, started, outcomes } = await floorTakenBeforeFortyPages();
    const third = take(budget, [['poll-3', 'background']], t0 + 2_500);
    await vi.advanceTimersByTimeAsync(0);
    expect(budget.waiting('x')).toBe(43); // queued, not refused
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await Promise.all([...outcomes, ...third.outcomes])).toEqual(Array(43).fill(undefined));
    expect(started.slice(0, 18)).toEqual([
      'poll-1',
      'poll-2',
      ...Array.from({ length: 16 }, (_, i) => `page-${i + 1}`),
    ]);
    expect(third.started).toEqual(['poll-3']);
    // poll-3 starts first in the second window, before page-17.
    expect(started.indexOf('page-17')).toBe(18);
  });

  it('still refuses at once a poll whose place in the lane cannot come before its deadline', async () => {
    const { budget, t0, outcomes } = await floorTakenBeforeFortyPages();
    const third = take(budget, [['poll-3', 'background']], t0 + 1_500);
    await vi.advanceTimersByTimeAsync(0);
    const [refused] = await Promise.all(third.outcomes);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).why).toBe('hopeless');
    expect((refused as RateLimitedError).retryAfterSeconds).toBe(2);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(outcomes);
  });

  it('gives a baseline’s pages at most half the background lane’s floor: the feeds’ polls keep the other half', async () => {
    // 40 a window: a floor of 4 background calls a window, of which 2 for a baseline's pages.
    const budget = new RateBudget({ limit: 40, windowMs: 1_000, margin: 0 });
    await fillWindow(budget, 40);
    const { started, outcomes } = take(budget, [
      ...Array.from({ length: 4 }, (_, i) => [`baseline-${i + 1}`, 'bulk'] as [string, CallPriority]),
      ...Array.from({ length: 10 }, (_, i) => [`page-${i + 1}`, 'interactive'] as [string, CallPriority]),
      ['poll-1', 'background'],
      ['poll-2', 'background'],
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(outcomes);
    expect(started).toEqual([
      // The first window that frees: the baseline's first page (alone when it came), then the polls
      // ahead of its second (polls first), which ends its half of the floor; the first pages; the
      // rest of the baseline last.
      'baseline-1',
      'poll-1',
      'poll-2',
      'baseline-2',
      ...Array.from({ length: 10 }, (_, i) => `page-${i + 1}`),
      'baseline-3',
      'baseline-4',
    ]);
  });

  describe('a read-ahead (acquireIfFree)', () => {
    it('takes a free slot at once when nothing waits and the budget has headroom', async () => {
      const budget = new RateBudget({ limit: 10, windowMs: 1_000, margin: 0 });
      const slot = await budget.acquireIfFree('x');
      expect(await budget.used('x')).toBe(1);
      await budget.finish('x', slot);
    });

    it('never takes a slot while an interactive call waits for one, and does not queue: refused at once', async () => {
      const budget = new RateBudget({ limit: 2, windowMs: 1_000, margin: 0 });
      const held = [await budget.acquire('x', Date.now() + 5_000), await budget.acquire('x', Date.now() + 5_000)];
      const { started, outcomes } = take(budget, [['first-page', 'interactive']]);
      await vi.advanceTimersByTimeAsync(0);
      expect(budget.waiting('x')).toBe(1);
      const readAhead = budget.acquireIfFree('x').catch((e: unknown) => e);
      expect(await readAhead).toBeInstanceOf(RateLimitedError);
      expect(budget.waiting('x')).toBe(1);
      // The slot that frees goes to the call that waited.
      await budget.finish('x', held[0]!);
      await vi.advanceTimersByTimeAsync(1_001);
      await Promise.all(outcomes);
      expect(started).toEqual(['first-page']);
      // Deep pages and the feeds' polls waiting hold a read-ahead back too.
      await budget.finish('x', held[1]!);
      const deep = take(budget, [
        ['page-2', 'deep'],
        ['poll', 'background'],
        ['page-3', 'deep'],
        ['page-4', 'deep'],
      ]);
      await vi.advanceTimersByTimeAsync(0);
      expect(budget.waiting('x')).toBeGreaterThan(0);
      expect(await budget.acquireIfFree('x').catch((e: unknown) => e)).toBeInstanceOf(RateLimitedError);
      await vi.advanceTimersByTimeAsync(5_000);
      await Promise.all(deep.outcomes);
      expect(deep.started).toEqual(['page-2', 'page-3', 'page-4', 'poll']);
    });

    it('loses the last free slots to interactive calls asked for in the same turn, even when asked first', async () => {
      // 5 a window; a read-ahead may count up to 4 (HEADROOM_SHARE): 3 used, so it fits, and so do two calls.
      const budget = new RateBudget({ limit: 5, windowMs: 1_000, margin: 0 });
      for (let i = 0; i < 3; i++) await budget.acquire('x', Date.now() + 5_000);
      const readAhead = budget.acquireIfFree('x').then(
        () => 'served',
        (e: unknown) => e,
      );
      const { started, outcomes } = take(budget, [
        ['first-page', 'interactive'],
        ['count', 'interactive'],
      ]);
      await vi.advanceTimersByTimeAsync(0);
      expect(await readAhead).toBeInstanceOf(RateLimitedError);
      await Promise.all(outcomes);
      expect(started).toEqual(['first-page', 'count']);
    });

    it('keeps a fifth of the window for the calls users wait for, even when nobody waits yet', async () => {
      const budget = new RateBudget({ limit: 5, windowMs: 1_000, margin: 0 });
      for (let i = 0; i < 3; i++) await budget.acquire('x', Date.now() + 5_000);
      await budget.acquireIfFree('x'); // the 4th of 5
      const refused = await budget.acquireIfFree('x').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RateLimitedError);
      expect(await budget.used('x')).toBe(4);
      // A licensee of one call a window never reads ahead.
      const tiny = new RateBudget({ limit: 1, windowMs: 1_000, margin: 0 });
      expect(await tiny.acquireIfFree('x').catch((e: unknown) => e)).toBeInstanceOf(RateLimitedError);
      expect(await tiny.used('x')).toBe(0);
    });

    it('is refused while the licensee is paused or probing after a 429', async () => {
      const budget = new RateBudget({ limit: 10, windowMs: 60_000, margin: 0 });
      budget.pause('x', Date.now() + 1_000);
      expect(await budget.acquireIfFree('x').catch((e: unknown) => e)).toBeInstanceOf(RateLimitedError);
      await vi.advanceTimersByTimeAsync(1_001);
      const slot = await budget.acquireIfFree('x');
      budget.throttle('x', slot, undefined); // probing from now on
      await budget.finish('x', slot);
      await vi.advanceTimersByTimeAsync(1_001);
      expect(await budget.acquireIfFree('x').catch((e: unknown) => e)).toBeInstanceOf(RateLimitedError);
      expect(budget.waiting('x')).toBe(0);
    });
  });
});

describe('the background lane’s floor on one replica (issue 37)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('keeps the floor free of reads for two windows after a poll: a poll that comes after reads filled the window gets a slot at once', async () => {
    // 20 a window: 2 for writes alone, a floor of 2 for the background lane.
    const budget = new RateBudget({ limit: 20, windowMs: 1_000, margin: 0 });
    await budget.finish('x', await budget.acquire('x', Date.now() + 1_000, undefined, 'background'));
    // The poll left the window; the feed's next poll comes a stretched interval later.
    await vi.advanceTimersByTimeAsync(1_500);
    let reads = 0;
    const outcomes = Array.from({ length: 30 }, () =>
      budget.acquire('x', Date.now() + 200, undefined, 'interactive').then(
        () => void reads++,
        () => undefined,
      ),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toBe(16);
    let polled = false;
    void budget.acquire('x', Date.now() + 200, undefined, 'background').then(() => void (polled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(polled).toBe(true);
    await vi.advanceTimersByTimeAsync(300);
    await Promise.all(outcomes);
  });
});
