import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonPieces, LONG_LIST } from '../../src/http/streamed-answers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { listen } from '../helpers/subscriptions.ts';

/*
 * A large answer (a long list: a page of reservations) is written as it is serialised, in pieces
 * (src/http/streamed-answers.ts): the bytes are JSON.stringify's, the media type Yoga's, and no
 * piece holds the whole answer.
 */
async function pieces(value: unknown): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of new JsonPieces(value)) out.push(String(chunk));
  return out;
}

describe('JsonPieces', () => {
  const long = Array.from({ length: 3 * LONG_LIST }, (_, i) => ({
    node: {
      reservationNumber: i,
      name: `Zoë "${i}" \u2028`,
      rooms: [{ guests: [{ firstName: 'Ada' }] }],
      gone: undefined,
    },
  }));
  const values: [string, unknown][] = [
    ['an answer with a long list', { data: { event: { reservations: { edges: long, totalCount: 600 } } } }],
    [
      'members left out as JSON.stringify leaves them',
      { data: { a: undefined, f: () => 1, b: null, c: [undefined, 1] } },
    ],
    ['a long list inside a short one', { data: { events: [{ reservations: long }] } }],
    ['a long list of lists and nulls', { data: Array.from({ length: LONG_LIST }, (_, i) => (i % 2 ? null : [i])) }],
    ['values with toJSON', { data: { at: new Date(0), list: long.slice(0, 5) }, extensions: { cost: 3 } }],
    ['a scalar', 'text'],
  ];
  for (const [name, value] of values)
    it(`writes exactly JSON.stringify's text: ${name}`, async () => {
      expect((await pieces(value)).join('')).toBe(JSON.stringify(value));
    });

  it('writes a long list in pieces, none near the whole', async () => {
    const value = {
      data: { edges: Array.from({ length: 20 * LONG_LIST }, (_, i) => ({ node: { id: i, text: 'x'.repeat(80) } })) },
    };
    const written = await pieces(value);
    const whole = JSON.stringify(value).length;
    expect(written.length).toBeGreaterThan(5);
    expect(Math.max(...written.map((piece) => piece.length))).toBeLessThan(whole / 5);
  });
});

describe('large answers over HTTP', () => {
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false });
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  const page = (first: number) =>
    `{ event(eventId: 5001) { reservations(first: ${first}) { edges { node { reservationNumber status contact { lastName } } } } } }`;
  const ask = (query: string, accept?: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
      body: JSON.stringify({ query }),
    });

  it('a page of 1000 reservations arrives chunked, as JSON, holding every record', async () => {
    const res = await ask(page(1000));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    // The headers every answer carries are set on it too.
    expect(res.headers.get('cache-control')).toMatch(/max-age/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const body = (await res.json()) as { data: { event: { reservations: { edges: unknown[] } } } };
    expect(body.data.event.reservations.edges).toHaveLength(1000);
  });

  it('a small answer keeps its length, and the media type is the one Yoga picks from Accept', async () => {
    const small = await ask(page(10));
    expect(small.headers.get('content-length')).not.toBeNull();
    expect(((await small.json()) as { data: unknown }).data).toBeDefined();
    for (const [accept, type] of [
      ['application/graphql-response+json', 'application/graphql-response+json'],
      ['application/json, application/graphql-response+json', 'application/json'],
      ['application/graphql-response+json, application/json;q=0.9', 'application/graphql-response+json'],
      ['*/*', 'application/json'],
    ] as const) {
      const [streamed, whole] = await Promise.all([ask(page(1000), accept), ask(page(10), accept)]);
      expect([streamed.headers.get('content-type'), accept]).toEqual([whole.headers.get('content-type'), accept]);
      expect(streamed.headers.get('content-type')).toBe(`${type}; charset=utf-8`);
      await Promise.all([streamed.arrayBuffer(), whole.arrayBuffer()]);
    }
  });
});
