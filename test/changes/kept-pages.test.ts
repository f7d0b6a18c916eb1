import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/upstream/errors.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, type Subscriber, subscribeSse, until, wsClient } from '../helpers/subscriptions.ts';

/*
 * Issue 37: a change a feed's poll reads is applied to the event's kept pages, so a read after it is
 * answered fresh from the kept page without a call; a change that cannot be placed drops the page,
 * and its copy answers, marked stale, when the budget is spent. Event 5003 holds 1001 reservations:
 * page 1 is full, page 2 holds the last one.
 */
const ACCOUNT = { systemIdentifier: '1001', key: 'demo-key-1001', timeZone: 'UTC' };
const LAST = `query Last($filter: ReservationFilter) {
  event(eventId: 5003) { reservations(last: 2, filter: $filter) { totalCount edges { node { reservationNumber status } } } }
}`;
type Answer = {
  data?: {
    event: { reservations: { totalCount: number; edges: { node: { reservationNumber: number; status: string } }[] } };
  };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: { stale?: { path: (string | number)[]; ageSeconds: number }[] };
};

let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
let subscriber: Subscriber;

beforeAll(async () => {
  t = await startGateway(
    { rateLimit: false },
    {
      CHANGES_POLL_INTERVAL_MS: '200',
      // Kept for the whole test: only a change may make them stale.
      UPSTREAM_PAGE_TTL_MS: '60000',
      UPSTREAM_STALE_MAX_MS: '600000',
      RESPONSE_CACHE: 'off',
      UPSTREAM_RATE_LIMIT: '200',
      UPSTREAM_RATE_MARGIN: '0',
      UPSTREAM_DEADLINE_MS: '300',
    },
  );
  server = await listen(t);
  // The event's feed runs while someone subscribes.
  subscriber = await subscribeSse(fetch, server.url, { eventId: 5003 });
  await until(() => (t.gateway.changeFeeds.active()[0]?.polls ?? 0) > 0, 10_000);
});
afterAll(async () => {
  subscriber?.close();
  await server?.close();
  await t?.close();
});

const read = async (filter?: Record<string, unknown>): Promise<Answer> =>
  (await t.exec(LAST, filter ? { filter } : {})) as Answer;
/** The reads of the service other than the feed's polls (those carry modifiedAfterDate). */
const reads = () =>
  t.emulator.state.log.filter(
    (entry) => entry.endpoint.startsWith('getreservation') && !('modifiedAfterDate' in entry.params),
  ).length;
/** Waits until the subscriber was told of the reservation (the feed's poll read it). */
const told = (reservationNumber: number, count = 1) =>
  until(
    () =>
      subscriber.received.filter(
        (result) =>
          (result.data?.reservationChanged as { reservation: { reservationNumber: number } } | undefined)?.reservation
            .reservationNumber === reservationNumber,
      ).length >= count,
    10_000,
  );

