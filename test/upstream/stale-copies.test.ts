import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.ts';
import { MemoryCacheStore } from '../../src/upstream/cache.ts';
import type { UpstreamClient, UpstreamOptions } from '../../src/upstream/client.ts';
import { RateLimitedError, UpstreamError } from '../../src/upstream/errors.ts';
import { StaleCopies } from '../../src/upstream/stale-copies.ts';
import { clientFor, count, emulatorAndClient, LICENSEE_1001 } from '../helpers/upstream.ts';

/**
 * When the licensee's budget cannot serve a read before its deadline, the last answer kept of that
 * read (licensee, endpoint, parameters) answers it, with its age, when it is no older than
 * staleMaxMs and no drop of its tags came since. Otherwise RATE_LIMITED, as before.
 */
let emulator: Emulator;
let idle: UpstreamClient;
beforeAll(async () => {
  ({ emulator, client: idle } = await emulatorAndClient({ rateLimit: false }));
  await idle.close();
});
afterAll(() => emulator.close());

let now: number;
let client: UpstreamClient;
/** A client on a clock the test moves, whose budget of `rateLimit` sends per minute fills fast. */
const clocked = (options: Partial<UpstreamOptions> = {}) =>
  clientFor(emulator, {
    now: () => now,
    rateLimit: 3,
    rateMargin: 0,
    rateWindowMs: 60_000,
    deadlineMs: 1_000,
    pageTtlMs: 5_000,
    staleMaxMs: 600_000,
    ...options,
  });
beforeEach(() => {
  emulator.state.reset();
  now = Date.now();
});

const PAGE = { eventId: 5001, page: 1 } as const;

/** Whatever the promise settles to: its value, or the error. */
const outcome = (p: Promise<unknown>) => p.catch((e: unknown) => e);

describe('stale rather than refused', () => {
  afterEach(() => client.close());

  it('a read the spent budget refuses is answered from the copy kept of it, with the copy’s age', async () => {
    client = clocked();
    const fresh = await client.call(LICENSEE_1001, 'getreservation', PAGE); // the authenticate and this: 2 of 3
    const count_ = await client.call(LICENSEE_1001, 'getreservationpagecount', { eventId: 5001 }); // 3 of 3
    now += 42_500; // past the page lifetime, within the budget's window
    const ages: number[] = [];
    const stale = await client.call(LICENSEE_1001, 'getreservation', PAGE, { onStale: (ms) => ages.push(ms) });
    const staleCount = await client.call(
      LICENSEE_1001,
      'getreservationpagecount',
      { eventId: 5001 },
      { onStale: (ms) => ages.push(ms) },
    );
    // The page cache's own value, not a copy of it.
    expect(stale).toBe(fresh);
    expect(staleCount).toBe(count_);
    expect(ages).toEqual([42_500, 42_500]);
    expect(count(emulator, 'getreservation')).toBe(1);
  });

  it('a read within the page lifetime is a cache hit, not stale; once the budget frees, a fresh read again', async () => {
    client = clocked({ rateLimit: 2 });
    await client.call(LICENSEE_1001, 'getreservation', PAGE);
    const ages: number[] = [];
    await client.call(LICENSEE_1001, 'getreservation', PAGE, { onStale: (ms) => ages.push(ms) });
    expect(ages).toEqual([]);
    now += 61_000;
    let sent = false;
    await client.call(LICENSEE_1001, 'getreservation', PAGE, {
      onStale: (ms) => ages.push(ms),
      onSent: () => (sent = true),
    });
    expect(ages).toEqual([]);
    expect(sent).toBe(true);
  });

  it('with no copy of the read, RATE_LIMITED with a retry time, as before', async () => {
    client = clocked({ rateLimit: 2 });
    await client.call(LICENSEE_1001, 'getreservation', PAGE);
    now += 10_000;
    const other = await outcome(client.call(LICENSEE_1001, 'getreservation', { eventId: 5001, page: 2 }));
    expect(other).toBeInstanceOf(RateLimitedError);
    expect((other as RateLimitedError).retryAfterSeconds).toBeGreaterThan(0);
  });

  it('a copy older than staleMaxMs is not served: RATE_LIMITED', async () => {
    client = clocked({ rateLimit: 2, staleMaxMs: 30_000 });
    await client.call(LICENSEE_1001, 'getreservation', PAGE);
    now += 30_000;
    const ages: number[] = [];
    await client.call(LICENSEE_1001, 'getreservation', PAGE, { onStale: (ms) => ages.push(ms) });
    expect(ages).toEqual([30_000]);
    now += 1;
    const late = await outcome(client.call(LICENSEE_1001, 'getreservation', PAGE));
    expect((late as UpstreamError).code).toBe('RATE_LIMITED');
  });

  it('staleMaxMs 0 keeps no copy: RATE_LIMITED', async () => {
    client = clocked({ rateLimit: 2, staleMaxMs: 0 });
    await client.call(LICENSEE_1001, 'getreservation', PAGE);
    now += 10_000;
    expect(((await outcome(client.call(LICENSEE_1001, 'getreservation', PAGE))) as UpstreamError).code).toBe(
      'RATE_LIMITED',
    );
  });

  it('our own write drops the copies it changes: never served stale', async () => {
    client = clocked({ rateLimit: 4 });
    const page = await client.call(LICENSEE_1001, 'getreservation', PAGE);
    await client.call(LICENSEE_1001, 'getreservationpagecount', { eventId: 5001 });
    const first = page.at(0)!;
    await client.call(LICENSEE_1001, 'postcustomfieldvalue', {
      customFieldId: 1,
      value: 'late arrival',
      reservationId: first.reservationNumber,
    }); // 4 of 4
    now += 10_000;
    expect(((await outcome(client.call(LICENSEE_1001, 'getreservation', PAGE))) as UpstreamError).code).toBe(
      'RATE_LIMITED',
    );
    // A custom field's value changes no count: the page count's copy still stands in.
    const ages: number[] = [];
    await client.call(LICENSEE_1001, 'getreservationpagecount', { eventId: 5001 }, { onStale: (ms) => ages.push(ms) });
    expect(ages).toEqual([10_000]);
  });

  it('a change feed’s drop (UpstreamClient.drop) drops the copies of that event only', async () => {
    client = clocked({ rateLimit: 3 });
    await client.call(LICENSEE_1001, 'getreservation', PAGE);
    await client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, page: 1 });
    await client.drop(LICENSEE_1001, 'getreservation|5001');
    now += 10_000;
    expect(((await outcome(client.call(LICENSEE_1001, 'getreservation', PAGE))) as UpstreamError).code).toBe(
      'RATE_LIMITED',
    );
    const ages: number[] = [];
    await client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, page: 1 }, { onStale: (ms) => ages.push(ms) });
    expect(ages).toEqual([10_000]);
  });

  it('another replica’s drop, heard through the cache store, drops the copy here too', async () => {
    let heard: (tag: string, changedUpstream: boolean) => void = () => undefined;
    const shared = Object.assign(new MemoryCacheStore(undefined, () => now), {
      onDropped: (listener: (tag: string, changedUpstream: boolean) => void) => void (heard = listener),
    });
    client = clocked({ rateLimit: 2, stores: { cache: shared } });
    await client.call(LICENSEE_1001, 'getreservation', PAGE);
    heard('1001|getreservation', false);
    now += 10_000;
    expect(((await outcome(client.call(LICENSEE_1001, 'getreservation', PAGE))) as UpstreamError).code).toBe(
      'RATE_LIMITED',
    );
  });

  it('another replica’s change read from the service (a feed’s poll) leaves the copy: it answers, marked stale, when the budget refuses', async () => {
    let heard: (tag: string, changedUpstream: boolean) => void = () => undefined;
    const shared = Object.assign(new MemoryCacheStore(undefined, () => now), {
      onDropped: (listener: (tag: string, changedUpstream: boolean) => void) => void (heard = listener),
    });
    client = clocked({ rateLimit: 2, stores: { cache: shared } });
    await client.call(LICENSEE_1001, 'getreservation', PAGE);
    heard('1001|getreservation|5001', true);
    now += 10_000;
    const ages: number[] = [];
    await client.call(LICENSEE_1001, 'getreservation', PAGE, { onStale: (ms) => ages.push(ms) });
    expect(ages).toEqual([10_000]);
  });

  it('a read that was in flight when its tags were dropped keeps no copy', async () => {
    client = clocked({ rateLimit: 2 });
    // Dropped once the request is on its way: its answer may predate the change.
    await client.call(LICENSEE_1001, 'getreservation', PAGE, {
      onSent: () => void client.drop(LICENSEE_1001, 'getreservation'),
    });
    now += 10_000;
    expect(((await outcome(client.call(LICENSEE_1001, 'getreservation', PAGE))) as UpstreamError).code).toBe(
      'RATE_LIMITED',
    );
  });
});

