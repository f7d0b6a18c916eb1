import { describe, expect, it } from 'vitest';
import { countJudgement, FreshnessLedger, noFreshness, type PageRead } from '../../bench/compare/freshness.ts';
import {
  type LiveEventRun,
  liveEventGoals,
  liveEventTable,
  noKindCounts,
  tallyLogLine,
} from '../../bench/compare/s10-report.ts';

/** S10's pure parts: the freshness check of page answers against the bookings, its table and goals. */

const POLL = 15_000;
const MARGIN = 1_000;
const T = 1_000_000;

function read(over: Partial<PageRead>): PageRead {
  return {
    eventId: 5002,
    unfiltered: false,
    startedAt: T,
    endedAt: T + 50,
    totalCount: null,
    nodes: [],
    staleMarked: false,
    ...over,
  };
}

/** Reservation 7 of event 5002 set ACCEPTED at the emulator, answered 5 ms later. */
const ACCEPTED_7 = {
  eventId: 5002,
  reservationNumber: 7,
  kind: 'changed',
  status: 'ACCEPTED',
  sentAt: T,
  answeredAt: T + 5,
} as const;

describe('S10 freshness ledger', () => {
  const ledger = () => new FreshnessLedger(new Map([[5002, 1000]]), POLL, MARGIN);

  it('checks nothing before a change is due: a poll interval after the booking, plus the margin', () => {
    const l = ledger();
    l.record(ACCEPTED_7);
    const old = { nodes: [{ reservationNumber: 7, status: 'NEW' }] };
    expect(l.judge(read({ ...old, startedAt: T + 5 + POLL + MARGIN - 1 })).verdict).toBe('unchecked');
    const late = l.judge(read({ ...old, startedAt: T + 5 + POLL + MARGIN + 250 }));
    expect(late).toMatchObject({ verdict: 'older', lateMs: 250, afterTell: false });
    expect(late.what).toContain('reservation 7 NEW, not ACCEPTED');
    const current = l.judge(read({ nodes: [{ reservationNumber: 7, status: 'ACCEPTED' }], startedAt: T + 20_000 }));
    expect(current.verdict).toBe('current');
    // Reservations nobody booked are not checked.
    expect(l.judge(read({ nodes: [{ reservationNumber: 8, status: 'NEW' }], startedAt: T + 60_000 })).verdict).toBe(
      'unchecked',
    );
  });

  it('makes a change due sooner when the subscriber was told it (the feed polled)', () => {
    const l = ledger();
    l.record(ACCEPTED_7);
    l.told(7, 'ACCEPTED', T + 2_000);
    const old = { nodes: [{ reservationNumber: 7, status: 'NEW' }] };
    expect(l.judge(read({ ...old, startedAt: T + 2_000 + MARGIN - 1 })).verdict).toBe('unchecked');
    expect(l.judge(read({ ...old, startedAt: T + 2_000 + MARGIN + 10 }))).toMatchObject({
      verdict: 'older',
      lateMs: 10,
      afterTell: true,
    });
  });

  it('matches a tell that came before the booking was recorded, and only in the state it told', () => {
    const l = ledger();
    l.told(9, 'NEW', T + 1_000); // the poll read it before the booking's answer was read
    const created = l.record({
      eventId: 5002,
      reservationNumber: 9,
      kind: 'created',
      status: 'NEW',
      sentAt: T,
      answeredAt: T + 1_200,
    });
    expect(created.toldAt).toBe(T + 1_000);
    const changed = l.record({
      eventId: 5002,
      reservationNumber: 9,
      kind: 'changed',
      status: 'DECLINED',
      sentAt: T + 3_000,
      answeredAt: T + 3_010,
    });
    l.told(9, 'NEW', T + 4_000); // an older state told again is not this change
    expect(changed.toldAt).toBeNull();
    l.told(9, 'DECLINED', T + 5_000);
    expect(changed.toldAt).toBe(T + 5_000);
  });

  it('accepts the state of a later change sent before the answer came, not of one sent after', () => {
    const l = ledger();
    l.record(ACCEPTED_7);
    l.told(7, 'ACCEPTED', T + 1_000);
    l.record({
      eventId: 5002,
      reservationNumber: 7,
      kind: 'changed',
      status: 'DECLINED',
      sentAt: T + 5_000,
      answeredAt: T + 5_005,
    });
    const at = { startedAt: T + 4_900, endedAt: T + 5_100 };
    expect(l.judge(read({ ...at, nodes: [{ reservationNumber: 7, status: 'DECLINED' }] })).verdict).toBe('current');
    expect(l.judge(read({ ...at, nodes: [{ reservationNumber: 7, status: 'ACCEPTED' }] })).verdict).toBe('current');
    expect(
      l.judge(read({ startedAt: T + 4_000, endedAt: T + 4_100, nodes: [{ reservationNumber: 7, status: 'DECLINED' }] }))
        .verdict,
    ).toBe('older');
  });

  it("holds an unfiltered page's totalCount to the new reservations due, counting the newest missing", () => {
    const l = ledger();
    for (const [n, at] of [
      [1, T],
      [2, T + 10_000],
    ] as const)
      l.record({ eventId: 5002, reservationNumber: n, kind: 'created', status: 'NEW', sentAt: at, answeredAt: at });
    const after = T + 10_000 + POLL + MARGIN + 500;
    expect(l.judge(read({ unfiltered: true, totalCount: 1002, startedAt: after })).verdict).toBe('current');
    // One missing: at the least the newest, due 500 ms before.
    expect(l.judge(read({ unfiltered: true, totalCount: 1001, startedAt: after }))).toMatchObject({
      verdict: 'older',
      lateMs: 500,
      what: 'totalCount 1001, not at least 1002',
    });
    // Two missing: the older one was due 10.5 s before.
    expect(l.judge(read({ unfiltered: true, totalCount: 1000, startedAt: after })).lateMs).toBe(10_500);
    // Once one of them was told, one missing may be the other; two missing are certainly one told.
    l.told(1, 'NEW', T + 1_000);
    expect(l.judge(read({ unfiltered: true, totalCount: 1001, startedAt: after })).afterTell).toBe(false);
    expect(l.judge(read({ unfiltered: true, totalCount: 1000, startedAt: after })).afterTell).toBe(true);
    // A filtered page's count, or another event's, is not held to it.
    expect(l.judge(read({ unfiltered: false, totalCount: 3, startedAt: after })).verdict).toBe('unchecked');
    expect(l.judge(read({ eventId: 5003, unfiltered: true, totalCount: 3, startedAt: after })).verdict).toBe(
      'unchecked',
    );
  });

  it('counts older answers marked stale apart from unmarked ones, with examples of the latter', () => {
    const counts = noFreshness();
    const l = ledger();
    l.record({ eventId: 5002, reservationNumber: 7, kind: 'changed', status: 'ACCEPTED', sentAt: T, answeredAt: T });
    const at = T + POLL + MARGIN + 2_000;
    const stale = read({ nodes: [{ reservationNumber: 7, status: 'NEW' }], startedAt: at, staleMarked: true });
    countJudgement(counts, stale, l.judge(stale), 'event 5002, first page');
    const unmarked = read({ nodes: [{ reservationNumber: 7, status: 'NEW' }], startedAt: at });
    countJudgement(counts, unmarked, l.judge(unmarked), 'event 5002, first page');
    const fresh = read({ nodes: [{ reservationNumber: 7, status: 'ACCEPTED' }], startedAt: at });
    countJudgement(counts, fresh, l.judge(fresh), 'event 5002, first page');
    const none = read({ startedAt: at });
    countJudgement(counts, none, l.judge(none), 'event 5002, first page');
    expect(counts).toMatchObject({
      checked: 3,
      olderUnmarked: 1,
      olderUnmarkedAfterTell: 0,
      olderMarked: 1,
      maxLateMs: 2_000,
    });
    expect(counts.examples).toHaveLength(1);
    expect(counts.examples[0]).toContain('event 5002, first page: reservation 7 NEW, not ACCEPTED (2.0 s past due)');
  });
});

