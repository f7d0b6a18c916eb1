import { describe, expect, it } from 'vitest';
import { changeKind, changesAmong, contentHash, type SeenRecord } from '../../src/changes/change.ts';
import { ChangeFeed, type FeedSource, STRETCH_FACTOR } from '../../src/changes/feed.ts';
import { baselineRetryMs } from '../../src/changes/gateway-feeds.ts';
import { upstreamSource } from '../../src/changes/upstream-source.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { BadInputError, NotFoundError, RateLimitedError, UpstreamUnavailableError } from '../../src/upstream/errors.ts';
import type { ReservationModel } from '../../src/upstream/records.ts';
import { until } from '../helpers/subscriptions.ts';

/** A reservation as the upstream layer decodes it; `raw` is what the hash reads. */
function reservation(
  reservationNumber: number,
  fields: { status?: string; createdDate?: string; modifiedDate?: string; note?: string } = {},
): ReservationModel {
  const record = {
    reservationNumber,
    eventId: 5003,
    status: fields.status ?? 'new',
    createdDate: fields.createdDate ?? '2027-01-15T12:00:00+00:00',
    modifiedDate: fields.modifiedDate ?? '2027-01-15T12:00:00+00:00',
  };
  return { ...record, raw: { ...record, note: fields.note } } as unknown as ReservationModel;
}

/** A source whose answer the test sets, recording each modifiedAfter it was asked for. */
function scriptedSource(initial: ReservationModel[]) {
  const asked: (string | undefined)[] = [];
  let answer = initial;
  const source: FeedSource = {
    read: async (modifiedAfter) => {
      asked.push(modifiedAfter);
      return answer;
    },
  };
  return { source, asked, answer: (records: ReservationModel[]) => (answer = records) };
}

describe('change kinds (issue 11)', () => {
  const baseline = Date.parse('2027-01-15T12:00:00Z');
  const seen = (cancelled: boolean): SeenRecord => ({ hash: 'before', cancelled });

  it('CREATED: first seen and made at or after the baseline', () => {
    expect(changeKind(reservation(1), undefined, baseline)).toBe('CREATED');
    expect(changeKind(reservation(1, { createdDate: '2027-01-15T11:59:00+00:00' }), undefined, baseline)).toBe(
      'CHANGED',
    );
  });

  it('CANCELLED: cancelled now and not when last seen, or first seen cancelled', () => {
    expect(changeKind(reservation(1, { status: 'cancelled' }), seen(false), baseline)).toBe('CANCELLED');
    expect(changeKind(reservation(1, { status: 'cancelled' }), undefined, baseline)).toBe('CANCELLED');
    // Cancelled before, changed again: CHANGED.
    expect(changeKind(reservation(1, { status: 'cancelled' }), seen(true), baseline)).toBe('CHANGED');
  });

  it('two changes in the same minute both arrive: the content hash tells them apart, not the time', () => {
    const known = new Map<number, SeenRecord>();
    expect(changesAmong([reservation(1, { note: 'first' })], known, baseline)).toHaveLength(1);
    // Same minute, other content: a change; the same content read again: none.
    expect(changesAmong([reservation(1, { note: 'second' })], known, baseline).map((change) => change.kind)).toEqual([
      'CHANGED',
    ]);
    expect(changesAmong([reservation(1, { note: 'second' })], known, baseline)).toEqual([]);
    expect(contentHash(reservation(1, { note: 'a' }))).not.toBe(contentHash(reservation(1, { note: 'b' })));
  });

  it('orders a batch by modification time, then reservation number', () => {
    const changes = changesAmong(
      [
        reservation(9, { modifiedDate: '2027-01-15T12:01:00+00:00' }),
        reservation(7, { modifiedDate: '2027-01-15T12:02:00+00:00' }),
        reservation(3, { modifiedDate: '2027-01-15T12:01:00+00:00' }),
      ],
      new Map(),
      baseline,
    );
    expect(changes.map((change) => change.reservation.reservationNumber)).toEqual([3, 9, 7]);
  });
});

