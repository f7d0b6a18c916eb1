import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReservationRecord } from '../../src/emulator/model.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  advanceClock,
  book,
  listen,
  type Subscriber,
  subscribeSse,
  subscribeWs,
  until,
  wsClient,
} from '../helpers/subscriptions.ts';

/*
 * `reservationChanged` as a client sees it (docs/clients.md, "Live reservation changes"), against the
 * emulator's bookings control, over a real port: GraphQL over SSE and graphql-ws.
 */
const INTERVAL_MS = 200;
let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: String(INTERVAL_MS) });
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const sse = (variables: Record<string, unknown>) => subscribeSse(fetch, server.url, variables);
const pollsOf = (eventId: number) =>
  t.gateway.changeFeeds.active().find((feed) => feed.eventId === eventId)?.polls ?? 0;
/** Two polls after now: the second began after everything written before this call. */
async function twoPolls(...eventIds: number[]): Promise<void> {
  const start = eventIds.map(pollsOf);
  await until(() => eventIds.every((eventId, i) => pollsOf(eventId) >= start[i]! + 2));
}
const record = (reservationNumber: number): ReservationRecord =>
  t.emulator.state.store.reservationsByNumber.get(reservationNumber)!;

interface Seen {
  kind: string;
  reservationNumber: number;
  status: string;
  hotelId: number;
}
/** Whether the stream's modification times never go back. */
const inModificationOrder = (s: Subscriber) => {
  const times = s.received.map((result) =>
    Date.parse((result.data?.reservationChanged as { modifiedAt: string }).modifiedAt),
  );
  return times.every((time, i) => i === 0 || time >= times[i - 1]!);
};
const changesOf = (s: Subscriber): Seen[] =>
  s.received.map((result) => {
    const change = result.data?.reservationChanged as
      | { kind: string; reservation: { reservationNumber: number; status: string; hotel: { hotelId: number } } }
      | undefined;
    if (!change) throw new Error(`not a change: ${JSON.stringify(result)}`);
    return {
      kind: change.kind,
      reservationNumber: change.reservation.reservationNumber,
      status: change.reservation.status,
      hotelId: change.reservation.hotel.hotelId,
    };
  });

