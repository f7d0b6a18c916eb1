import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type GraphQLAnswer,
  readAheadsSettled,
  readyToCount,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.ts';

/**
 * Walks without waiting: a forward window that ends on an upstream page boundary reads the page
 * after it ahead, in the background, and the next window of the walk finds it kept.
 */
const WITHOUT_HAS_NEXT = `query ($after: String) {
  event(eventId: 5001) { reservations(first: 1000, after: $after) { edges { node { reservationNumber } } pageInfo { endCursor } } }
}`;
const WITH_HAS_NEXT = `query ($after: String) {
  event(eventId: 5001) { reservations(first: 1000, after: $after) { edges { node { reservationNumber } } pageInfo { endCursor hasNextPage } } }
}`;
type Step = {
  event: {
    reservations: { edges: { node: { reservationNumber: number } }[]; pageInfo: { endCursor: string | null } };
  };
};

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({}, { RESPONSE_CACHE: 'off' });
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

const pagesRead = () =>
  t
    .calls()
    .filter((c) => c.endpoint === 'getreservation')
    .map((c) => Number(c.params.page));

const all = () => t.emulator.state.store.reservationsByEvent.get(5001)!.map((r) => r.reservationNumber);

describe.each([
  ['without hasNextPage', WITHOUT_HAS_NEXT, 1],
  ['with hasNextPage (read for the answer, so the read-ahead is the page after it)', WITH_HAS_NEXT, 2],
])('a walk of 25,600 reservations with first: 1000, %s', (_, document, ownPagesOfFirstStep) => {
  it('costs one getreservation per page, and each next window finds its pages read ahead before it is asked', async () => {
    const seen: number[] = [];
    let after: string | null = null;
    for (let step = 1; step <= 30; step++) {
      if (step > 2) {
        // The next step's pages were read ahead by the steps before it, without it waiting (a walk is
        // recognised by its `after`: the first step reads nothing ahead).
        const needed = document === WITH_HAS_NEXT ? Math.min(step + 1, 26) : step;
        await vi.waitFor(() => expect(pagesRead()).toContain(needed));
      }
      const before = pagesRead().length;
      const res: GraphQLAnswer<Step> = await t.exec<Step, { after: string | null }>(
        document,
        { after },
        { 'x-show-cost': '1' },
      );
      expect(res.errors).toBeUndefined();
      // Its own calls: the first step reads its page (which proves the event: no getevent), and the next
      // for hasNextPage; the second reads the event (a window past the first page proves none) and the
      // page the first step did not read ahead; later ones none.
      expect(res.extensions?.upstreamCalls).toBe(step === 1 ? ownPagesOfFirstStep : step === 2 ? 2 : 0);
      // Nothing a later step shows was read for it: anything logged meanwhile is the read-ahead of a later page.
      if (step > 2)
        expect(
          pagesRead()
            .slice(before)
            .every((p) => p > step),
        ).toBe(true);
      const { edges, pageInfo } = res.data!.event.reservations;
      seen.push(...edges.map((e) => e.node.reservationNumber));
      if (edges.length < 1000) break;
      after = pageInfo.endCursor;
    }
    expect(seen).toEqual(all());
    // One call per page, none for the page count, none past the last page (it is short).
    expect(pagesRead().sort((a, b) => a - b)).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
    expect(t.count('getreservationpagecount')).toBe(0);
  }, 30_000);
});

describe('read-ahead', () => {
  it('reads the same call the next window makes: flags and filter included', async () => {
    const withFlags = `query ($after: String) { event(eventId: 5001) {
      reservations(first: 1000, after: $after, filter: { reservationStatus: ACCEPTED }) {
        edges { node { reservationNumber subBlock { name } contact { city } } } pageInfo { endCursor } } } }`;
    const first = await t.exec<Step, { after: string | null }>(withFlags, { after: null });
    expect(first.errors).toBeUndefined();
    // A window from the start of the list is no walk yet: nothing is read ahead of it.
    await readAheadsSettled(t);
    expect(pagesRead()).toEqual([1]);
    t.clearLog();
    const second = await t.exec<Step, { after: string | null }>(withFlags, {
      after: first.data!.event.reservations.pageInfo.endCursor,
    });
    expect(second.errors).toBeUndefined();
    await vi.waitFor(() => expect(pagesRead()).toEqual([2, 3]));
    const [own, ahead] = t.calls().filter((c) => c.endpoint === 'getreservation');
    expect(own!.params).toMatchObject({ page: '2', detailedSubBlockInfo: 'true', fullContactInfo: 'true' });
    expect(ahead!.params).toEqual({ ...own!.params, page: '3' });
    // So the next window reads nothing: the cursor's page and its own are both kept.
    const third = await t.exec<Step, { after: string | null }>(withFlags, {
      after: second.data!.event.reservations.pageInfo.endCursor,
    });
    expect(third.errors).toBeUndefined();
    expect(pagesRead().filter((page) => page <= 3)).toEqual([2, 3]);
  });

  it('is not made when pages are not kept (UPSTREAM_PAGE_TTL_MS=0): it would be a call for nothing', async () => {
    const uncached = await startGateway({}, { UPSTREAM_PAGE_TTL_MS: '0', RESPONSE_CACHE: 'off' });
    try {
      await readyToCount(uncached);
      const res = await uncached.exec(WITHOUT_HAS_NEXT, { after: null });
      expect(res.errors).toBeUndefined();
      // The next window's read is then its own: one call, for page 2 (the cursor's page 1 is read again to seek).
      const next = await uncached.exec(WITHOUT_HAS_NEXT, {
        after: (res.data as Step).event.reservations.pageInfo.endCursor,
      });
      expect(next.errors).toBeUndefined();
      expect(
        uncached
          .calls()
          .filter((c) => c.endpoint === 'getreservation')
          .map((c) => Number(c.params.page))
          .sort(),
      ).toEqual([1, 1, 2]);
    } finally {
      await uncached.close();
    }
  });
});
