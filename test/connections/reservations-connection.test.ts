import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AttendeeReservationsDocument,
  ReservationCountDocument,
  ReservationNumbersDocument,
  type ReservationNumbersQueryVariables,
} from '../documents/generated.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
/** Pages kept in flight only: what one operation reads, asserted without the page lifetime's help. */
let uncached: TestGateway;
beforeAll(async () => {
  [t, uncached] = await Promise.all([
    startGateway(),
    startGateway({}, { UPSTREAM_PAGE_TTL_MS: '0', RESPONSE_CACHE: 'off' }),
  ]);
});
afterAll(() => Promise.all([t.close(), uncached.close()]));
beforeEach(() => {
  t.clearLog();
  uncached.clearLog();
});

const all = (eventId: number) =>
  t.emulator.state.store.reservationsByEvent.get(eventId)!.map((r) => r.reservationNumber);
type Vars = Omit<ReservationNumbersQueryVariables, 'eventId'>;
/** A window of event 5001's reservations. */
const page = (variables: Vars, gateway = t) =>
  gateway.exec(ReservationNumbersDocument, { eventId: 5001, ...variables });

/**
 * Walks event 5001 with first: 1000; returns the reservation numbers seen and the pages read during
 * each step (a page read ahead in the background lands in the step where its request arrives).
 */
async function walk(gateway: TestGateway): Promise<{ seen: number[]; pagesPerStep: number[][] }> {
  const seen: number[] = [];
  const pagesPerStep: number[][] = [];
  let after: string | null | undefined;
  gateway.clearLog();
  let logged = 0;
  for (let i = 0; i < 40; i++) {
    const res = await page({ first: 1000, after }, gateway);
    expect(res.errors).toBeUndefined();
    const calls = gateway.calls().slice(logged);
    logged += calls.length;
    pagesPerStep.push(
      calls
        .filter((c) => c.endpoint === 'getreservation')
        .map((c) => Number(c.params.page))
        .sort((a, b) => a - b),
    );
    expect(calls.filter((c) => c.endpoint === 'getreservationpagecount')).toEqual([]);
    const c = res.data!.event!.reservations;
    seen.push(...c.edges.map((e) => e.node.reservationNumber));
    expect(c.pageInfo.hasPreviousPage).toBe(i > 0);
    expect(c.edges.at(-1)?.cursor).toBe(c.pageInfo.endCursor);
    if (!c.pageInfo.hasNextPage) break;
    after = c.pageInfo.endCursor;
  }
  return { seen, pagesPerStep };
}