describe('reservationChanged: three subscribers on 5003 (two filtered), one on 5002, a burst of 50 writes', () => {
  it('each receives exactly the changes its filter matches, once each, in modification order, from one poller per event', async () => {
    const store = t.emulator.state.store;
    const [h1, h2] = store.hotelsByEvent.get(5003)!.map((hotel) => hotel.hotelId) as [number, number];
    const pool = new Map(
      [5003, 5002].map((eventId) => [
        eventId,
        store.reservationsByEvent
          .get(eventId)!
          .filter((r) => r.status !== 'cancelled')
          .map((r) => r.reservationNumber),
      ]),
    );
    t.clearLog();

    const ws = wsClient(server.wsUrl);
    const all5003 = subscribeWs(ws, { eventId: 5003 });
    const atHotel = await sse({ eventId: 5003, filter: { hotelId: h1 } });
    // An enum in the filter: graphql-jit's subscribe refused it at each event (subscriptions stay on graphql-js).
    const cancelled = await sse({ eventId: 5003, filter: { reservationStatus: 'CANCELLED' } });
    const all5002 = subscribeWs(ws, { eventId: 5002 });
    await until(
      () =>
        t.gateway.changeFeeds.active().reduce((members, feed) => members + (feed.polls > 0 ? feed.members : 0), 0) ===
        4,
    );

    // Five phases of ten writes, each phase touching ten distinct reservations; the service's
    // clock moves 20 s between phases, so several phases share a minute.
    const expected = new Map<number, Seen[]>([
      [5003, []],
      [5002, []],
    ]);
    const created = new Map<number, number[]>([
      [5003, []],
      [5002, []],
    ]);
    for (let phase = 0; phase < 5; phase++) {
      const madeNow: [number, number][] = [];
      const touched: { eventId: number; seen: Seen }[] = [];
      for (let i = 0; i < 10; i++) {
        const eventId = i % 3 === 2 ? 5002 : 5003;
        const hotelId = eventId === 5003 ? (i % 2 === 0 ? h1 : h2) : undefined;
        const what = (phase * 10 + i) % 3;
        let reservationNumber: number;
        let kind: string;
        if (what === 0) {
          ({ reservationNumber } = await book(t.emulator, { eventId, ...(hotelId ? { hotelId } : {}) }));
          madeNow.push([eventId, reservationNumber]);
          kind = 'CREATED';
        } else if (what === 1) {
          reservationNumber = pool.get(eventId)!.shift()!;
          await book(t.emulator, {
            eventId,
            reservationNumber,
            ...(hotelId ? { hotelId } : {}),
            contact: { lastName: `Changed${phase}${i}` },
          });
          kind = 'CHANGED';
        } else {
          // Cancel one made in an earlier phase when there is one, else one of the seed's.
          reservationNumber = created.get(eventId)!.shift() ?? pool.get(eventId)!.shift()!;
          await book(t.emulator, { eventId, reservationNumber, status: 'cancelled' });
          kind = 'CANCELLED';
        }
        const r = record(reservationNumber);
        touched.push({
          eventId,
          seen: { kind, reservationNumber, status: r.status.toUpperCase(), hotelId: r.hotelId },
        });
      }
      for (const { eventId, seen } of touched) expected.get(eventId)!.push(seen);
      for (const [eventId, reservationNumber] of madeNow) created.get(eventId)!.push(reservationNumber);
      await twoPolls(5003, 5002);
      await advanceClock(t.emulator, 20_000);
    }

    const subscribers = { all5003, atHotel, cancelled, all5002 };
    await all5003.take(expected.get(5003)!.length);
    await all5002.take(expected.get(5002)!.length);
    await twoPolls(5003, 5002);
    // Every write arrives once, with its kind and latest state (changes within one minute have
    // no finer order upstream, so the sets are compared, and the order by modification time).
    const byNumber = (changes: Seen[]) =>
      [...changes].sort((a, b) => a.reservationNumber - b.reservationNumber || a.kind.localeCompare(b.kind));
    const got = { all5003: changesOf(all5003), all5002: changesOf(all5002) };
    expect(byNumber(got.all5003)).toEqual(byNumber(expected.get(5003)!));
    expect(byNumber(got.all5002)).toEqual(byNumber(expected.get(5002)!));
    expect(got.all5003.length + got.all5002.length).toBe(50);
    for (const s of Object.values(subscribers)) expect(inModificationOrder(s)).toBe(true);
    // The filtered subscribers of the same feed get exactly the matching part of its stream, in its order.
    expect(changesOf(atHotel)).toEqual(got.all5003.filter((change) => change.hotelId === h1));
    expect(changesOf(cancelled)).toEqual(got.all5003.filter((change) => change.status === 'CANCELLED'));
    expect(changesOf(cancelled).map((change) => change.kind)).toContain('CANCELLED');

    // One poller per event: one baseline read of 5003 (two pages) for three subscribers, and as
    // many polls in the log as the one feed made (one more may be on its way).
    const reads = t
      .calls()
      .filter((call) => call.endpoint === 'getreservation' && String(call.params.eventId) === '5003');
    expect(reads.filter((call) => call.params.modifiedAfterDate === undefined)).toHaveLength(2);
    const polls = reads.filter((call) => call.params.modifiedAfterDate !== undefined).length;
    expect(polls - pollsOf(5003)).toBeGreaterThanOrEqual(0);
    expect(polls - pollsOf(5003)).toBeLessThanOrEqual(1);

    // After the last subscriber leaves, polling stops.
    for (const s of Object.values(subscribers)) s.close();
    await ws.dispose();
    await until(() => t.gateway.changeFeeds.active().length === 0);
    await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS));
    t.clearLog();
    await new Promise((resolve) => setTimeout(resolve, 5 * INTERVAL_MS));
    expect(t.count('getreservation')).toBe(0);
  });
});

describe('reservationChanged: resuming with since', () => {
  it('delivers the changes missed during a disconnect once, then goes live', async () => {
    // A minute of the service's clock of its own, apart from the other tests' writes.
    await advanceClock(t.emulator, 300_000);
    const first = await sse({ eventId: 5002 });
    await until(() => pollsOf(5002) > 0);
    const a = await book(t.emulator, { eventId: 5002 });
    const b = await book(t.emulator, { eventId: 5002 });
    const before = await first.take(2);
    const lastModifiedAt = (before[1]!.data!.reservationChanged as { modifiedAt: string }).modifiedAt;
    first.close();
    await until(() => t.gateway.changeFeeds.active().length === 0);

    // Missed: made in a later minute of the service's clock while nobody listened.
    await advanceClock(t.emulator, 120_000);
    const c = await book(t.emulator, { eventId: 5002 });
    await book(t.emulator, { eventId: 5002, reservationNumber: b.reservationNumber, status: 'cancelled' });
    const d = await book(t.emulator, { eventId: 5002 });

    const resumed = await sse({ eventId: 5002, since: lastModifiedAt });
    await until(() => pollsOf(5002) > 0);
    const e = await book(t.emulator, { eventId: 5002 });
    const live = (r: { data?: Record<string, unknown> | null }) =>
      (r.data?.reservationChanged as { reservation: { reservationNumber: number } }).reservation.reservationNumber ===
      e.reservationNumber;
    await until(() => resumed.received.some(live));
    await twoPolls(5002);
    const got = changesOf(resumed).map(({ kind, reservationNumber }) => [kind, reservationNumber]);
    // The service keeps minutes: the minute of `since` is replayed too (here `a`, made in it).
    expect(got).toEqual([
      ['CREATED', a.reservationNumber],
      // The missed ones, in one minute: by reservation number.
      ['CANCELLED', b.reservationNumber],
      ['CREATED', c.reservationNumber],
      ['CREATED', d.reservationNumber],
      ['CREATED', e.reservationNumber],
    ]);
    resumed.close();
    await until(() => t.gateway.changeFeeds.active().length === 0);
  });
});