function run(over: Partial<LiveEventRun> = {}): LiveEventRun {
  return {
    seconds: 120,
    users: 30,
    pollMs: 15_000,
    load: [1.5, 2.25],
    pages: { ...noKindCounts(), operations: 1000, ok: 980, stale: 600, rateLimited: 20 },
    eventPages: { ...noKindCounts(), operations: 100, ok: 100 },
    hotelLists: { ...noKindCounts(), operations: 100, ok: 99, errors: 1, serverErrors: 1 },
    writes: {
      sent: 24,
      answered: 23,
      refused: 1,
      unanswered: 0,
      lost: 0,
      refusals: { RATE_LIMITED: 1 },
      p50Ms: 90,
      p95Ms: 400,
    },
    bookings: { created: 30, changed: 30, refused: 0 },
    told: { told: 0, p50Ms: Number.NaN, maxMs: Number.NaN },
    subscribers: { accepted: 3, of: 3, ended: [] },
    freshness: { ...noFreshness(), checked: 500 },
    calls: 400,
    upstream429: 0,
    busiestMinute: 214,
    feedPolls: 0,
    served: 1202,
    p50Ms: 60,
    p95Ms: 180,
    serverErrors: ['2026-11-28T00:00:00.000Z hotel list 5002 502: Bad gateway'],
    noAnswer: [],
    gatewayLog: { 'warning: change feed poll failed; polling again at the next interval (RATE_LIMITED hopeless)': 3 },
    ...over,
  };
}

