import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NO_FOOTPRINT } from '../../src/changes/registry.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { CALLBACK_ACCEPT, startTestRouter, type TestRouter } from '../helpers/callback-router.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, RESERVATION_CHANGED, until } from '../helpers/subscriptions.ts';

/*
 * Subscriptions through router callbacks (Apollo's callback protocol 1.0), against a router written
 * here from the protocol's text: the check before the answer, `next` per change, heartbeats, the
 * end when the router forgets or disappears, and the allow-list of callback URLs.
 */

const POLL_MS = 200;

async function subscribe(t: TestGateway, body: object, headers: Record<string, string> = {}) {
  const res = await t.gateway.yoga.fetch('http://127.0.0.1/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: CALLBACK_ACCEPT, ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] },
  };
}

/** A server that records whether anything reached it (an address outside the allow-list). */
async function witness() {
  let hits = 0;
  const server = createServer((_, response) => {
    hits++;
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('callback subscriptions, with a router written from the protocol', () => {
  let router: TestRouter;
  let t: TestGateway;
  beforeAll(async () => {
    router = await startTestRouter();
    t = await startGateway(
      { rateLimit: false },
      { CHANGES_POLL_INTERVAL_MS: String(POLL_MS), SUBSCRIPTION_CALLBACK_URLS: router.prefix },
    );
  });
  afterEach(async () => {
    router.answer = () => 204;
    await until(() => t.gateway.callbacks.active() === 0 && t.gateway.changeFeeds.active().length === 0);
  });
  afterAll(async () => {
    await t.close();
    await router.close();
  });

  it('checks the callback URL first, answers {"data": null}, delivers each change as next, heartbeats, and stops on a 404', async () => {
    const answer = await subscribe(t, router.subscription('one', RESERVATION_CHANGED, { eventId: 5003 }, 1000));
    expect(answer).toEqual({ status: 200, body: { data: null } });
    // The check went out before the answer, with the protocol's header and plain JSON.
    expect(router.received[0]).toMatchObject({
      path: '/callback/one',
      protocol: 'callback/1.0',
      contentType: 'application/json',
      message: { kind: 'subscription', action: 'check', id: 'one', verifier: 'verifier-one' },
    });
    // Once the feed has read the service as its subscriber found it (issue 36).
    await until(() => t.gateway.changeFeeds.active().some((feed) => feed.polls > 0));
    const { reservationNumber } = await book(t.emulator, { eventId: 5003 });
    await until(() => router.of('one', 'next').length > 0, POLL_MS + 5_000);
    expect(router.of('one', 'next')[0]).toMatchObject({
      kind: 'subscription',
      verifier: 'verifier-one',
      payload: { data: { reservationChanged: { kind: 'CREATED', reservation: { reservationNumber, eventId: 5003 } } } },
    });
    // Heartbeats: checks after the first, at the interval asked.
    await until(() => router.of('one', 'check').length >= 2);
    // The router forgets the subscription: the next callback gets 404, and nothing more is sent.
    router.answer = () => 404;
    await until(() => t.gateway.callbacks.active() === 0);
    await until(() => t.gateway.changeFeeds.active().length === 0);
    // Issue 28: the callback door's subscriber left nothing in the feeds (listener, closer, poll timer, known records).
    expect(t.gateway.changeFeeds.footprint()).toEqual(NO_FOOTPRINT);
    const sent = router.of('one').length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(router.of('one').length).toBe(sent);
    expect(router.of('one', 'complete')).toEqual([]);
  });

  it('stops the heartbeats of a router that fails to answer (after a few tries)', async () => {
    expect((await subscribe(t, router.subscription('two', RESERVATION_CHANGED, { eventId: 5003 }, 1000))).status).toBe(
      200,
    );
    router.answer = () => 503;
    await until(() => t.gateway.callbacks.active() === 0);
    const sent = router.of('two').length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(router.of('two').length).toBe(sent);
  });

  it('ends with complete and the error when the stream fails (an unknown event)', async () => {
    expect((await subscribe(t, router.subscription('three', RESERVATION_CHANGED, { eventId: 999_999 }))).status).toBe(
      200,
    );
    await until(() => router.of('three', 'complete').length === 1);
    expect(router.of('three', 'complete')[0]?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await until(() => t.gateway.callbacks.active() === 0);
  });

  it('answers 4xx when the check is not answered 204, and starts nothing upstream', async () => {
    router.answer = () => 404;
    t.clearLog();
    const answer = await subscribe(t, router.subscription('four', RESERVATION_CHANGED, { eventId: 5003 }));
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.message).toContain('answered 404');
    expect(router.of('four').map((message) => message.action)).toEqual(['check']);
    expect(t.calls()).toEqual([]);
    expect(t.gateway.callbacks.active()).toBe(0);
  });

  it('refuses a callback URL outside SUBSCRIPTION_CALLBACK_URLS with 400, sending nothing to it', async () => {
    const elsewhere = await witness();
    try {
      for (const callbackUrl of [
        `${elsewhere.url}/x`,
        `${router.prefix}evil/x`,
        router.prefix.replace('127.0.0.1', 'localhost'),
        'file:///etc/passwd',
      ]) {
        const answer = await subscribe(t, {
          query: RESERVATION_CHANGED,
          variables: { eventId: 5003 },
          extensions: { subscription: { callbackUrl, subscriptionId: 'x', verifier: 'v', heartbeatIntervalMs: 0 } },
        });
        expect(answer.status).toBe(400);
        expect(answer.body.errors?.[0]?.message).toContain('SUBSCRIPTION_CALLBACK_URLS');
      }
      expect(elsewhere.hits()).toBe(0);
      expect(router.of('x')).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('refuses a malformed subscription extension, and a heartbeat asked too often', async () => {
    const tooOften = await subscribe(t, router.subscription('five', RESERVATION_CHANGED, { eventId: 5003 }, 10));
    expect(tooOften.status).toBe(400);
    expect(tooOften.body.errors?.[0]?.message).toContain('heartbeatIntervalMs');
    const noVerifier = await subscribe(t, {
      query: RESERVATION_CHANGED,
      variables: { eventId: 5003 },
      extensions: { subscription: { callbackUrl: `${router.prefix}/six`, subscriptionId: 'six' } },
    });
    expect(noVerifier.status).toBe(400);
    expect(noVerifier.body.errors?.[0]?.message).toContain('verifier');
    expect(router.received.filter((r) => ['five', 'six'].includes(r.message.id))).toEqual([]);
  });
});

describe('callback subscriptions off', () => {
  it('are refused with a 400 naming SUBSCRIPTION_CALLBACK_URLS when it is unset, and nothing is called', async () => {
    const router = await startTestRouter();
    const t = await startGateway({ rateLimit: false });
    try {
      const answer = await subscribe(t, router.subscription('off', RESERVATION_CHANGED, { eventId: 5003 }));
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.message).toContain('SUBSCRIPTION_CALLBACK_URLS');
      expect(router.received).toEqual([]);
    } finally {
      await t.close();
      await router.close();
    }
  });
});

describe('the rules that guard subscriptions hold on the callback door', () => {
  let router: TestRouter;
  let t: TestGateway;
  beforeAll(async () => {
    router = await startTestRouter();
    t = await startGateway(
      { rateLimit: false },
      {
        ...licenseesEnv(),
        CHANGES_POLL_INTERVAL_MS: String(POLL_MS),
        SUBSCRIPTION_CALLBACK_URLS: router.prefix,
        SUBSCRIPTIONS_PER_CLIENT: '1',
      },
    );
  });
  afterAll(async () => {
    await t.close();
    await router.close();
  });
  const key = { 'x-api-key': CLIENT_KEYS['acme-web'] };

  it('without a credential: 401, and no check goes to the router', async () => {
    const answer = await subscribe(t, router.subscription('anon', RESERVATION_CHANGED, { eventId: 5003 }));
    expect(answer.status).toBe(401);
    expect(router.of('anon')).toEqual([]);
  });

  it('too costly: QUERY_TOO_COSTLY, and no check goes to the router', async () => {
    // Each change looks up its attendee's reservations: per record of a poll's page of changes.
    const costly = `subscription { reservationChanged(eventId: 5001, since: "2000-01-01T00:00:00Z") {
      reservation { attendee { reservations(eventId: 5001) { totalCount } } } } }`;
    const answer = await subscribe(t, router.subscription('costly', costly, {}), key);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
    expect(router.of('costly')).toEqual([]);
  });

  it('past SUBSCRIPTIONS_PER_CLIENT: RATE_LIMITED, and no check goes to the router; a forgotten one frees its slot', async () => {
    const first = router.subscription('first', RESERVATION_CHANGED, { eventId: 5003 }, 1000);
    expect((await subscribe(t, first, key)).body).toEqual({ data: null });
    const second = await subscribe(t, router.subscription('second', RESERVATION_CHANGED, { eventId: 5003 }), key);
    expect(second.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(router.of('second')).toEqual([]);
    // The router forgets the first (404 to its heartbeat): its slot is given back.
    router.answer = (received) => (received.message.id === 'first' ? 404 : 204);
    await until(() => t.gateway.callbacks.active() === 0);
    const third = await subscribe(t, router.subscription('third', RESERVATION_CHANGED, { eventId: 5003 }), key);
    expect(third.body).toEqual({ data: null });
  });
});