describe('kept pages follow the changes a feed reads (issue 37)', () => {
  it('a changed reservation shows its new state from the kept page, without a call', async () => {
    const before = await read();
    expect(before.errors).toBeUndefined();
    const last = before.data!.event.reservations.edges.at(-1)!.node;
    const calls = reads();
    await book(t.emulator, { eventId: 5003, reservationNumber: last.reservationNumber, status: 'cancelled' });
    await told(last.reservationNumber);
    const after = await read();
    expect(after.data!.event.reservations.edges.at(-1)!.node).toEqual({
      reservationNumber: last.reservationNumber,
      status: 'CANCELLED',
    });
    expect(after.extensions?.stale).toBeUndefined();
    expect(reads()).toBe(calls);
  });

  it('a new reservation appears at the end of the last page and the count moves, without a call', async () => {
    const before = (await read()).data!.event.reservations;
    const calls = reads();
    const { reservationNumber } = await book(t.emulator, { eventId: 5003 });
    await told(reservationNumber);
    const after = (await read()).data!.event.reservations;
    expect(after.totalCount).toBe(before.totalCount + 1);
    expect(after.edges.map((edge) => edge.node.reservationNumber)).toEqual([
      before.edges.at(-1)!.node.reservationNumber,
      reservationNumber,
    ]);
    expect(reads()).toBe(calls);
  });

  const ask = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify({ query: LAST, ...body }),
    });
    return (await res.json()) as Answer;
  };

  it('is read from the service, not from the kept page, when the client asks (extensions.freshRead, or Cache-Control: no-cache)', async () => {
    await read();
    const calls = reads();
    await read();
    expect(reads()).toBe(calls);
    const fresh = await ask({ extensions: { freshRead: true } });
    expect(fresh.errors).toBeUndefined();
    expect(reads()).toBeGreaterThan(calls);
    const after = reads();
    await ask({}, { 'cache-control': 'no-cache' });
    expect(reads()).toBeGreaterThan(after);
    // The same extension over GraphQL over SSE and graphql-ws: a kept page would answer without it.
    await read();
    const beforeSse = reads();
    const sse = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: LAST, extensions: { freshRead: true } }),
    });
    expect(await sse.text()).toContain('"reservations"');
    expect(reads()).toBeGreaterThan(beforeSse);
    const ws = wsClient(server.wsUrl);
    try {
      const beforeWs = reads();
      for await (const result of ws.iterate({ query: LAST, extensions: { freshRead: true } }))
        expect(result.errors).toBeUndefined();
      expect(reads()).toBeGreaterThan(beforeWs);
    } finally {
      await ws.dispose();
    }
  });

  it('a change that cannot be placed (a filtered page) drops the page: the next read goes to the service, or with the budget spent is answered stale and marked', async () => {
    const filter = { reservationStatus: 'CANCELLED' };
    const before = await read(filter);
    expect(before.errors).toBeUndefined();
    const calls = reads();
    const { reservationNumber } = await book(t.emulator, { eventId: 5003 });
    await book(t.emulator, { eventId: 5003, reservationNumber, status: 'cancelled' });
    await told(reservationNumber);
    // Every slot of the budget taken (reads of events that do not exist).
    for (let eventId = 9001; ; eventId++) {
      const refused = await t.gateway.upstream
        .call(ACCOUNT, 'getevent', { eventId })
        .then(() => false)
        .catch((error: unknown) => error instanceof RateLimitedError);
      if (refused) break;
    }
    const stale = await read(filter);
    expect(stale.errors).toBeUndefined();
    expect(stale.data).toEqual(before.data);
    expect(stale.extensions?.stale?.length).toBeGreaterThan(0);
    expect(reads()).toBe(calls);
  });
});

describe('whole answers kept by the response cache (issue 37)', () => {
  it('are dropped when the feed tells a change: the next read shows it, not the answer kept from before', async () => {
    const g = await startGateway(
      { rateLimit: false },
      { CHANGES_POLL_INTERVAL_MS: '200', RESPONSE_CACHE_TTLS: 'Reservation=600000,Event=600000' },
    );
    const gServer = await listen(g);
    const feed = await subscribeSse(fetch, gServer.url, { eventId: 5003 });
    try {
      await until(() => (g.gateway.changeFeeds.active()[0]?.polls ?? 0) > 0, 10_000);
      const before = (await g.exec(LAST)) as Answer;
      const last = before.data!.event.reservations.edges.at(-1)!.node;
      expect(((await g.exec(LAST)) as Answer).data).toEqual(before.data);
      await book(g.emulator, { eventId: 5003, reservationNumber: last.reservationNumber, status: 'cancelled' });
      await until(() => feed.received.length > 0, 10_000);
      const after = (await g.exec(LAST)) as Answer;
      expect(after.data!.event.reservations.edges.at(-1)!.node.status).toBe('CANCELLED');
    } finally {
      feed.close();
      await gServer.close();
      await g.close();
    }
  });
});