describe('the copies’ bound', () => {
  it('past its entries or its bytes, the oldest copies go first', () => {
    let clock = 0;
    const copies = new StaleCopies({ maxAgeMs: 60_000, maxEntries: 3, maxBytes: 1_000, now: () => clock });
    for (const key of ['a', 'b', 'c', 'd']) {
      clock += 1;
      copies.keep(key, { key }, [`t|${key}`], 100);
    }
    expect(copies.get('a')).toBeUndefined();
    expect(copies.get('b')?.value).toEqual({ key: 'b' });
    expect(copies.size()).toEqual({ entries: 3, bytes: 300 });
    copies.keep('big', { key: 'big' }, [], 850);
    // 300 + 850 is over 1000: b, then c, leave.
    expect(copies.get('b')).toBeUndefined();
    expect(copies.get('c')).toBeUndefined();
    expect(copies.get('d')?.value).toEqual({ key: 'd' });
    expect(copies.size()).toEqual({ entries: 2, bytes: 950 });
    // One answer larger than the whole bound is not kept (nor does it empty the store).
    copies.keep('huge', {}, [], 2_000);
    expect(copies.size()).toEqual({ entries: 2, bytes: 950 });
    copies.dropTag('t|d');
    expect(copies.size()).toEqual({ entries: 1, bytes: 850 });
  });

  it('a renewed copy moves to the end and its age starts again', () => {
    let clock = 0;
    const copies = new StaleCopies({ maxAgeMs: 60_000, maxEntries: 2, now: () => clock });
    copies.keep('a', 1, [], 10);
    clock = 5;
    copies.keep('b', 2, [], 10);
    clock = 7;
    copies.keep('a', 3, [], 10);
    copies.keep('c', 4, [], 10);
    expect(copies.get('b')).toBeUndefined();
    expect(copies.get('a')).toEqual({ value: 3, ageMs: 0 });
  });
});
