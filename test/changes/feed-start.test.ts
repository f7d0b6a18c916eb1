import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KEYS, LICENSEES_JSON, licenseesEnv, sha256 } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { readBody } from '../helpers/request-body.ts';
import { book, listen, type Subscriber, subscribeSse, subscribeWs, until, wsClient } from '../helpers/subscriptions.ts';

/*
 * Issue 36: a change feed tells a subscriber only what changed after it joined, and an endpoint only
 * what changed after it was registered, however recent the last change before; and a service
 * clock that steps back loses nothing. Over real ports: GraphQL over SSE, graphql-ws and a webhook
 * receiver on 127.0.0.1, all on the licensee's one feed of the event.
 */
const POLL_MS = 300;
const HOOKS_KEY = 'acme-hooks-key-5e6f7a8b9c0d1e2f3a4b';
const READER = { authorization: `Bearer ${CLIENT_KEYS['acme-web']}` };
const HOOKS = { authorization: `Bearer ${HOOKS_KEY}` };
const LICENSEES = {
  licensees: LICENSEES_JSON.licensees.map((licensee) => ({
    ...licensee,
    clients: [
      ...licensee.clients,
      ...(licensee.id === 'acme'
        ? [{ name: 'acme-hooks', apiKeySha256: sha256(HOOKS_KEY), scopes: ['webhooks:manage'] }]
        : []),
    ],
  })),
};

let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
let receiver: ReturnType<typeof createServer>;
let receiverUrl: string;
/** What the receiver was sent, by path (each endpoint has its own). */
const delivered: { path: string; body: { type: string; data: { reservationNumber: number; sequence: number } } }[] = [];

