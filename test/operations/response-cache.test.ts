import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/environment.ts';
import { DEFAULT_TTLS } from '../../src/config/response-cache-ttls.ts';
import { CHANGED_BY_MUTATION } from '../../src/operations/response-cache/writes.ts';
import { schema } from '../../src/schema/index.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * The response cache (docs/architecture.md, "Response cache"): whole answers kept per licensee and client scopes, for the
 * lifetime of their shortest-lived type, dropped by our own mutations, served only after every
 * check a request must pass. Two licensees: acme (1001, events 5001–5003) and globex (2002, events
 * 6001–6002), each with a read client (-web) and a read/write client (-ops).
 */
const as = (client: keyof typeof CLIENT_KEYS, showCost = true) => ({
  authorization: `Bearer ${CLIENT_KEYS[client]}`,
  ...(showCost ? { 'x-show-cost': '1' } : {}),
});
type CacheExtension = { hit: boolean; didCache?: boolean; ttl?: number };
const cacheOf = (answer: { extensions?: unknown }) =>
  (answer.extensions as { responseCache?: CacheExtension } | undefined)?.responseCache;

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, licenseesEnv());
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.gateway.upstream.clearCache();
  t.gateway.clearResponseCache();
  t.clearLog();
});

const EVENT = '{ event(eventId: 5001) { eventId name } }';

describe('a cache hit', () => {
  it('answers the same as the first time, with no upstream call', async () => {
    const first = await t.exec(EVENT, undefined, as('acme-web'));
    expect(cacheOf(first)).toEqual({ hit: false, didCache: true, ttl: DEFAULT_TTLS.Event });
    const callsOfFirst = t.calls().length;
    expect(callsOfFirst).toBeGreaterThan(0);
    // The upstream layer's own cache is emptied too: only the response cache can answer now.
    await t.gateway.upstream.clearCache();
    const second = await t.exec(EVENT, undefined, as('acme-web'));
    expect(cacheOf(second)).toEqual({ hit: true });
    expect(second.data).toEqual(first.data);
    expect(t.calls().length).toBe(callsOfFirst);
  });

  it('is never served across licensees: the same document asked by another licensee reads its own data', async () => {
    const acme = await t.exec(EVENT, undefined, as('acme-web'));
    expect(acme.data).toEqual({ event: { eventId: 5001, name: expect.any(String) } });
    t.clearLog();
    const globex = await t.exec(EVENT, undefined, as('globex-web'));
    expect(cacheOf(globex)).toMatchObject({ hit: false });
    // Event 5001 is acme's: globex's own service answers that it has no such event.
    expect(globex.data).toEqual({ event: null });
    expect(
      t.emulator.state.log.filter((entry) => entry.endpoint === 'getevent').map((entry) => entry.licensee),
    ).toEqual(['2002']);
  });

  it('is never served across client scopes: a read client and a read/write client of one licensee keep their own answers', async () => {
    await t.exec(EVENT, undefined, as('acme-web'));
    const ops = await t.exec(EVENT, undefined, as('acme-ops'));
    expect(cacheOf(ops)).toMatchObject({ hit: false, didCache: true });
    expect(cacheOf(await t.exec(EVENT, undefined, as('acme-ops')))).toEqual({ hit: true });
    expect(cacheOf(await t.exec(EVENT, undefined, as('acme-web')))).toEqual({ hit: true });
  });

  it('still needs a valid credential: a request without one, or with a wrong one, is refused with 401', async () => {
    await t.exec(EVENT, undefined, as('acme-web'));
    expect((await t.exec(EVENT, undefined, { 'x-show-cost': '1' })).status).toBe(401);
    expect(
      (await t.exec(EVENT, undefined, { authorization: 'Bearer not-a-key-of-anyone-00000000', 'x-show-cost': '1' }))
        .status,
    ).toBe(401);
  });

  it('is keyed by the variables too', async () => {
    const query = 'query ($id: Int!) { event(eventId: $id) { eventId } }';
    await t.exec(query, { id: 5001 }, as('acme-web'));
    const other = await t.exec(query, { id: 5002 }, as('acme-web'));
    expect(other.data).toEqual({ event: { eventId: 5002 } });
    expect(cacheOf(other)).toMatchObject({ hit: false });
  });
});