describe('reservations connection', () => {
  // Fault: each step of this walk also asked the page count (its window ends on a page boundary)
  // and re-read the page before its cursor: 51 getreservation + 25 page counts for 26 pages.
  it('walking first: 1000 with after to the end visits every reservation once, in order, as the emulator lists them, reading each page at most twice', async () => {
    const { seen, pagesPerStep } = await walk(uncached);
    expect(seen).toEqual(all(5001));
    // Each step reads its own page and the next one for hasNextPage, whose first record's key its
    // end cursor carries: the next step finds it in place on the page it reads anyway. The last
    // page is short, so the last step knows the list ends there.
    const pages = Math.ceil(all(5001).length / 1000);
    expect(pages).toBe(26);
    expect(pagesPerStep).toEqual(Array.from({ length: pages }, (_, i) => (i + 1 < pages ? [i + 1, i + 2] : [i + 1])));
    expect(pagesPerStep.flat()).toHaveLength(51);
  });

  // Fault (the benchmark's walk of all 25,600 reservations): the page read ahead for hasNextPage
  // was read again by the next step (51 calls for 26 pages). Kept for the page lifetime, each page
  // is read once: 26 calls, whether a step reads its page or finds it read ahead.
  it('within the page lifetime the same walk reads each upstream page once', async () => {
    const { seen, pagesPerStep } = await walk(t);
    expect(seen).toEqual(all(5001));
    expect(pagesPerStep[0]).toEqual(expect.arrayContaining([1, 2]));
    expect(pagesPerStep.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
  });

  it('last: 5 returns the five highest reservation numbers', async () => {
    const res = await page({ last: 5 });
    expect(res.errors).toBeUndefined();
    const c = res.data!.event!.reservations;
    expect(c.edges.map((e) => e.node.reservationNumber)).toEqual(all(5001).slice(-5));
    expect(c.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(t.count('getreservationpagecount')).toBe(1);
  });

  it('last with before, first with after across a page boundary, and before/after combined', async () => {
    const numbers = all(5001);
    const first = await page({ first: 3, after: null });
    const third = first.data!.event!.reservations.edges[2]!.cursor;
    const back = await page({ last: 2, before: third });
    expect(back.data!.event!.reservations.edges.map((e) => e.node.reservationNumber)).toEqual(numbers.slice(0, 2));
    expect(back.data!.event!.reservations.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const at998 = (await page({ first: 999 })).data!.event!.reservations.pageInfo.endCursor;
    const across = await page({ first: 4, after: at998 });
    expect(across.data!.event!.reservations.edges.map((e) => e.node.reservationNumber)).toEqual(
      numbers.slice(999, 1003),
    );
  });

  it('hasNextPage is exact at the end of the list, also when it ends on a page boundary', async () => {
    // Event 5002 holds exactly 1000 reservations: one full page and nothing after it.
    const res = await t.exec(ReservationNumbersDocument, { eventId: 5002, first: 1000 });
    expect(res.data!.event!.reservations.edges).toHaveLength(1000);
    expect(res.data!.event!.reservations.pageInfo.hasNextPage).toBe(false);
    const more = await t.exec(ReservationNumbersDocument, { eventId: 5003, first: 1000 });
    expect(more.data!.event!.reservations.pageInfo.hasNextPage).toBe(true);
  });

  it('totalCount follows the filter and is 0 when nothing matches', async () => {
    const cancelled = t.emulator.state.store.reservationsByEvent
      .get(5001)!
      .filter((r) => r.status === 'cancelled').length;
    const res = await t.exec(ReservationCountDocument, {
      eventId: 5001,
      first: 1,
      filter: { reservationStatus: 'CANCELLED' },
    });
    expect(res.data!.event!.reservations.totalCount).toBe(cancelled);
    const none = await t.exec(ReservationCountDocument, { eventId: 5001, first: 1, filter: { reservationNumber: 1 } });
    expect(none.data!.event!.reservations.totalCount).toBe(0);
  });

  it('filters by modifiedAfter, converting the instant to the licensee’s wall clock', async () => {
    const list = t.emulator.state.store.reservationsByEvent.get(5002)!;
    const pivot = [...list].sort((a, b) => a.modifiedMs - b.modifiedMs)[500]!;
    const since = new Date(Math.floor(pivot.modifiedMs / 60_000) * 60_000).toISOString();
    const res = await t.exec(ReservationNumbersDocument, {
      eventId: 5002,
      first: 1000,
      filter: { modifiedAfter: since },
    });
    expect(res.data!.event!.reservations.edges.map((e) => e.node.reservationNumber)).toEqual(
      list.filter((r) => r.modifiedMs >= Date.parse(since)).map((r) => r.reservationNumber),
    );
  });

  it.each([
    [{ first: 5001 }, 'first'],
    [{ first: -1 }, 'first'],
    [{ last: 5001 }, 'last'],
    [{ after: 'bm90IGEgY3Vyc29y' }, 'after'],
    [{ before: 'garbage!' }, 'before'],
  ])('refuses %o with BAD_USER_INPUT before any upstream call', async (variables, field) => {
    const res = await page(variables);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain(field);
    expect(t.calls().filter((c) => c.endpoint !== 'getevent')).toEqual([]);
  });

  it('a walk resumed after reservations left and joined the filtered list neither skips nor repeats (fault: offset cursors did)', async () => {
    const filter = { reservationStatus: 'NEW' as const };
    const newOnes = () => t.emulator.state.store.reservationsByEvent.get(5003)!.filter((r) => r.status === 'new');
    const setStatus = (reservationNumber: number, status: string) =>
      fetch(`${t.emulator.url}/_emulator/bookings`, {
        method: 'POST',
        body: JSON.stringify({ eventId: 5003, reservationNumber, status }),
      });

    const first = (await t.exec(ReservationNumbersDocument, { eventId: 5003, first: 20, filter })).data!.event!
      .reservations;
    const seen = first.edges.map((e) => e.node.reservationNumber);
    // Between the two pages, two reservations seen leave the list and one not seen (an earlier number) joins it.
    await setStatus(seen[3]!, 'cancelled');
    await setStatus(seen[7]!, 'declined');
    const joining = t.emulator.state.store.reservationsByEvent
      .get(5003)!
      .find((r) => r.status !== 'new' && r.reservationNumber < seen[19]!)!;
    await setStatus(joining.reservationNumber, 'new');

    const next = await t.exec(ReservationNumbersDocument, {
      eventId: 5003,
      first: 10,
      after: first.pageInfo.endCursor,
      filter,
    });
    expect(next.errors).toBeUndefined();
    const expected = newOnes()
      .filter((r) => r.reservationNumber > seen[19]!)
      .slice(0, 10)
      .map((r) => r.reservationNumber);
    expect(next.data!.event!.reservations.edges.map((e) => e.node.reservationNumber)).toEqual(expected);
  });

  it('a walk resumed at a page boundary checks its place on the next page, and reads the page before only when reservations before it left', async () => {
    const filter = { reservationStatus: 'NEW' as const };
    const newOnes = () =>
      uncached.emulator.state.store.reservationsByEvent
        .get(5001)!
        .filter((r) => r.status === 'new')
        .map((r) => r.reservationNumber);
    const pagesRead = () =>
      uncached
        .calls()
        .filter((c) => c.endpoint === 'getreservation')
        .map((c) => Number(c.params.page))
        .sort((a, b) => a - b);
    expect(newOnes().length).toBeGreaterThan(1005);
    const first = (await page({ first: 1000, filter }, uncached)).data!.event!.reservations;
    const seen = first.edges.map((e) => e.node.reservationNumber);
    const following = () =>
      newOnes()
        .filter((n) => n > seen[999]!)
        .slice(0, 5);

    uncached.clearLog();
    const unchanged = await page({ first: 5, after: first.pageInfo.endCursor, filter }, uncached);
    expect(unchanged.data!.event!.reservations.edges.map((e) => e.node.reservationNumber)).toEqual(following());
    expect(pagesRead()).toEqual([2]);

    await fetch(`${uncached.emulator.url}/_emulator/bookings`, {
      method: 'POST',
      body: JSON.stringify({ eventId: 5001, reservationNumber: seen[3], status: 'cancelled' }),
    });
    uncached.clearLog();
    const changed = await page({ first: 5, after: first.pageInfo.endCursor, filter }, uncached);
    expect(changed.data!.event!.reservations.edges.map((e) => e.node.reservationNumber)).toEqual(following());
    expect(pagesRead()).toEqual([1, 2]);
  });

  it('attendee answers, ordered by reservation then question, resume after answers were added before the cursor', async () => {
    const query = `query ($after: String) { event(eventId: 5002) { attendeeAnswers(first: 10, after: $after) {
      pageInfo { endCursor } edges { node { reservation { reservationNumber } question { questionId } } } } } }`;
    type Answers = {
      event: {
        attendeeAnswers: {
          pageInfo: { endCursor: string };
          edges: { node: { reservation: { reservationNumber: number }; question: { questionId: number } | null } }[];
        };
      };
    };
    const keys = (res: { data?: Answers | null }) =>
      res.data!.event.attendeeAnswers.edges.map((e) => [
        e.node.reservation.reservationNumber,
        e.node.question?.questionId,
      ]);
    const first = await t.exec<Answers, { after?: string }>(query, {});
    const lastSeen = keys(first).at(-1)!;
    // Two answers on the event's first reservation: both sort before the cursor.
    const earliest = t.emulator.state.store.reservationsByEvent.get(5002)![0]!.reservationNumber;
    await fetch(`${t.emulator.url}/_emulator/bookings`, {
      method: 'POST',
      body: JSON.stringify({
        eventId: 5002,
        reservationNumber: earliest,
        answers: [
          { questionId: 901, answer: 'a' },
          { questionId: 902, answer: 'b' },
        ],
      }),
    });
    const next = await t.exec<Answers, { after?: string }>(query, {
      after: first.data!.event.attendeeAnswers.pageInfo.endCursor,
    });
    expect(next.errors).toBeUndefined();
    const after = (a: { reservationNumber: number; questionId: number }) =>
      a.reservationNumber > lastSeen[0]! || (a.reservationNumber === lastSeen[0] && a.questionId > lastSeen[1]!);
    const expected = t.emulator.state.store.answersOf(5002).filter(after).slice(0, 10);
    expect(keys(next)).toEqual(expected.map((a) => [a.reservationNumber, a.questionId]));
  });

  it('refuses a cursor from another filter', async () => {
    const cursor = (await page({ first: 2 })).data!.event!.reservations.pageInfo.endCursor;
    t.clearLog();
    const res = await page({ first: 2, after: cursor, filter: { reservationStatus: 'NEW' } });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain('another list or filter');
    expect(t.count('getreservation')).toBe(0);
  });
});

describe('Attendee.reservations', () => {
  it('keeps the attendee’s reservations of its registration event, with an exact totalCount', async () => {
    const store = t.emulator.state.store;
    const r = store.reservationsByEvent.get(5001)!.find((x) => x.attendeeId)!;
    // A booking under the same attendee id but another registration event must not show.
    await fetch(`${t.emulator.url}/_emulator/bookings`, {
      method: 'POST',
      body: JSON.stringify({ eventId: 5001, attendeeId: r.attendeeId, registrationEventId: 'REG-OTHER' }),
    });
    const res = await t.exec(AttendeeReservationsDocument, { eventId: 5001, attendeeId: r.attendeeId! });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const attendee = res.data!.event!.reservations.edges[0]!.node.attendee!;
    const expected = store.reservationsByEvent
      .get(5001)!
      .filter((x) => x.attendeeId === r.attendeeId && x.registrationEventId === r.registrationEventId);
    expect(attendee.reservations.totalCount).toBe(expected.length);
    expect(attendee.reservations.edges.map((e) => e.node.reservationNumber)).toEqual(
      expected.map((x) => x.reservationNumber),
    );
  });
});
