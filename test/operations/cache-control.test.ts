import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_TTLS } from '../../src/config/response-cache-ttls.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * The Cache-Control header of GraphQL answers over HTTP (docs/federating.md): `private,
 * max-age=<s>` for what the response cache keeps, as long as it keeps it, `no-store, max-age=0`
 * for everything else. With RESPONSE_CACHE on and off.
 */

const ACME = { authorization: `Bearer ${CLIENT_KEYS['acme-ops']}` };
const EVENT = '{ event(eventId: 5001) { eventId name } }';
const EVENT_WITH_RESERVATIONS =
  '{ event(eventId: 5001) { name reservations(first: 2) { edges { node { reservationNumber } } } } }';
const ENTITIES = `query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Event { name } } }`;
const NO_STORE = 'no-store, max-age=0';

function post(t: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  return t.gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...ACME, ...headers },
    body: JSON.stringify(body),
  });
}

async function cacheControlOf(t: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  const res = await post(t, body, headers);
  const answer = (await res.json()) as { errors?: unknown[] };
  return { header: res.headers.get('cache-control'), status: res.status, errors: answer.errors };
}

describe.each([
  ['on', 'on'],
  ['off', 'off'],
])('with RESPONSE_CACHE=%s', (_name, responseCache) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, { ...licenseesEnv(), RESPONSE_CACHE: responseCache });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.gateway.upstream.clearCache();
    t.gateway.clearResponseCache();
  });

  it('a query holding only events may be kept privately for the events’ lifetime', async () => {
    const answer = await cacheControlOf(t, { query: EVENT });
    expect(answer.errors).toBeUndefined();
    expect(answer.header).toBe(`private, max-age=${DEFAULT_TTLS.Event / 1000}`);
  });

  it('the shortest lifetime of the types in the answer wins (reservations: 5 s)', async () => {
    const answer = await cacheControlOf(t, { query: EVENT_WITH_RESERVATIONS });
    expect(answer.errors).toBeUndefined();
    expect(answer.header).toBe(`private, max-age=${DEFAULT_TTLS.Reservation / 1000}`);
  });

  it('an _entities answer (a router’s entity fetch) says its lifetime too', async () => {
    const answer = await cacheControlOf(t, {
      query: ENTITIES,
      variables: { representations: [{ __typename: 'Event', eventId: 5001 }] },
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.header).toBe(`private, max-age=${DEFAULT_TTLS.Event / 1000}`);
  });

  it('mutations, answers with errors, introspection and large answers are never kept', async () => {
    const mutation = await cacheControlOf(t, {
      query:
        'mutation { createCustomField(input: { name: "Cache test", eventId: 5001 }) { customField { customFieldId } } }',
    });
    expect(mutation.errors).toBeUndefined();
    expect(mutation.header).toBe(NO_STORE);

    const withError = await cacheControlOf(t, {
      query: '{ event(eventId: 5001) { name } nope: event(eventId: -1) { name } }',
    });
    expect(withError.errors?.length).toBeGreaterThan(0);
    expect(withError.header).toBe(NO_STORE);

    const introspection = await cacheControlOf(t, { query: '{ __schema { queryType { name } } }' });
    expect(introspection.errors).toBeUndefined();
    expect(introspection.header).toBe(NO_STORE);

    // A window of more than 200 records: the response cache leaves it alone.
    const large = await cacheControlOf(t, {
      query: '{ event(eventId: 5001) { reservations(first: 201) { edges { node { reservationNumber } } } } }',
    });
    expect(large.errors).toBeUndefined();
    expect(large.header).toBe(NO_STORE);
  });

  it('refusals (a document that does not validate, a missing credential) are never kept', async () => {
    const invalid = await cacheControlOf(t, { query: '{ event(eventId: 5001) { nope } }' });
    expect(invalid.header).toBe(NO_STORE);
    const anonymous = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: EVENT }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('cache-control')).toBe(NO_STORE);
  });

  it('a subscription’s stream is never kept', async () => {
    const controller = new AbortController();
    const res = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...ACME },
      body: JSON.stringify({ query: 'subscription { reservationChanged(eventId: 5001) { kind } }' }),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe(NO_STORE);
    controller.abort();
    await res.body?.cancel().catch(() => undefined);
  });
});

describe('with RESPONSE_CACHE_TTLS', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, { ...licenseesEnv(), RESPONSE_CACHE_TTLS: 'Event=0,Hotel=120000' });
  });
  afterAll(() => t.close());

  it('a type whose lifetime is 0 is never kept; another lifetime is the one said', async () => {
    expect((await cacheControlOf(t, { query: EVENT })).header).toBe(NO_STORE);
    const hotels = await cacheControlOf(t, {
      query: '{ event(eventId: 5001) { hotels { name } } }',
    });
    // The answer holds the event too: its 0 wins.
    expect(hotels.header).toBe(NO_STORE);
    const entity = await cacheControlOf(t, {
      query: `query ($r: [_Any!]!) { _entities(representations: $r) { ... on Hotel { name } } }`,
      variables: { r: [{ __typename: 'Hotel', eventId: 5001, hotelId: firstHotelId(t) }] },
    });
    expect(entity.errors).toBeUndefined();
    expect(entity.header).toBe('private, max-age=120');
  });

  it('a cached answer says what remains of its lifetime, never more', async () => {
    const query = `query ($r: [_Any!]!) { _entities(representations: $r) { ... on Hotel { name } } }`;
    const variables = { r: [{ __typename: 'Hotel', eventId: 5001, hotelId: firstHotelId(t) }] };
    await cacheControlOf(t, { query, variables });
    const again = await post(t, { query, variables }, { 'x-show-cost': '1' });
    const body = (await again.json()) as { extensions?: { responseCache?: { hit?: boolean } } };
    expect(body.extensions?.responseCache?.hit).toBe(true);
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(again.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(120);
  });
});

function firstHotelId(t: TestGateway): number {
  const hotels = t.emulator.state.store.hotelsByEvent.get(5001);
  if (!hotels?.length) throw new Error('the emulator has no hotels of event 5001');
  return hotels[0]!.hotelId;
}
