import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, type Subscriber, subscribeSse, subscribeWs, until, wsClient } from '../helpers/subscriptions.ts';

/*
 * A subscriber sees only its own licensee's events, and WebSocket connections are
 * authenticated as HTTP requests are (init payload or upgrade headers).
 */
let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
const bearer = (client: keyof typeof CLIENT_KEYS) => `Bearer ${CLIENT_KEYS[client]}`;

beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { ...licenseesEnv(), CHANGES_POLL_INTERVAL_MS: '200' });
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** A graphql-ws client whose upgrade request carries these headers (as a server-side client can send them). */
function wsClientWithHeaders(headers: Record<string, string>) {
  class WithHeaders extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  return createClient({ url: server.wsUrl, webSocketImpl: WithHeaders, retryAttempts: 0, lazy: true });
}
const numbersOf = (s: Subscriber) =>
  s.received.map(
    (result) => (result.data?.reservationChanged as { reservation: { eventId: number } }).reservation.eventId,
  );

describe('reservationChanged across licensees', () => {
  it('each subscriber receives only its licensee’s changes; another licensee’s event is an unknown event', async () => {
    const acme = await subscribeSse(fetch, server.url, { eventId: 5003 }, { authorization: bearer('acme-web') });
    const globexByInit = subscribeWs(wsClient(server.wsUrl, { Authorization: bearer('globex-web') }), {
      eventId: 6001,
    });
    const globexByHeader = subscribeWs(wsClientWithHeaders({ authorization: bearer('globex-web') }), { eventId: 6001 });
    await until(() => t.gateway.changeFeeds.active().filter((feed) => feed.polls > 0).length === 2);
    await book(t.emulator, { eventId: 5003 });
    await book(t.emulator, { eventId: 6001 });
    await acme.take(1);
    await globexByInit.take(1);
    await globexByHeader.take(1);
    expect(numbersOf(acme)).toEqual([5003]);
    expect(numbersOf(globexByInit)).toEqual([6001]);
    expect(numbersOf(globexByHeader)).toEqual([6001]);
    // One feed per licensee (by its systemIdentifier) and event: acme's and globex's feeds are apart.
    // Globex's two subscribers of one operation share one execution, the feed's one member.
    expect(
      t.gateway.changeFeeds.active().map(({ licenseeId, eventId, members }) => ({ licenseeId, eventId, members })),
    ).toEqual([
      { licenseeId: '1001', eventId: 5003, members: 1 },
      { licenseeId: '2002', eventId: 6001, members: 1 },
    ]);
    expect(t.gateway.subscriptions()).toEqual({ executions: 2, subscribers: 3 });

    const across = await subscribeSse(fetch, server.url, { eventId: 6001 }, { authorization: bearer('acme-web') });
    await across.completed;
    expect(across.received[0]?.errors?.[0]?.message).toBe('eventId: no event 6001 for this licensee');
    for (const s of [acme, globexByInit, globexByHeader]) s.close();
    await until(() => t.gateway.changeFeeds.active().length === 0);
  });

  it('refuses a WebSocket or SSE subscriber without a valid credential before anything runs', async () => {
    // A poll of the last test's feeds may still be on its way.
    await new Promise((resolve) => setTimeout(resolve, 500));
    t.clearLog();
    const anonymous = subscribeWs(wsClient(server.wsUrl), { eventId: 5003 });
    const wrongKey = subscribeWs(wsClient(server.wsUrl, { Authorization: 'Bearer not-a-key' }), { eventId: 5003 });
    await anonymous.completed;
    await wrongKey.completed;
    expect(anonymous.received[0]?.errors?.[0]?.message).toBe('Forbidden');
    expect(wrongKey.received[0]?.errors?.[0]?.message).toBe('Forbidden');
    const overSse = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { reservationChanged(eventId: 5003) { kind } }' }),
    });
    expect(overSse.status).toBe(401);
    await overSse.body?.cancel();
    expect(t.count('getreservation')).toBe(0);
  });
});
