import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FeedFootprint, NO_FOOTPRINT } from '../../src/changes/registry.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, subscribeSse, subscribeWs, until, wsClient } from '../helpers/subscriptions.ts';

/*
 * Issue 28: a subscriber that leaves leaves nothing behind, on every door: the feeds' listeners,
 * closers, poll timers and known records, the sockets, the process's timers. Counts, not timings.
 */
const INTERVAL_MS = 100;
const EVENT = 5003;
let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  t = await startGateway(
    { rateLimit: false },
    // A small cap: a slot a leaving subscriber kept would soon refuse the cycles below.
    { CHANGES_POLL_INTERVAL_MS: String(INTERVAL_MS), SUBSCRIPTIONS_PER_CLIENT: '3' },
  );
  server = await listen(t);
  // A token and the upstream client's own timers exist before any subscriber does.
  await t.exec('{ event(eventId: 5003) { eventId } }');
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const footprint = (): FeedFootprint => t.gateway.changeFeeds.footprint();
const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
const member = () => t.gateway.changeFeeds.active().find((feed) => feed.eventId === EVENT);
/** A booking at the emulator, and until each subscriber has received it. */
async function bookAndReceive(...subscribers: { take(n: number): Promise<unknown[]> }[]) {
  await book(t.emulator, { eventId: EVENT });
  await Promise.all(subscribers.map((s) => s.take(1)));
}

describe('a subscriber that leaves leaves nothing behind (issue 28)', () => {
  it('GraphQL over SSE: listeners, closers, the poll timer, known records and timers back to none', async () => {
    const timersBefore = timers();
    expect(footprint()).toEqual(NO_FOOTPRINT);
    const subscriber = await subscribeSse(fetch, server.url, { eventId: EVENT });
    await until(() => (member()?.polls ?? 0) > 0);
    await bookAndReceive(subscriber);
    const during = footprint();
    expect(during).toMatchObject({ feeds: 1, members: 1, listeners: 1, closers: 1 });
    expect(during.known).toBeGreaterThan(0);
    subscriber.close();
    await until(() => footprint().feeds === 0);
    expect(footprint()).toEqual(NO_FOOTPRINT);
    // The stream's keep-alive, the feed's poll, the credential's expiry: every timer the subscriber started ends.
    await until(() => timers() <= timersBefore);
  });

  it('graphql-ws: two subscriptions on one socket; after the client leaves, no feed state and no socket', async () => {
    const timersBefore = timers();
    const client = wsClient(server.wsUrl);
    const a = subscribeWs(client, { eventId: EVENT });
    const b = subscribeWs(client, { eventId: 5002 });
    await until(() => t.gateway.changeFeeds.active().filter((feed) => feed.polls > 0).length === 2);
    expect(server.openSockets()).toBe(1);
    await bookAndReceive(a);
    expect(footprint()).toMatchObject({ feeds: 2, members: 2, listeners: 2, closers: 2 });
    // Each feed's next poll is pending between polls (a poll in flight holds none: a loaded machine).
    await until(() => footprint().timers === 2, 5_000);
    expect(b.received).toEqual([]);
    await client.dispose();
    await until(() => footprint().feeds === 0 && server.openSockets() === 0);
    expect(footprint()).toEqual(NO_FOOTPRINT);
    await until(() => timers() <= timersBefore);
  });

  it('1,000 subscribe/unsubscribe cycles (SSE and graphql-ws) leave the feed as one standing subscriber keeps it', async () => {
    // One subscriber stays for the whole test: the feed lives on, and what the cycles leave would stay in it.
    const standing = await subscribeSse(fetch, server.url, { eventId: EVENT });
    // Two polls: a join read that came late (a loaded machine) has the minute of the last test's
    // booking told by the next poll, which then knows one record more (issue 36's feed start).
    await until(() => (member()?.polls ?? 0) > 1);
    const start = footprint();
    expect(start).toMatchObject({ feeds: 1, members: 1, listeners: 1, closers: 1 });
    const client = wsClient(server.wsUrl);
    // Each cycle's subscriber joins the standing one's execution (one operation): the feed keeps one member.
    const members = () => t.gateway.subscriptions().subscribers;
    // Checks every millisecond: the cycles' own pace, not a 20 ms tick.
    const settle = async (condition: () => boolean) => {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
    };
    for (let cycle = 0; cycle < 1000; cycle++) {
      const subscriber =
        cycle % 2 === 0
          ? await subscribeSse(fetch, server.url, { eventId: EVENT })
          : subscribeWs(client, { eventId: EVENT });
      await settle(() => members() === 2);
      subscriber.close();
      await settle(() => members() === 1);
    }
    await client.dispose();
    await until(() => server.openSockets() === 0);
    // Nothing was booked meanwhile: the feed knows what it knew, with the one standing listener.
    expect({ ...footprint(), timers: start.timers }).toEqual(start);
    // The standing subscriber still receives: the cycles took nothing from it.
    await bookAndReceive(standing);
    standing.close();
    await until(() => footprint().feeds === 0);
  }, 120_000);
});