describe('S10 report', () => {
  it('prints a column a run, the load beside it, and notes the 5xx', () => {
    const table = liveEventTable([run(), run({ load: [2, 3] })]);
    expect(table.split('\n')[0]).toBe('| S10 | run 1 | run 2 |');
    expect(table).toContain('| load average (1 min), start → end of the run | 1.50 → 2.25 | 2.00 → 3.00 |');
    expect(table).toContain('| 380 / 600 / 20 / 0 (0) / 0 of 1000 |');
    expect(table).toContain('| reservation pages answered with data (fresh or marked stale) | 98.0 % | 98.0 % |');
    expect(table).toContain('| 23 / 1 (1 RATE_LIMITED) / 0 of 24; 0 |');
    expect(table).toContain('| 0 of 60; – / – |');
    expect(table).toContain('| 0 / 0; – | 0 / 0; – |');
    expect(table).toContain('| 400 (0) / 1202 = 0.3328 |');
    expect(table).toContain(
      '- run 2, 5xx/INTERNAL_SERVER_ERROR: 2026-11-28T00:00:00.000Z hotel list 5002 502: Bad gateway',
    );
    expect(table).toContain(
      '| 3 × warning: change feed poll failed; polling again at the next interval (RATE_LIMITED hopeless) |',
    );
    expect(liveEventTable([run({ gatewayLog: {} })])).toContain(
      "| the gateway's warnings and errors during the run (its log) | none |",
    );
    expect(liveEventTable([])).toBe('');
  });

  it("tallies the gateway's warnings and errors by message, code and reason, and nothing else", () => {
    const into: Record<string, number> = {};
    const poll = (why?: string) =>
      JSON.stringify({
        level: 40,
        msg: 'change feed poll failed; polling again at the next interval',
        code: 'RATE_LIMITED',
        why,
      });
    tallyLogLine(poll('hopeless'), into);
    tallyLogLine(poll('hopeless'), into);
    tallyLogLine(poll(), into);
    tallyLogLine(JSON.stringify({ level: 50, msg: 'boom' }), into);
    tallyLogLine(JSON.stringify({ level: 30, msg: 'an audit line' }), into);
    tallyLogLine("Operators' pages at http://127.0.0.1:1/status", into);
    tallyLogLine('{"level":40, cut off', into);
    expect(into).toEqual({
      'warning: change feed poll failed; polling again at the next interval (RATE_LIMITED hopeless)': 2,
      'warning: change feed poll failed; polling again at the next interval (RATE_LIMITED)': 1,
      'error: boom': 1,
    });
  });

  it('judges the share answered on the median, and older answers, 429s and 5xx in every run', () => {
    const goals = liveEventGoals([
      run(),
      run({ pages: { ...noKindCounts(), operations: 100, ok: 90, stale: 10 } }),
      run({ freshness: { ...noFreshness(), olderUnmarked: 2, olderUnmarkedAfterTell: 1 }, serverErrors: [] }),
    ]);
    expect(goals.map((g) => [g.goal, g.met])).toEqual([
      ['S10: at least 95 % of reservation-page reads answered with data (fresh or marked stale)', true],
      ["S10: no answer older than the feed's last poll unless marked stale", false],
      ['S10: no upstream 429', true],
      ['S10: never a 5xx', false],
    ]);
    expect(goals[0]!.measured).toBe('98.0 % (stale 60.0 %) (runs: 98.0 %, 90.0 %, 98.0 %)');
    expect(goals[1]!.measured).toBe('2 (runs: 0, 0, 2), 1 after the feed told the change');
    expect(liveEventGoals([])).toEqual([]);
  });
});
