import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * Fault (the benchmark's frontend session): every operation read fresh upstream pages and a fresh
 * page count, even when fifty users read the same first pages of the same events at once (656
 * calls for 379 pages served).
 * Pages of paged lists and their page counts are now kept for a few seconds (UPSTREAM_PAGE_TTL_MS)
 * per licensee and filter, and our own writes drop them.
 */
const LIST = `query ($eventId: Int!, $status: ReservationStatus) {
  event(eventId: $eventId) { reservations(first: 5, filter: { reservationStatus: $status }) { totalCount edges { node { reservationNumber customFieldValues { customFieldId value } } } } }
}`;
type List = {
  event: {
    reservations: {
      totalCount: number;
      edges: { node: { reservationNumber: number; customFieldValues: { customFieldId: number; value: string }[] } }[];
    };
  };
};

let t: TestGateway;
// The response cache off: these operations repeat, and must reach the page layer to be counted.
beforeAll(async () => {
  t = await startGateway({}, { RESPONSE_CACHE: 'off' });
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

const reservationReads = () => t.count('getreservation') + t.count('getreservationpagecount');

describe('reservation pages and page counts shared across operations', () => {
  it('fifty concurrent operations reading one list cost what one does', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => t.exec<List, Record<string, unknown>>(LIST, { eventId: 5001 })),
    );
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    expect(new Set(answers.map((a) => JSON.stringify(a.data))).size).toBe(1);
    // Page 1, and for totalCount the page count and the last page.
    expect(t.count('getreservationpagecount')).toBe(1);
    expect(t.count('getreservation')).toBe(2);
  });

  it('the next operation within the page lifetime reads nothing upstream', async () => {
    await t.exec<List, Record<string, unknown>>(LIST, { eventId: 5001 });
    t.clearLog();
    const again = await t.exec<List, Record<string, unknown>>(LIST, { eventId: 5001 });
    expect(again.errors).toBeUndefined();
    expect(reservationReads()).toBe(0);
  });

  it('another filter or another event is another list', async () => {
    await t.exec<List, Record<string, unknown>>(LIST, { eventId: 5001 });
    t.clearLog();
    await t.exec<List, Record<string, unknown>>(LIST, { eventId: 5001, status: 'CANCELLED' });
    await t.exec<List, Record<string, unknown>>(LIST, { eventId: 5002 });
    expect(t.count('getreservationpagecount')).toBe(2);
  });

  it('our own write to a reservation drops the kept pages: the next read shows it at once', async () => {
    const before = await t.exec<List, Record<string, unknown>>(LIST, { eventId: 5002 });
    const first = before.data!.event.reservations.edges[0]!.node.reservationNumber;
    const set = await t.exec(
      `mutation ($n: Int!) { setCustomFieldValue(input: { customFieldId: 2, value: "late arrival", reservationNumber: $n }) { customFieldId } }`,
      { n: first },
    );
    expect(set.errors).toBeUndefined();
    t.clearLog();
    const after = await t.exec<List, Record<string, unknown>>(LIST, { eventId: 5002 });
    expect(after.data!.event.reservations.edges[0]!.node.customFieldValues).toContainEqual({
      customFieldId: 2,
      value: 'late arrival',
    });
    expect(t.count('getreservation')).toBeGreaterThan(0);
  });

  it('a change made upstream by someone else shows once the page lifetime has passed', async () => {
    const short = await startGateway({}, { UPSTREAM_PAGE_TTL_MS: '200', RESPONSE_CACHE: 'off' });
    try {
      const count = async () =>
        (await short.exec<List, Record<string, unknown>>(LIST, { eventId: 5003 })).data!.event.reservations.totalCount;
      const before = await count();
      const res = await fetch(`${short.emulator.url}/_emulator/bookings`, {
        method: 'POST',
        body: JSON.stringify({ eventId: 5003 }),
      });
      expect(res.ok).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(await count()).toBe(before + 1);
    } finally {
      await short.close();
    }
  });

  it('several windows over one filter share one page count, in one operation and across operations', async () => {
    const windows = `query ($status: ReservationStatus) {
      event(eventId: 5001) {
        a: reservations(first: 5, filter: { reservationStatus: $status }) { totalCount }
        b: reservations(first: 3, after: null, filter: { reservationStatus: $status }) { totalCount edges { cursor } }
        c: reservations(last: 2, filter: { reservationStatus: $status }) { totalCount edges { cursor } }
      }
    }`;
    type Windows = { event: Record<'a' | 'b' | 'c', { totalCount: number }> };
    const [one, two] = await Promise.all([
      t.exec<Windows, Record<string, unknown>>(windows, { status: 'ACCEPTED' }),
      t.exec<Windows, Record<string, unknown>>(LIST.replace('first: 5', 'first: 7'), {
        eventId: 5001,
        status: 'ACCEPTED',
      }),
    ]);
    expect(one.errors, JSON.stringify(one.errors)).toBeUndefined();
    expect(two.errors, JSON.stringify(two.errors)).toBeUndefined();
    const { a, b, c } = one.data!.event;
    expect(new Set([a.totalCount, b.totalCount, c.totalCount])).toEqual(
      new Set([(two.data as unknown as List).event.reservations.totalCount]),
    );
    expect(t.count('getreservationpagecount')).toBe(1);
  });
});