describe('ChangeFeed (issue 11)', () => {
  it('polls from the latest modification seen (the service’s clock) minus one minute', async () => {
    const script = scriptedSource([
      reservation(1, { modifiedDate: '2027-01-15T10:30:00+00:00' }),
      reservation(2, { modifiedDate: '2027-01-15T11:45:00+00:00' }),
    ]);
    const feed = new ChangeFeed({ source: script.source, intervalMs: 60_000, budgetUsed: async () => 0 });
    await feed.start();
    feed.stop();
    await feed.poll();
    expect(script.asked).toEqual([undefined, '2027-01-15T11:44:00.000Z']);
  });

  it('with the service’s clock known, a poll looks back no further than the minute of the last read it finished: many records of one old minute are not read again (issue 28)', async () => {
    // The service as the emulator's demo data has it: many records modified in one minute, long ago.
    const records = [1, 2, 3, 4, 5].map((n) => reservation(n, { modifiedDate: '2027-01-15T12:00:00+00:00' }));
    let clock = Date.parse('2027-01-15T12:05:30Z');
    const asked: (string | undefined)[] = [];
    const pagesRead: number[] = [];
    const source: FeedSource = {
      read: async () => {
        throw new Error('read page by page');
      },
      // Pages of two records, filtered as the service filters: modified at or after the instant.
      async *pages(modifiedAfter) {
        asked.push(modifiedAfter);
        const matching = records.filter(
          (r) => !modifiedAfter || Date.parse(r.modifiedDate as unknown as string) >= Date.parse(modifiedAfter),
        );
        let pages = 0;
        for (let i = 0; ; i += 2) {
          pages++;
          yield matching.slice(i, i + 2);
          if (i + 2 > matching.length) break;
        }
        pagesRead.push(pages);
      },
    };
    const feed = new ChangeFeed({ source, intervalMs: 60_000, budgetUsed: async () => 0, serviceNow: () => clock });
    const told: string[] = [];
    feed.listen((changes) => told.push(...changes.map((c) => `${c.kind} ${c.reservation.reservationNumber}`)));
    // Polled by hand (the interval is a minute): the feed's own timer never fires during the test.
    await feed.start();
    await feed.poll();
    records.push(
      reservation(6, { createdDate: '2027-01-15T12:06:00+00:00', modifiedDate: '2027-01-15T12:06:00+00:00' }),
    );
    clock = Date.parse('2027-01-15T12:06:10Z');
    await feed.poll();
    clock = Date.parse('2027-01-15T12:08:00Z');
    await feed.poll();
    await feed.poll();
    feed.stop();
    expect(asked).toEqual([
      undefined,
      // The minute the feed began in, read right after the first page (issue 36), then polled.
      '2027-01-15T12:05:00.000Z',
      '2027-01-15T12:05:00.000Z',
      '2027-01-15T12:05:00.000Z',
      // Back one minute from the latest change (12:06), which the last read's minute (12:06) covers too.
      '2027-01-15T12:06:00.000Z',
      '2027-01-15T12:07:00.000Z',
    ]);
    // The minute's read ends before the baseline read (it ran between its pages).
    expect(pagesRead).toEqual([1, 3, 1, 1, 1, 1]);
    expect(told).toEqual(['CREATED 6']);
  });

  it('tells each change once, records already seen at the baseline are no change', async () => {
    const script = scriptedSource([reservation(1)]);
    const feed = new ChangeFeed({ source: script.source, intervalMs: 60_000, budgetUsed: async () => 0 });
    const told: number[][] = [];
    feed.listen((changes) => told.push(changes.map((change) => change.reservation.reservationNumber)));
    await feed.start();
    await feed.poll();
    script.answer([reservation(1), reservation(2)]);
    await feed.poll();
    await feed.poll();
    feed.stop();
    expect(told).toEqual([[2]]);
  });

  it('resumes where another feed stopped (issue 12): no read at start, its latest and its records carried over', async () => {
    const before = new ChangeFeed({
      source: scriptedSource([reservation(1), reservation(2, { modifiedDate: '2027-01-15T12:05:00+00:00' })]).source,
      intervalMs: 60_000,
      budgetUsed: async () => 0,
    });
    await before.start();
    before.stop();
    const state = before.state();

    const script = scriptedSource([
      reservation(1),
      reservation(2, { modifiedDate: '2027-01-15T12:05:00+00:00', status: 'cancelled' }),
    ]);
    const feed = new ChangeFeed({ source: script.source, intervalMs: 60_000, budgetUsed: async () => 0 });
    const told: string[] = [];
    feed.listen((changes) =>
      told.push(...changes.map((change) => `${change.kind} ${change.reservation.reservationNumber}`)),
    );
    await feed.start({ resume: { seen: new Map(state.seen), latest: state.latest, baseline: state.baseline } });
    expect(script.asked).toEqual([]);
    expect(feed.latestModification()).toBe(Date.parse('2027-01-15T12:05:00Z'));
    await feed.poll();
    feed.stop();
    // Record 1 is as the first feed knew it; record 2 was not cancelled then.
    expect(script.asked).toEqual(['2027-01-15T12:04:00.000Z']);
    expect(told).toEqual(['CANCELLED 2']);
  });

  it('starting from what was heard (issue 12): records modified in or after that minute are told, older ones are known', async () => {
    const script = scriptedSource([
      reservation(1, { modifiedDate: '2027-01-15T11:59:00+00:00' }),
      reservation(2, { modifiedDate: '2027-01-15T12:03:00+00:00' }),
      reservation(3, { createdDate: '2027-01-15T12:04:00+00:00', modifiedDate: '2027-01-15T12:04:00+00:00' }),
    ]);
    const feed = new ChangeFeed({ source: script.source, intervalMs: 60_000, budgetUsed: async () => 0 });
    const told: string[] = [];
    feed.listen((changes) =>
      told.push(...changes.map((change) => `${change.kind} ${change.reservation.reservationNumber}`)),
    );
    await feed.start({ heardUpTo: Date.parse('2027-01-15T12:03:30Z') });
    feed.stop();
    expect(script.asked).toEqual([undefined]);
    expect(told).toEqual(['CHANGED 2', 'CREATED 3']);
    expect(feed.latestModification()).toBe(Date.parse('2027-01-15T12:04:00Z'));
  });

  it('stretches the interval while the licensee’s budget is over 80 % used, and comes back after', async () => {
    let used = 0.5;
    const feed = new ChangeFeed({ source: scriptedSource([]).source, intervalMs: 1000, budgetUsed: async () => used });
    expect(await feed.nextDelayMs()).toBe(1000);
    used = 0.81;
    expect(await feed.nextDelayMs()).toBe(1000 * STRETCH_FACTOR);
    used = 0.8;
    expect(await feed.nextDelayMs()).toBe(1000);
  });

  it('polls with the background priority: its calls queue behind interactive queries', async () => {
    const options: unknown[] = [];
    const upstream = {
      call: async (_licensee: unknown, _name: string, _params: unknown, callOptions: unknown) => (
        options.push(callOptions), []
      ),
    } as unknown as UpstreamClient;
    await upstreamSource(upstream, { systemIdentifier: '1001', key: 'k', timeZone: 'UTC' }, 5003, {
      priority: 'background',
    }).read();
    expect(options).toEqual([{ priority: 'background' }]);
  });

  it('a fresh read neither reads nor keeps a kept page (a poll must see the service, and a large event’s pages must not stay in memory)', async () => {
    const options: unknown[] = [];
    const upstream = {
      call: async (_licensee: unknown, _name: string, _params: unknown, callOptions: unknown) => (
        options.push(callOptions), []
      ),
    } as unknown as UpstreamClient;
    await upstreamSource(upstream, { systemIdentifier: '1001', key: 'k', timeZone: 'UTC' }, 5003, {
      priority: 'background',
      fresh: true,
    }).read('2027-01-15T12:00:00Z');
    expect(options).toEqual([{ priority: 'background', keep: false }]);
  });
});

