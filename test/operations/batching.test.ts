import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { estimateUpstreamCalls } from '../../src/operations/cost.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * Batched requests (a JSON array of operations, as Apollo Router's subgraph batching sends them):
 * each operation answered as if alone, at most MAX_BATCH_OPERATIONS of them, and their estimated
 * upstream calls together held to QUERY_MAX_UPSTREAM_CALLS, refused before anything runs.
 */

const ACME = { authorization: `Bearer ${CLIENT_KEYS['acme-web']}` };
/** Costs a few calls: the event, its hotels, a page of its reservations. */
const EVENT_PAGE = (eventId: number) =>
  `{ event(eventId: ${eventId}) { name hotels { name } reservations(first: 3) { edges { node { reservationNumber } } } } }`;
const costOf = (query: string) => estimateUpstreamCalls(parse(query));

type Answer = { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };

async function batch(t: TestGateway, operations: unknown[], headers: Record<string, string> = ACME) {
  const res = await t.gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(operations),
  });
  return {
    status: res.status,
    cacheControl: res.headers.get('cache-control'),
    body: (await res.json()) as Answer | Answer[],
  };
}

describe('a batch', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, licenseesEnv());
  });
  afterAll(() => t.close());
  beforeEach(() => readyToCount(t));

  it('of 3 operations is answered as 3, each as if sent alone', async () => {
    const { status, body, cacheControl } = await batch(t, [
      { query: '{ event(eventId: 5001) { eventId } }' },
      { query: 'query Named($id: Int!) { event(eventId: $id) { eventId } }', variables: { id: 5002 } },
      { query: '{ event(eventId: 5003) { nope } }' },
    ]);
    expect(status).toBe(200);
    expect(Array.isArray(body)).toBe(true);
    const answers = body as Answer[];
    expect(answers).toHaveLength(3);
    expect(answers[0]).toEqual({ data: { event: { eventId: 5001 } } });
    expect(answers[1]).toEqual({ data: { event: { eventId: 5002 } } });
    // One operation's mistake is its own: the others are answered.
    expect(answers[2]!.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    // One answer with errors: the batch may not be kept.
    expect(cacheControl).toBe('no-store, max-age=0');
  });

  it('checks each operation’s credential scopes as if alone: a read client’s mutation is refused, its query answered', async () => {
    const { body } = await batch(t, [
      { query: '{ event(eventId: 5001) { eventId } }' },
      {
        query:
          'mutation { createCustomField(input: { name: "Batch", eventId: 5001 }) { customField { customFieldId } } }',
      },
    ]);
    const answers = body as Answer[];
    expect(answers[0]).toEqual({ data: { event: { eventId: 5001 } } });
    expect(answers[1]!.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(t.calls().filter((c) => c.endpoint.toLowerCase().includes('customfield'))).toEqual([]);
  });

  it('that is empty, or holds anything but operations, is refused whole with 400 BAD_REQUEST, nothing run', async () => {
    for (const operations of [
      [],
      [null],
      [{ query: '{ event(eventId: 5001) { eventId } }' }, 7],
      [[{ query: '{ __typename }' }]],
    ]) {
      const { status, body } = await batch(t, operations);
      expect([status, (body as Answer).errors?.[0]?.extensions?.code], JSON.stringify(operations)).toEqual([
        400,
        'BAD_REQUEST',
      ]);
    }
    expect(t.calls()).toEqual([]);
  });

  it('of more than MAX_BATCH_OPERATIONS (10) is refused with 400 naming the setting, and nothing is sent upstream', async () => {
    const { status, body } = await batch(
      t,
      Array.from({ length: 11 }, (_, i) => ({ query: `{ event(eventId: ${5001 + (i % 3)}) { eventId } }` })),
    );
    expect(status).toBe(400);
    const error = (body as Answer).errors?.[0];
    expect(error?.message).toContain('MAX_BATCH_OPERATIONS');
    expect(error?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'MAX_BATCH_OPERATIONS',
      maxOperations: 10,
    });
    expect(t.calls()).toEqual([]);
  });

  it('of 10 is answered', async () => {
    const { status, body, cacheControl } = await batch(
      t,
      Array.from({ length: 10 }, () => ({ query: '{ event(eventId: 5001) { eventId } }' })),
    );
    expect(status).toBe(200);
    expect((body as Answer[]).every((one) => one.errors === undefined)).toBe(true);
    // Kept as long as its shortest-lived operation: here all are events.
    expect(cacheControl).toBe('private, max-age=60');
  });
});

describe('a batch’s cost', () => {
  const each = costOf(EVENT_PAGE(5001));
  let t: TestGateway;
  beforeAll(async () => {
    // Room for two of the event pages, not three.
    t = await startGateway(
      { rateLimit: false },
      { ...licenseesEnv(), QUERY_MAX_UPSTREAM_CALLS: String(each * 2), MAX_BATCH_OPERATIONS: '5' },
    );
  });
  afterAll(() => t.close());
  beforeEach(() => readyToCount(t));

  it('within the limit together is answered', async () => {
    expect(each).toBeGreaterThan(1);
    const { status, body } = await batch(t, [{ query: EVENT_PAGE(5001) }, { query: EVENT_PAGE(5002) }]);
    expect(status).toBe(200);
    expect((body as Answer[]).map((one) => one.errors)).toEqual([undefined, undefined]);
  });

  it('over the limit together, each within it, is refused whole with 400 QUERY_TOO_COSTLY before anything runs', async () => {
    const { status, body } = await batch(t, [
      { query: EVENT_PAGE(5001) },
      { query: EVENT_PAGE(5002) },
      { query: EVENT_PAGE(5003) },
    ]);
    expect(status).toBe(400);
    const error = (body as Answer).errors?.[0];
    expect(error?.extensions).toMatchObject({
      code: 'QUERY_TOO_COSTLY',
      limit: 'QUERY_MAX_UPSTREAM_CALLS',
      maxCalls: each * 2,
    });
    expect(error?.extensions?.estimatedCalls as number).toBeGreaterThan(each * 2);
    expect(t.calls()).toEqual([]);
  });

  it('counts operations sent by persisted-query hash too', async () => {
    const query = EVENT_PAGE(5001);
    const { createHash } = await import('node:crypto');
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    // The text once, with its hash: from then on the hash is enough.
    expect((await batch(t, [{ query, extensions }])).status).toBe(200);
    await readyToCount(t);
    const { status, body } = await batch(t, [{ extensions }, { extensions }, { extensions }]);
    expect(status).toBe(400);
    expect((body as Answer).errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
    expect(t.calls()).toEqual([]);
  });
});
