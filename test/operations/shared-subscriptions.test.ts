import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { samples } from '../helpers/metrics.ts';
import {
  book,
  feedHasRead,
  listen,
  type Subscriber,
  subscribeSse,
  subscribeWs,
  until,
  wsClient,
} from '../helpers/subscriptions.ts';

/*
 * Subscribers of one operation (document, variables, licensee and scopes) share one execution per
 * change (src/operations/shared-subscriptions.ts): `gateway_subscription_executions_total` counts
 * the executions, whatever door the subscribers came through. Different scopes, filters or a
 * `since` replay make executions of their own.
 */
const OPS_TOKEN = 'operators-token-0123456789abcdef';
const as = (client: keyof typeof CLIENT_KEYS) => ({ authorization: `Bearer ${CLIENT_KEYS[client]}` });

let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  t = await startGateway(
    { rateLimit: false },
    { ...licenseesEnv(), GATEWAY_AUTH: 'api-key', OPS_TOKEN, CHANGES_POLL_INTERVAL_MS: '200' },
  );
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

async function metric(name: string): Promise<number> {
  const res = await t.gateway.operators.fetch('http://yoga/metrics', {
    headers: { authorization: `Bearer ${OPS_TOKEN}` },
  });
  return samples(await res.text(), name).reduce((sum, sample) => sum + sample.value, 0);
}

const executions = () => metric('gateway_subscription_executions_total');
const groups = () => metric('gateway_subscription_groups');
const sse = (variables: Record<string, unknown>, client: keyof typeof CLIENT_KEYS = 'acme-web') =>
  subscribeSse(fetch, server.url, variables, as(client));
const reservationNumbers = (s: Subscriber) =>
  s.received.map(
    (result) =>
      (result.data?.reservationChanged as { reservation: { reservationNumber: number } }).reservation.reservationNumber,
  );

const latestModification = (eventId: number) =>
  Math.max(...t.emulator.state.store.reservationsByEvent.get(eventId)!.map((r) => r.modifiedMs));

/** Waits until the event's feed has read the service once since `from`; then `count` executions are live. */
async function subscribed(count: number, eventId: number, from: number): Promise<void> {
  await feedHasRead(t.emulator, eventId, from);
  for (let live = await groups(); live < count; live = await groups()) await new Promise((r) => setTimeout(r, 20));
  expect(await groups()).toBe(count);
}

describe('shared subscriptions', () => {
  it('six subscribers of one operation, over SSE and graphql-ws, cause one execution per change and receive the same payload', async () => {
    const from = t.emulator.state.log.length;
    const socket = wsClient(server.wsUrl, { Authorization: `Bearer ${CLIENT_KEYS['acme-web']}` });
    const subscribers = [
      ...(await Promise.all([1, 2, 3].map(() => sse({ eventId: 5003 })))),
      ...[1, 2, 3].map(() => subscribeWs(socket, { eventId: 5003 })),
    ];
    await subscribed(1, 5003, from);
    const before = await executions();

    const first = await book(t.emulator, { eventId: 5003 });
    const second = await book(t.emulator, { eventId: 5003 });
    await Promise.all(subscribers.map((s) => s.take(2)));
    for (const s of subscribers)
      expect(reservationNumbers(s)).toEqual([first.reservationNumber, second.reservationNumber]);
    for (const s of subscribers) expect(s.received).toEqual(subscribers[0]!.received);
    // Two changes, read by one poll or two: one execution each, not one per subscriber.
    expect((await executions()) - before).toBe(2);

    for (const s of subscribers) s.close();
    await socket.dispose();
    await until(() => t.gateway.changeFeeds.active().every((feed) => feed.eventId !== 5003), 5000);
    expect(await groups()).toBe(0);
  });

  it('subscribers with other scopes, another filter or a `since` replay are not shared', async () => {
    const from = t.emulator.state.log.length;
    const before = await executions();
    const hotelId = t.emulator.state.store.hotelsByEvent.get(5002)![0]!.hotelId;
    const subscribers = await Promise.all([
      sse({ eventId: 5002 }),
      sse({ eventId: 5002 }),
      // Another client of the licensee, with other scopes.
      sse({ eventId: 5002 }, 'acme-ops'),
      // Another filter, matching the booking below.
      sse({ eventId: 5002, filter: { hotelId } }),
      // A replay from the event's latest modification (the service's clock), then live.
      sse({ eventId: 5002, since: new Date(latestModification(5002)).toISOString() }),
    ]);
    await subscribed(4, 5002, from);

    const booked = await book(t.emulator, { eventId: 5002, hotelId });
    await until(() => subscribers.every((s) => reservationNumbers(s).includes(booked.reservationNumber)), 10_000);
    const [shared, alsoShared, otherScopes, otherFilter, replay] = subscribers as [Subscriber, ...Subscriber[]];
    for (const s of [shared, alsoShared, otherScopes, otherFilter])
      expect(reservationNumbers(s!)).toEqual([booked.reservationNumber]);
    // One execution for the two alike, one each for the others; the replay's records are its own executions.
    expect((await executions()) - before).toBe(3 + replay!.received.length);

    for (const s of subscribers) s.close();
    await until(() => t.gateway.changeFeeds.active().every((feed) => feed.eventId !== 5002), 5000);
    expect(await groups()).toBe(0);
  });
});
