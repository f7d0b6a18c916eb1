import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, feedHasRead, listen, subscribeSse, subscribeWs, until, wsClient } from '../helpers/subscriptions.ts';

/*
 * Answers written from the JSON of their data serialised once (src/operations/kept-json.ts): a
 * response-cache hit serialises none of its data, and one change to six subscribers of one
 * operation, over SSE and graphql-ws, is serialised once. Counted by what JSON.stringify returned
 * while it happened: a serialisation of the data holds its fields' names.
 */
let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  // graphql-jit keeps the JSON.stringify it found when it compiled a document, which a spy set later
  // would not see: off here, so that every serialisation of an answer goes through the spy.
  t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '200', GRAPHQL_JIT: 'off' });
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});
afterEach(() => vi.restoreAllMocks());

/** Runs `act` and counts the JSON.stringify calls meanwhile whose output holds `marker`. */
async function serialisations(marker: string, act: () => Promise<unknown>): Promise<number> {
  const stringify = vi.spyOn(JSON, 'stringify');
  await act();
  const outputs = stringify.mock.results.map((result) => result.value as unknown);
  stringify.mockRestore();
  return outputs.filter((output) => typeof output === 'string' && output.includes(marker)).length;
}

describe('answers written from kept JSON', () => {
  it('a response-cache hit is written from the bytes of the first answer, serialising none of its data', async () => {
    const query = '{ event(eventId: 5001) { eventId name city startDate } }';
    let first: unknown;
    expect(await serialisations('"event":{', async () => (first = await t.exec(query)))).toBe(1);
    let again: unknown;
    expect(await serialisations('"event":{', async () => (again = await t.exec(query)))).toBe(0);
    expect(again).toEqual(first);
    expect(first).toMatchObject({ status: 200, data: { event: { eventId: 5001 } } });

    // With its extensions (X-Show-Cost: 1) the hit still writes its data from the kept bytes.
    const shown = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-show-cost': '1' },
      body: JSON.stringify({ query }),
    });
    const text = await shown.text();
    expect(JSON.parse(text)).toMatchObject({
      data: (first as { data: unknown }).data,
      extensions: { responseCache: { hit: true } },
    });
  });

  it('one change to six subscribers of one operation, over SSE and graphql-ws, is serialised once', async () => {
    const from = t.emulator.state.log.length;
    const socket = wsClient(server.wsUrl);
    const subscribers = [
      ...(await Promise.all([1, 2, 3].map(() => subscribeSse(fetch, server.url, { eventId: 5003 })))),
      ...[1, 2, 3].map(() => subscribeWs(socket, { eventId: 5003 })),
    ];
    await feedHasRead(t.emulator, 5003, from);
    await until(() => t.gateway.changeFeeds.active().some((feed) => feed.eventId === 5003 && feed.members === 1));

    const delivered = serialisations('"reservationChanged":', async () => {
      await book(t.emulator, { eventId: 5003 });
      await Promise.all(subscribers.map((s) => s.take(1)));
    });
    expect(await delivered).toBe(1);
    for (const s of subscribers) expect(s.received).toEqual(subscribers[0]!.received);
    expect(subscribers[0]!.received[0]?.data?.reservationChanged).toMatchObject({ kind: 'CREATED' });
    for (const s of subscribers) s.close();
    await socket.dispose();
  });
});