describe('reservationChanged: bad arguments answer an error on the stream', () => {
  it.each([
    ['an unknown event', { eventId: 9999 }, 'eventId: no event 9999 for this licensee'],
    ['another licensee’s event', { eventId: 6001 }, 'eventId: no event 6001 for this licensee'],
    [
      'a since in the future',
      { eventId: 5003, since: '2099-01-01T00:00:00Z' },
      'since: 2099-01-01T00:00:00Z is in the future; give a past instant (such as the last modifiedAt received) or leave it out',
    ],
  ])('%s, over SSE and graphql-ws, then the stream ends', async (_name, variables, message) => {
    const overSse = await sse(variables);
    await overSse.completed;
    const ws = wsClient(server.wsUrl);
    const overWs = subscribeWs(ws, variables);
    await overWs.completed;
    await ws.dispose();
    for (const s of [overSse, overWs]) {
      expect(s.received).toHaveLength(1);
      expect(s.received[0]!.errors?.map((error) => [error.extensions?.code, error.message])).toEqual([
        ['BAD_USER_INPUT', message],
      ]);
    }
    await until(() => t.gateway.changeFeeds.active().length === 0);
  });

  it('an impossible event id is refused before any upstream call', async () => {
    t.clearLog();
    const s = await sse({ eventId: 0 });
    await s.completed;
    expect(s.received[0]!.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(t.count('getreservation')).toBe(0);
  });
});

describe('reservationChanged: the SSE response', () => {
  it('sends its headers at once, before the feed’s baseline read is answered', async () => {
    t.clearLog();
    await fetch(`${t.emulator.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ endpoint: 'getreservation', latencyMs: 1500 }] }),
    });
    try {
      const s = await sse({ eventId: 5002 });
      expect(s.response.headers.get('content-type')).toContain('text/event-stream');
      expect(t.count('getreservation')).toBe(0);
      s.close();
    } finally {
      await fetch(`${t.emulator.url}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: [] }),
      });
    }
    await until(() => t.gateway.changeFeeds.active().length === 0);
  });
});

describe('reservationChanged: a baseline read that fails for a moment', () => {
  const setFaults = (rules: Record<string, unknown>[]) =>
    fetch(`${t.emulator.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules }),
    });

  it('is read again: the subscriber is not ended with an error, and hears the next change', async () => {
    t.clearLog();
    await setFaults([{ endpoint: 'getreservation', errorRate: 1, errorStatus: 503 }]);
    let s: Awaited<ReturnType<typeof sse>>;
    try {
      s = await sse({ eventId: 5003 });
      // The upstream client's own attempts (1 + 6 retries) all failed; the 8th call is the feed reading the page again.
      await until(() => t.count('getreservation') >= 8, 15_000);
    } finally {
      await setFaults([]);
    }
    await until(() => pollsOf(5003) > 0);
    const booked = await book(t.emulator, { eventId: 5003 });
    const [change] = await s.take(1);
    expect(change!.errors).toBeUndefined();
    expect(changesOf(s)).toEqual([
      expect.objectContaining({ kind: 'CREATED', reservationNumber: booked.reservationNumber }),
    ]);
    s.close();
    await until(() => t.gateway.changeFeeds.active().length === 0);
    // The booking's minute is behind the next feed of this event (it would tell it as new).
    await advanceClock(t.emulator, 120_000);
  });
});

describe('reservationChanged at shutdown', () => {
  it('ends the subscribers’ streams when the feeds close, so the server need not wait for them', async () => {
    const overSse = await sse({ eventId: 5003 });
    const ws = wsClient(server.wsUrl);
    const overWs = subscribeWs(ws, { eventId: 5003 });
    // Both share one execution, the feed's one member.
    await until(() => t.gateway.subscriptions().subscribers === 2 && pollsOf(5003) > 0);
    t.gateway.changeFeeds.close();
    await overSse.completed;
    await overWs.completed;
    await ws.dispose();
    expect([overSse.received, overWs.received]).toEqual([[], []]);
  });
});
