import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { faultsSchema } from '../../src/emulator/faults.ts';
import { readAheadsSettled, startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * @defer and @stream (docs/architecture.md, "Large lists"): a walk of event 5001's 25,600 reservations as
 * one query whose edges are streamed page by page over multipart/mixed.
 */
const WALK =
  '{ event(eventId: 5001) { reservations(first: 25600) { edges @stream(initialCount: 0) { cursor node { reservationNumber } } } } }';
const PAGES = 26;

type Part = {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
  incremental?: { items?: unknown[]; data?: unknown; path: (string | number)[] }[];
  hasNext?: boolean;
};

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false });
});
afterAll(() => t.close());
beforeEach(async () => {
  await readAheadsSettled(t);
  await t.gateway.upstream.clearCache();
  t.gateway.clearResponseCache();
  t.emulator.state.faults.clear();
  t.clearLog();
});

async function send(query: string): Promise<Response> {
  return await t.gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query }),
  });
}

/**
 * The JSON parts of a multipart/mixed body as they arrive, with the upstream page reads counted
 * at the moment each part was complete.
 */
async function* parts(response: Response): AsyncGenerator<{ part: Part; pagesReadSoFar: number }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      // Each part: headers, a blank line, the JSON, then the boundary line "---".
      let end: number;
      while ((end = buffered.indexOf('\r\n---')) !== -1) {
        const chunk = buffered.slice(0, end);
        buffered = buffered.slice(end + 5);
        const json = chunk.slice(chunk.indexOf('{'));
        if (json.startsWith('{')) yield { part: JSON.parse(json) as Part, pagesReadSoFar: t.count('getreservation') };
      }
    }
  } finally {
    // A reader that stops early lets the body go.
    await reader.cancel().catch(() => undefined);
  }
}

describe('edges @stream', () => {
  it('S5 as one query: the first records arrive before the last page is read; all 25,600 arrive once, in order, for one call a page', async () => {
    const response = await send(WALK);
    expect(response.headers.get('content-type')).toContain('multipart/mixed');
    const numbers: number[] = [];
    let pagesReadAtFirstRecord: number | undefined;
    for await (const { part, pagesReadSoFar } of parts(response)) {
      expect(part.errors).toBeUndefined();
      for (const increment of part.incremental ?? []) {
        for (const item of increment.items ?? []) {
          pagesReadAtFirstRecord ??= pagesReadSoFar;
          numbers.push((item as { node: { reservationNumber: number } }).node.reservationNumber);
        }
      }
    }
    // The page being sent and at most the one read ahead.
    expect(pagesReadAtFirstRecord).toBeLessThanOrEqual(2);
    expect(numbers).toHaveLength(25_600);
    expect(numbers).toEqual(
      t.emulator.state.store.reservationsByEvent.get(5001)!.map((reservation) => reservation.reservationNumber),
    );
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(t.count('getreservation')).toBe(PAGES);
    expect(t.calls().length).toBeLessThanOrEqual(PAGES + 1);
  });

  it('a client that goes away mid-stream (its connection closed) stops the page reads', async () => {
    // Slow pages, so that the walk is still under way when the client leaves.
    t.emulator.state.faults.set(faultsSchema.parse({ rules: [{ endpoint: 'getreservation', latencyMs: 50 }] }));
    // Over a real socket: closing the connection is what a browser leaving the page does.
    const server = createServer(t.gateway.yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const leaving = new AbortController();
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query: WALK }),
      signal: leaving.signal,
    });
    let pagesWhenLeft = 0;
    for await (const { part, pagesReadSoFar } of parts(response)) {
      if (part.incremental?.some((increment) => (increment.items?.length ?? 0) > 0)) {
        pagesWhenLeft = pagesReadSoFar;
        leaving.abort();
        break;
      }
    }
    // The pages already on their way when the client left are read; then nothing more, where a walk
    // going on would read several pages in each of these pauses (50 ms a page).
    const sleep = () => new Promise((resolve) => setTimeout(resolve, 400));
    await sleep();
    const readAfterLeaving = t.count('getreservation');
    await sleep();
    expect(t.count('getreservation')).toBe(readAfterLeaving);
    expect(readAfterLeaving).toBeGreaterThanOrEqual(pagesWhenLeft);
    expect(readAfterLeaving).toBeLessThan(PAGES);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('streams the edges while pageInfo, in a @defer fragment, follows once the window is read', async () => {
    const query =
      '{ event(eventId: 5001) { reservations(first: 3000) { edges @stream(initialCount: 0) { node { reservationNumber } } ... @defer { pageInfo { hasNextPage endCursor } } } } }';
    let records = 0;
    let pageInfo: unknown;
    for await (const { part } of parts(await send(query))) {
      expect(part.errors).toBeUndefined();
      for (const increment of part.incremental ?? []) {
        records += increment.items?.length ?? 0;
        pageInfo ??= (increment.data as { pageInfo?: unknown } | undefined)?.pageInfo;
      }
    }
    expect(records).toBe(3000);
    expect(pageInfo).toEqual({ hasNextPage: true, endCursor: expect.any(String) });
    // Its three pages, and the fourth that tells hasNextPage at a page boundary.
    expect(t.count('getreservation')).toBe(4);
  });

  it('allows first above 5000 only with edges @stream, and at most 100000', async () => {
    const plain = await t.exec(
      '{ event(eventId: 5001) { reservations(first: 25600) { edges { node { reservationNumber } } } } }',
    );
    expect(plain.errors?.[0]).toMatchObject({
      message: expect.stringContaining('@stream'),
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const tooMany = await t.exec(
      '{ event(eventId: 5001) { reservations(first: 100001) { edges @stream { node { reservationNumber } } } } }',
    );
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(t.count('getreservation')).toBe(0);
  });

  it('still counts each page against QUERY_MAX_UPSTREAM_CALLS, before any upstream call', async () => {
    const strict = await startGateway({ rateLimit: false }, { QUERY_MAX_UPSTREAM_CALLS: '20' }, { shared: t.emulator });
    try {
      const answer = await strict.exec(WALK);
      expect(answer.errors?.[0]?.extensions).toMatchObject({
        code: 'QUERY_TOO_COSTLY',
        estimatedCalls: expect.any(Number),
      });
      expect(answer.errors?.[0]?.extensions?.estimatedCalls).toBeGreaterThanOrEqual(PAGES);
      expect(t.count('getreservation')).toBe(0);
    } finally {
      await strict.close();
    }
  });
});

describe('@defer', () => {
  const DEFERRED = '{ event(eventId: 5001) { name ... @defer { hotels { hotelId } } } }';

  it('sends the deferred fields after the rest', async () => {
    const received: Part[] = [];
    for await (const { part } of parts(await send(DEFERRED))) received.push(part);
    expect(received[0]).toMatchObject({ data: { event: { name: expect.any(String) } }, hasNext: true });
    expect((received[0]!.data as { event: object }).event).not.toHaveProperty('hotels');
    const hotels = received.flatMap((part) => part.incremental ?? []).map((increment) => increment.data);
    expect(hotels).toEqual([{ hotels: expect.arrayContaining([{ hotelId: expect.any(Number) }]) }]);
    expect(received.at(-1)?.hasNext).toBe(false);
  });

  it('is not kept by the response cache: asked again, it is deferred again', async () => {
    for await (const _part of parts(await send(DEFERRED)));
    const again = await send(DEFERRED);
    expect(again.headers.get('content-type')).toContain('multipart/mixed');
    const received: Part[] = [];
    for await (const { part } of parts(again)) received.push(part);
    expect(received.length).toBeGreaterThan(1);
  });
});