describe('what is kept, and how long', () => {
  it('keeps an answer for its shortest-lived type: an event a minute, with its reservations a few seconds', async () => {
    const withReservations = await t.exec(
      '{ event(eventId: 5001) { name reservations(first: 2) { edges { node { reservationNumber } } } } }',
      undefined,
      as('acme-web'),
    );
    expect(cacheOf(withReservations)).toEqual({ hit: false, didCache: true, ttl: DEFAULT_TTLS.Reservation });
  });

  it('keeps no answer with errors', async () => {
    const query = '{ event(eventId: 5001) { name reservations(first: -1) { edges { node { reservationNumber } } } } }';
    const first = await t.exec(query, undefined, as('acme-web'));
    expect(first.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(cacheOf(first)).toEqual({ hit: false, didCache: false });
    expect(cacheOf(await t.exec(query, undefined, as('acme-web')))).toEqual({ hit: false, didCache: false });
  });

  it('leaves large answers alone (a window of more than 200 records): executed again from the kept pages', async () => {
    const query = '{ event(eventId: 5001) { reservations(first: 201) { edges { node { reservationNumber } } } } }';
    const first = await t.exec(query, undefined, as('acme-web'));
    expect(first.errors).toBeUndefined();
    expect(first.data).toMatchObject({ event: { reservations: { edges: expect.any(Array) } } });
    const again = await t.exec(query, undefined, as('acme-web'));
    expect(again.data).toEqual(first.data);
    expect(cacheOf(first)).toBeUndefined();
    expect(cacheOf(again)).toBeUndefined();
    // 200 records are not large: kept as before.
    const small = query.replace('201', '200');
    await t.exec(small, undefined, as('acme-web'));
    expect(cacheOf(await t.exec(small, undefined, as('acme-web')))).toEqual({ hit: true });
  });

  it('keeps no introspection (it costs no upstream call)', async () => {
    const answer = await t.exec('{ __schema { queryType { name } } }', undefined, as('acme-web'));
    expect(cacheOf(answer)).toEqual({ hit: false, didCache: false });
  });

  it('shows extensions.responseCache only to a client that sends X-Show-Cost: 1', async () => {
    expect((await t.exec(EVENT, undefined, as('acme-web', false))).extensions).toBeUndefined();
    const hit = await t.exec(EVENT, undefined, as('acme-web', false));
    expect(hit.extensions).toBeUndefined();
    expect(cacheOf(await t.exec(EVENT, undefined, as('acme-web')))).toEqual({ hit: true });
  });
});

describe('our own mutations', () => {
  const FIELDS = '{ event(eventId: 5001) { customFields { customFieldId name } } }';
  type Fields = { event: { customFields: { customFieldId: number; name: string }[] } };

  it('drop the answers listing what they changed, for every client of the licensee: a new custom field appears at once', async () => {
    const before = await t.exec<Fields, undefined>(FIELDS, undefined, as('acme-ops'));
    await t.exec(FIELDS, undefined, as('acme-web'));
    expect(cacheOf(await t.exec(FIELDS, undefined, as('acme-ops')))).toEqual({ hit: true });

    const created = await t.exec<{ createCustomField: { customField: { customFieldId: number } } }, undefined>(
      'mutation { createCustomField(input: { name: "Dietary needs", eventId: 5001 }) { customField { customFieldId } } }',
      undefined,
      as('acme-ops'),
    );
    expect(created.errors).toBeUndefined();
    const newId = created.data!.createCustomField.customField.customFieldId;

    for (const client of ['acme-ops', 'acme-web'] as const) {
      const after = await t.exec<Fields, undefined>(FIELDS, undefined, as(client));
      expect(cacheOf(after)).toMatchObject({ hit: false });
      expect(after.data!.event.customFields).toHaveLength(before.data!.event.customFields.length + 1);
      expect(after.data!.event.customFields).toContainEqual({ customFieldId: newId, name: 'Dietary needs' });
    }
  });

  it.each([
    [
      'an inline fragment',
      'mutation { ... on Mutation { createCustomField(input: { name: "Seat", eventId: 5001 }) { customField { customFieldId } } } }',
    ],
    [
      'a fragment spread',
      'mutation { ...Create } fragment Create on Mutation { createCustomField(input: { name: "Seat", eventId: 5001 }) { customField { customFieldId } } }',
    ],
  ])('are found wherever they are written: a mutation inside %s drops what it changes', async (_name, mutation) => {
    await t.exec(FIELDS, undefined, as('acme-ops'));
    expect(cacheOf(await t.exec(FIELDS, undefined, as('acme-ops')))).toEqual({ hit: true });
    const created = await t.exec(mutation, undefined, as('acme-ops'));
    expect(created.errors).toBeUndefined();
    const after = await t.exec<Fields, undefined>(FIELDS, undefined, as('acme-ops'));
    expect(cacheOf(after)).toMatchObject({ hit: false });
  });

  it("leave the other licensee's answers alone", async () => {
    const globexFields = '{ event(eventId: 6001) { customFields { customFieldId } } }';
    await t.exec(globexFields, undefined, as('globex-web'));
    await t.exec(
      'mutation { createCustomField(input: { name: "Badge name", eventId: 5001 }) { customField { customFieldId } } }',
      undefined,
      as('acme-ops'),
    );
    expect(cacheOf(await t.exec(globexFields, undefined, as('globex-web')))).toEqual({ hit: true });
  });

  it('are each listed with the types they change', () => {
    const mutations = Object.keys(schema.getMutationType()!.getFields()).sort();
    expect(Object.keys(CHANGED_BY_MUTATION).sort()).toEqual(mutations);
    for (const type of Object.values(CHANGED_BY_MUTATION).flat()) expect(schema.getType(type), type).toBeDefined();
  });
});

describe('trusted documents', () => {
  const DOCUMENT = 'query EventName($eventId: Int!) { event(eventId: $eventId) { eventId name } }';
  const hash = createHash('sha256').update(DOCUMENT, 'utf8').digest('hex');
  let trusted: TestGateway;
  beforeAll(async () => {
    mkdirSync('test/artifacts', { recursive: true });
    const file = join(mkdtempSync(join('test/artifacts', 'trusted-')), 'persisted-documents.json');
    writeFileSync(file, JSON.stringify({ [`sha256:${hash}`]: DOCUMENT }));
    trusted = await startGateway({ rateLimit: false }, { TRUSTED_DOCUMENTS_FILE: file });
  });
  afterAll(() => trusted.close());

  it('a cached answer to a trusted document is not served to the same document sent as text', async () => {
    const post = (body: object) =>
      trusted.gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-show-cost': '1' },
        body: JSON.stringify(body),
      });
    const byId = (await (await post({ documentId: `sha256:${hash}`, variables: { eventId: 5001 } })).json()) as {
      extensions?: unknown;
    };
    expect(cacheOf(byId)).toMatchObject({ didCache: true });
    const asText = await post({ query: DOCUMENT, variables: { eventId: 5001 } });
    expect(asText.status).toBe(400);
    expect(((await asText.json()) as { data?: unknown }).data ?? null).toBeNull();
  });
});