describe('a feed’s baseline read that fails for a moment', () => {
  /** An event of 1,500 records (two pages of the service's 1000), read through upstreamSource; `failing` pages fail once each. */
  function pagedUpstream(failing: Set<number>, error: () => Error) {
    const pagesAsked: number[] = [];
    const records = Array.from({ length: 1_500 }, (_, n) => ({
      reservationNumber: n + 1,
      modifiedDate: '2027-01-15T12:00:00+00:00',
    }));
    const upstream = {
      call: async (_licensee: unknown, _name: string, params: { page: number }) => {
        pagesAsked.push(params.page);
        if (failing.delete(params.page)) throw error();
        return records.slice((params.page - 1) * 1000, params.page * 1000);
      },
    } as unknown as UpstreamClient;
    return { upstream, pagesAsked };
  }
  const licensee = { systemIdentifier: '1001', key: 'k', timeZone: 'UTC' };

  it('reads the page that failed again, not the pages before it, and starts', async () => {
    const { upstream, pagesAsked } = pagedUpstream(new Set([2]), () => new UpstreamUnavailableError('503'));
    const waits: number[] = [];
    const feed = new ChangeFeed({
      source: upstreamSource(upstream, licensee, 5003),
      intervalMs: 60_000,
      budgetUsed: async () => 0,
      baselineRetryMs: (error, attempt) => (waits.push(attempt), baselineRetryMs(error, attempt) && 1),
    });
    await feed.start();
    feed.stop();
    expect(pagesAsked).toEqual([1, 2, 2]);
    expect(waits).toEqual([1]);
    expect(feed.footprint().known).toBe(1_500);
  });

  it('an unknown event fails at once; a passing fault fails after four more tries', async () => {
    const unknown = pagedUpstream(new Set([1]), () => new NotFoundError('no event 5003', 'eventId'));
    const feed = new ChangeFeed({
      source: upstreamSource(unknown.upstream, licensee, 5003),
      intervalMs: 60_000,
      budgetUsed: async () => 0,
      baselineRetryMs: (error, attempt) => baselineRetryMs(error, attempt) && 1,
    });
    await expect(feed.start()).rejects.toBeInstanceOf(NotFoundError);
    expect(unknown.pagesAsked).toEqual([1]);

    expect([1, 2, 3, 4, 5].map((attempt) => baselineRetryMs(new UpstreamUnavailableError('503'), attempt))).toEqual([
      1_000,
      2_000,
      4_000,
      8_000,
      undefined,
    ]);
    // A spent budget: its Retry-After, within 15 s.
    expect(baselineRetryMs(new RateLimitedError(6), 1)).toBe(6_000);
    expect(baselineRetryMs(new RateLimitedError(60), 1)).toBe(15_000);
    // Once the feed polls, a spent budget is waited out: each Retry-After (up to a window), twenty times.
    expect(baselineRetryMs(new RateLimitedError(90), 5, true)).toBe(60_000);
    expect(baselineRetryMs(new RateLimitedError(3), 20, true)).toBe(3_000);
    expect(baselineRetryMs(new RateLimitedError(3), 21, true)).toBeUndefined();
    expect(baselineRetryMs(new UpstreamUnavailableError('503'), 5, true)).toBeUndefined();
    expect(baselineRetryMs(new BadInputError('eventId: out of range', 'eventId'), 1)).toBeUndefined();
    expect(baselineRetryMs(new Error('a bug'), 1)).toBeUndefined();
  });
});