beforeAll(async () => {
  receiver = createServer(async (request: IncomingMessage, response) => {
    delivered.push({ path: request.url ?? '', body: JSON.parse(await readBody(request)) });
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await startGateway(
    { rateLimit: false },
    {
      ...licenseesEnv(LICENSEES),
      GATEWAY_AUTH: 'api-key',
      CHANGES_POLL_INTERVAL_MS: String(POLL_MS),
      WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
    },
  );
  server = await listen(t);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

const feedOf = (eventId: number) => t.gateway.changeFeeds.active().find((feed) => feed.eventId === eventId);
/** Waits for `count` polls of the event's feed after now (each began after everything before this call). */
async function polls(eventId: number, count: number): Promise<void> {
  const start = feedOf(eventId)?.polls ?? 0;
  await until(() => (feedOf(eventId)?.polls ?? 0) >= start + count, 30_000);
}

async function register(path: string, eventId: number): Promise<string> {
  const created = await t.exec<{ createWebhookEndpoint: { endpoint: { id: string } } }, object>(
    'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }',
    { input: { url: `${receiverUrl}${path}`, eventIds: [eventId] } },
    HOOKS,
  );
  expect(created.errors).toBeUndefined();
  await until(() => t.gateway.webhooks.joined().includes(`1001|${eventId}`), 10_000);
  // Its feed has read the service as the endpoint found it: what changes from now on is sent.
  await until(() => (feedOf(eventId)?.polls ?? 0) > 0, 10_000);
  return created.data!.createWebhookEndpoint.endpoint.id;
}
async function unregister(id: string): Promise<void> {
  const deleted = await t.exec(`mutation { deleteWebhookEndpoint(id: "${id}") { deletedId } }`, undefined, HOOKS);
  expect(deleted.errors).toBeUndefined();
}

const sse = (variables: Record<string, unknown>) => subscribeSse(fetch, server.url, variables, READER);
/** The reservation numbers and kinds a subscriber received of `reservationNumber`. */
const told = (s: Subscriber, reservationNumber: number) =>
  s.received
    .map((result) => result.data?.reservationChanged as { kind: string; reservation: { reservationNumber: number } })
    .filter((change) => change?.reservation.reservationNumber === reservationNumber)
    .map((change) => change.kind);
const sentTo = (path: string, reservationNumber: number) =>
  delivered
    .filter((d) => d.path === path && d.body.data.reservationNumber === reservationNumber)
    .map((d) => ({ type: d.body.type, sequence: d.body.data.sequence }));

/** Moves the emulator's clock to 5 s into its next minute: what follows stays in that minute. */
async function startOfMinute(): Promise<void> {
  const now = t.emulator.state.clock.now();
  await fetch(`${t.emulator.url}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advanceMs: 65_000 - (now % 60_000) }),
  });
}

describe('a feed that starts after a booking (issue 36)', () => {
  it('tells the new subscribers and endpoint nothing of it, and its next change once, the sequence one above the last sent', async () => {
    // The first endpoint starts the feed and is sent the booking.
    await startOfMinute();
    const first = await register('/first', 5003);
    const { reservationNumber } = await book(t.emulator, { eventId: 5003 });
    await until(() => sentTo('/first', reservationNumber).length > 0, 10_000);
    expect(sentTo('/first', reservationNumber)).toEqual([{ type: 'reservation.created', sequence: 1 }]);
    const bookedAt = new Date(t.emulator.state.clock.now() - 60_000).toISOString();
    await unregister(first);
    await until(() => feedOf(5003) === undefined, 10_000);

    // In the booking's minute, a new feed: two subscribers and an endpoint, none with `since`.
    const ws = wsClient(server.wsUrl, { Authorization: READER.authorization });
    const overSse = await sse({ eventId: 5003 });
    const overWs = subscribeWs(ws, { eventId: 5003 });
    const second = await register('/second', 5003);
    // A subscriber asking from before the booking replays it, once.
    const replaying = await sse({ eventId: 5003, since: bookedAt });
    await until(() => told(replaying, reservationNumber).length > 0, 10_000);
    await polls(5003, 3);
    expect(told(overSse, reservationNumber)).toEqual([]);
    expect(told(overWs, reservationNumber)).toEqual([]);
    expect(sentTo('/second', reservationNumber)).toEqual([]);

    // Its next change reaches each of them once.
    await book(t.emulator, { eventId: 5003, reservationNumber, status: 'cancelled' });
    await until(
      () => told(overSse, reservationNumber).length > 0 && told(overWs, reservationNumber).length > 0,
      10_000,
    );
    await until(() => sentTo('/second', reservationNumber).length > 0, 10_000);
    await polls(5003, 3);
    expect(told(overSse, reservationNumber)).toEqual(['CANCELLED']);
    expect(told(overWs, reservationNumber)).toEqual(['CANCELLED']);
    expect(told(replaying, reservationNumber)).toEqual(['CREATED', 'CANCELLED']);
    expect(sentTo('/second', reservationNumber)).toEqual([{ type: 'reservation.cancelled', sequence: 2 }]);
    for (const s of [overSse, overWs, replaying]) s.close();
    await ws.dispose();
    await unregister(second);
    await until(() => feedOf(5003) === undefined, 10_000);
  });
});

describe('a service clock that steps back (issue 36)', () => {
  it('a booking made after the step reaches every door and the endpoint within three polls, once', async () => {
    const ws = wsClient(server.wsUrl, { Authorization: READER.authorization });
    const overSse = await sse({ eventId: 5002 });
    const overWs = subscribeWs(ws, { eventId: 5002 });
    await register('/clock', 5002);
    const clock = (advanceMs: number) =>
      fetch(`${t.emulator.url}/_emulator/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ advanceMs }),
      });
    await clock(5 * 60_000);
    const ahead = await book(t.emulator, { eventId: 5002 });
    await until(() => told(overSse, ahead.reservationNumber).length > 0, 10_000);
    // An NTP correction: three minutes back. The feed learns of it from the service's answers.
    await clock(-3 * 60_000);
    await polls(5002, 1);
    const after = await book(t.emulator, { eventId: 5002 });
    await polls(5002, 3);
    // Then some more polls: nothing of it comes twice.
    await until(() => sentTo('/clock', after.reservationNumber).length > 0, 10_000);
    await polls(5002, 3);
    expect(told(overSse, after.reservationNumber)).toEqual(['CREATED']);
    expect(told(overWs, after.reservationNumber)).toEqual(['CREATED']);
    expect(sentTo('/clock', after.reservationNumber)).toEqual([{ type: 'reservation.created', sequence: 1 }]);
    for (const s of [overSse, overWs]) s.close();
    await ws.dispose();
  });
});