describe('settings', () => {
  it('RESPONSE_CACHE=off keeps nothing and adds no extension', async () => {
    const off = await startGateway({ rateLimit: false }, { RESPONSE_CACHE: 'off' });
    try {
      await off.exec(EVENT, undefined, { 'x-show-cost': '1' });
      expect(cacheOf(await off.exec(EVENT, undefined, { 'x-show-cost': '1' }))).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it('RESPONSE_CACHE_TTLS replaces the lifetime of the types it names', async () => {
    const short = await startGateway({ rateLimit: false }, { RESPONSE_CACHE_TTLS: 'Event=1500, Hotel=0' });
    try {
      expect(cacheOf(await short.exec(EVENT, undefined, { 'x-show-cost': '1' }))).toEqual({
        hit: false,
        didCache: true,
        ttl: 1500,
      });
      // 0: an answer holding a hotel is never kept.
      expect(
        cacheOf(await short.exec('{ event(eventId: 5001) { hotels { hotelId } } }', undefined, { 'x-show-cost': '1' })),
      ).toEqual({ hit: false, didCache: false });
    } finally {
      await short.close();
    }
  });

  it.each([
    ['RESPONSE_CACHE', 'sometimes', /RESPONSE_CACHE: must be on or off/],
    ['RESPONSE_CACHE_TTLS', 'Event=soon', /RESPONSE_CACHE_TTLS: "Event=soon" must be Type=milliseconds/],
    [
      'RESPONSE_CACHE_TTLS',
      'Evnt=1000',
      /RESPONSE_CACHE_TTLS: "Evnt" is not a type whose lifetime can be set \(one of Event, Hotel/,
    ],
    ['RESPONSE_CACHE_TTLS', 'Event=99999999999', /RESPONSE_CACHE_TTLS: Event=99999999999 is longer than a day/],
  ])('%s=%s is refused at start, naming the setting', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('every type whose lifetime can be set is a type of the schema', () => {
    for (const type of Object.keys(DEFAULT_TTLS)) expect(schema.getType(type), type).toBeDefined();
  });
});