describe('a feed polls while its baseline read goes on (issue 28)', () => {
  it('tells a change made during a long baseline read before the read ends, and a record first seen cancelled only once the read says whether it was cancelled before', async () => {
    const old = '2027-01-15T12:00:00+00:00';
    // Two pages of the service's 1000; reservation 1200 (on page 2) was cancelled long ago.
    const before = Array.from({ length: 1_500 }, (_, n) =>
      reservation(n + 1, { createdDate: old, modifiedDate: old, status: n + 1 === 1200 ? 'cancelled' : 'new' }),
    );
    let service = before;
    let clock = Date.parse('2027-01-15T12:05:30Z');
    let openPage2!: () => void;
    const page2 = new Promise<void>((resolve) => (openPage2 = resolve));
    const source: FeedSource = {
      read: async () => {
        throw new Error('read page by page');
      },
      async *pages(modifiedAfter, firstPage = 1) {
        if (modifiedAfter) {
          yield service.filter((r) => Date.parse(r.modifiedDate as unknown as string) >= Date.parse(modifiedAfter));
          return;
        }
        // The baseline: page 2 as the service held it when the read began, answered late.
        const snapshot = service;
        for (let page = firstPage; page <= 2; page++) {
          if (page === 2) await page2;
          yield snapshot.slice((page - 1) * 1000, page * 1000);
        }
      },
    };
    const feed = new ChangeFeed({ source, intervalMs: 10, budgetUsed: async () => 0, serviceNow: () => clock });
    const told: string[] = [];
    feed.listen((changes) => told.push(...changes.map((c) => `${c.kind} ${c.reservation.reservationNumber}`)));
    const started = feed.start({ askedAt: Date.now() });
    // Page 1 read, then the rest of the minute the subscriber came in (the service as it found it).
    await until(() => feed.pollCount() > 0, 5_000);
    // While page 2 is awaited, in that minute (12:05): a booking, and a note on the long-cancelled
    // reservation; in the next minute, another booking.
    const joinMinute = '2027-01-15T12:05:00+00:00';
    const nextMinute = '2027-01-15T12:06:00+00:00';
    service = [
      ...before.map((r) =>
        r.reservationNumber === 1200
          ? reservation(1200, { createdDate: old, modifiedDate: joinMinute, status: 'cancelled', note: 'late' })
          : r,
      ),
      reservation(1501, { createdDate: joinMinute, modifiedDate: joinMinute }),
      reservation(1502, { createdDate: nextMinute, modifiedDate: nextMinute }),
    ];
    clock = Date.parse('2027-01-15T12:06:10Z');
    await until(() => told.length > 0, 5_000);
    expect(told).toEqual(['CREATED 1501', 'CREATED 1502']);
    expect(feed.baselineRead()).toBe(false);
    openPage2();
    await started;
    feed.stop();
    // Cancelled before the feed began (the read's page 2 says so): a change, not a cancellation.
    expect(told).toEqual(['CREATED 1501', 'CREATED 1502', 'CHANGED 1200']);
    expect(feed.baselineRead()).toBe(true);
  });
});

/** A feed polled by hand (its interval a minute) on the service clock `serviceNow`, and what it told (`KIND number`). */
function feedOn(source: FeedSource, serviceNow: () => number) {
  const feed = new ChangeFeed({ source, intervalMs: 60_000, budgetUsed: async () => 0, serviceNow });
  const told: string[] = [];
  feed.listen((changes) => told.push(...changes.map((c) => `${c.kind} ${c.reservation.reservationNumber}`)));
  return { feed, told };
}

describe('a fresh feed tells only what changed after its first subscriber came (issue 36)', () => {
  const joinMinute = '2027-01-15T12:05:00+00:00';

  it('a booking of the minute the subscriber came, already in the baseline read, is no change; its next change is', async () => {
    const script = scriptedSource([reservation(1, { createdDate: joinMinute, modifiedDate: joinMinute })]);
    let clock = Date.parse('2027-01-15T12:05:40Z');
    const { feed, told } = feedOn(script.source, () => clock);
    await feed.start({ askedAt: Date.now() });
    await feed.poll();
    expect(told).toEqual([]);
    clock = Date.parse('2027-01-15T12:06:20Z');
    script.answer([
      reservation(1, { createdDate: joinMinute, modifiedDate: '2027-01-15T12:06:00+00:00', status: 'cancelled' }),
    ]);
    await feed.poll();
    feed.stop();
    expect(told).toEqual(['CANCELLED 1']);
  });

  it('our own write that made the very state the baseline read saw in that minute is told once', async () => {
    const booked = reservation(7, { createdDate: joinMinute, modifiedDate: joinMinute });
    const script = scriptedSource([reservation(1), booked]);
    const { feed, told } = feedOn(script.source, () => Date.parse('2027-01-15T12:05:40Z'));
    await feed.start({ askedAt: Date.now() });
    // An older state of another record (heard late) is no change; the write's record is.
    feed.recordOwed([reservation(1, { note: 'older' }), booked]);
    feed.record([booked]);
    await feed.poll();
    feed.stop();
    expect(told).toEqual(['CREATED 7']);
  });

  it('a feed that may have missed changes (`missed`) tells the whole minute', async () => {
    const script = scriptedSource([reservation(1, { createdDate: joinMinute, modifiedDate: joinMinute })]);
    const { feed, told } = feedOn(script.source, () => Date.parse('2027-01-15T12:05:40Z'));
    await feed.start({ askedAt: Date.now(), missed: true });
    feed.stop();
    expect(told).toEqual(['CREATED 1']);
  });
});

describe('a service clock that steps back (issue 36)', () => {
  it('reads again from the minute the clock stepped to, telling what was made after the step once', async () => {
    const records = [reservation(1, { modifiedDate: '2027-01-15T12:00:00+00:00' })];
    let clock = Date.parse('2027-01-15T12:00:30Z');
    const asked: (string | undefined)[] = [];
    const source: FeedSource = {
      read: async (modifiedAfter) => {
        asked.push(modifiedAfter);
        return records.filter(
          (r) => !modifiedAfter || Date.parse(r.modifiedDate as unknown as string) >= Date.parse(modifiedAfter),
        );
      },
    };
    const { feed, told } = feedOn(source, () => clock);
    await feed.start();
    // Five minutes ahead: a booking then is told.
    clock += 5 * 60_000;
    records.push(
      reservation(2, { createdDate: '2027-01-15T12:05:00+00:00', modifiedDate: '2027-01-15T12:05:00+00:00' }),
    );
    await feed.poll();
    // Three minutes back: a booking now is dated before the feed's latest change.
    clock -= 3 * 60_000;
    records.push(
      reservation(3, { createdDate: '2027-01-15T12:02:00+00:00', modifiedDate: '2027-01-15T12:02:00+00:00' }),
    );
    await feed.poll();
    clock += 10_000;
    records.push(
      reservation(4, { createdDate: '2027-01-15T12:02:00+00:00', modifiedDate: '2027-01-15T12:02:00+00:00' }),
    );
    await feed.poll();
    await feed.poll();
    feed.stop();
    expect(told).toEqual(['CREATED 2', 'CREATED 3', 'CREATED 4']);
    // Before the step: from the minute before the latest change; after it, from the minute the
    // clock may have stepped to, then from the last read's minute on the clock as it is now.
    expect(asked.slice(3)).toEqual([
      '2027-01-15T12:02:00.000Z',
      '2027-01-15T12:02:00.000Z',
      '2027-01-15T12:02:00.000Z',
    ]);
  });
});
