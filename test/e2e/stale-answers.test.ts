import type { Client } from 'graphql-ws';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedError } from '../../src/upstream/errors.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { listen, wsClient } from '../helpers/subscriptions.ts';

/*
 * When the licensee's budget is spent, a read is answered from the last copy held of it (docs/clients.md,
 * "When the budget is spent"), and the answer says which fields are how old:
 * `extensions.stale: [{ path, ageSeconds }]`. Over a real port, on HTTP, SSE and graphql-ws.
 * The clock is Date's, moved by the test: the budget, the page cache and the copies' ages read it.
 */

const LIST = `query List($filter: ReservationFilter) {
  event(eventId: 5001) { reservations(first: 2, filter: $filter) { totalCount edges { node { reservationNumber } } } }
}`;
type Answer = {
  data?: { event: { reservations: { totalCount: number; edges: { node: { reservationNumber: number } }[] } | null } };
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
};

const ACCOUNT = { systemIdentifier: '1001', key: 'demo-key-1001', timeZone: 'UTC' };

let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
let ws: Client | undefined;
let t0: number;

/** A gateway whose budget of 12 a minute (`windowMs`) is soon spent, on a port, on Date's clock the test moves. */
async function start(windowMs = 60_000): Promise<void> {
  t0 = Date.now();
  vi.useFakeTimers({ toFake: ['Date'], now: t0 });
  t = await startGateway(
    { rateLimit: false },
    {
      UPSTREAM_RATE_LIMIT: '12',
      UPSTREAM_RATE_MARGIN: '0',
      UPSTREAM_RATE_WINDOW_MS: String(windowMs),
      UPSTREAM_DEADLINE_MS: '300',
      UPSTREAM_STALE_MAX_MS: '120000',
      // Longer than any test here: an answer the response cache kept would still be served.
      RESPONSE_CACHE_TTLS: 'Reservation=600000,Event=600000,Hotel=600000',
    },
  );
  server = await listen(t);
}
afterEach(async () => {
  await ws?.dispose();
  ws = undefined;
  await server.close();
  await t.close();
  vi.useRealTimers();
});

/** Takes every slot left in the licensee's budget (reads of events that do not exist, each a request). */
async function spendBudget(): Promise<void> {
  for (let eventId = 9001; ; eventId++) {
    const refused = await t.gateway.upstream
      .call(ACCOUNT, 'getevent', { eventId })
      .then(() => false)
      .catch((e: unknown) => e instanceof RateLimitedError);
    if (refused) return;
  }
}

/** The Cache-Control header of the last answer over HTTP. */
let cacheControl: string | null = null;

async function overHttp(variables: Record<string, unknown> = {}): Promise<Answer> {
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: LIST, variables }),
  });
  cacheControl = res.headers.get('cache-control');
  return (await res.json()) as Answer;
}

function overWs(variables: Record<string, unknown> = {}): Promise<Answer> {
  ws ??= wsClient(server.wsUrl);
  const client = ws;
  return new Promise((resolve, reject) => {
    let last: Answer = {};
    client.subscribe(
      { query: LIST, variables },
      {
        next: (result) => void (last = result as Answer),
        error: reject,
        complete: () => resolve(last),
      },
    );
  });
}

const at = (ms: number) => vi.setSystemTime(t0 + ms);
const codes = (answer: Answer) => answer.errors?.map((e) => e.extensions?.code);

describe('stale rather than refused', () => {
  beforeEach(() => start());

  it('over HTTP: a refused read is answered from the held copy, marked with its age; the response cache keeps no such answer', async () => {
    const fresh = await overHttp();
    expect(fresh.errors).toBeUndefined();
    expect(fresh.extensions?.stale).toBeUndefined();
    expect(cacheControl).toBe('private, max-age=600');
    await spendBudget();
    at(42_400); // past the page lifetime; the budget's window still holds every slot
    t.gateway.clearResponseCache(); // the fresh answer's lifetime, over
    const stale = await overHttp();
    expect(stale.errors).toBeUndefined();
    expect(stale.data).toEqual(fresh.data);
    expect(stale.extensions?.stale).toEqual([{ path: ['event', 'reservations'], ageSeconds: 42 }]);
    // Nor may a router or CDN keep it.
    expect(cacheControl).toBe('no-store, max-age=0');

    at(61_000); // the window has passed: the budget serves again
    t.clearLog();
    const again = await overHttp();
    expect(again.errors).toBeUndefined();
    expect(again.data).toEqual(fresh.data);
    expect(again.extensions?.stale).toBeUndefined();
    // Read upstream afresh: the stale answer was not kept by the response cache.
    expect(t.count('getreservation')).toBeGreaterThan(0);
  });

  it('over graphql-ws and SSE alike: the answer carries extensions.stale', async () => {
    const fresh = await overWs();
    await spendBudget();
    at(5_000);
    t.gateway.clearResponseCache();
    const stale = await overWs();
    expect(stale.data).toEqual(fresh.data);
    expect(stale.extensions?.stale).toEqual([{ path: ['event', 'reservations'], ageSeconds: 5 }]);

    at(7_000);
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: LIST }),
    });
    const text = await res.text();
    const payload = JSON.parse(/data: (.*)/.exec(text)![1]!) as Answer;
    expect(payload.extensions?.stale).toEqual([{ path: ['event', 'reservations'], ageSeconds: 7 }]);
  });

  it('an incremental answer (@stream) marks the field in its payload', async () => {
    const streamed = () =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
        body: JSON.stringify({
          query: `{ event(eventId: 5001) { reservations(first: 2) { edges @stream(initialCount: 1) { node { reservationNumber } } } } }`,
        }),
      });
    // Read once fresh: a streamed window is no proof of its event, so the event's read is kept too.
    await (await streamed()).text();
    await spendBudget();
    at(6_000); // past the page lifetime, within the event's minute
    const res = await streamed();
    const text = await res.text();
    const payloads = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Answer & { hasNext?: boolean });
    expect(payloads.length).toBeGreaterThan(1);
    const marks = payloads.flatMap((payload) => (payload.extensions?.stale as unknown[] | undefined) ?? []);
    expect(marks.flat()).toEqual([{ path: ['event', 'reservations'], ageSeconds: 6 }]);
  });

  it('a copy our own write dropped is never served: RATE_LIMITED (over graphql-ws)', async () => {
    const fresh = await overWs();
    const first = fresh.data!.event.reservations!.edges[0]!.node.reservationNumber;
    const set = await t.exec(
      `mutation ($n: Int!) { setCustomFieldValue(input: { customFieldId: 1, value: "late arrival", reservationNumber: $n }) { customFieldId } }`,
      { n: first },
    );
    expect(set.errors).toBeUndefined();
    await spendBudget();
    at(5_000);
    t.gateway.clearResponseCache();
    const refused = await overWs();
    expect(codes(refused)).toContain('RATE_LIMITED');
    expect(refused.extensions?.stale).toBeUndefined();
  });

  it('a copy a change feed dropped (UpstreamClient.drop) is never served: RATE_LIMITED', async () => {
    await overHttp();
    await t.gateway.upstream.drop(ACCOUNT, 'getreservation|5001');
    await t.gateway.upstream.drop(ACCOUNT, 'getreservationpagecount|5001');
    await spendBudget();
    at(5_000);
    t.gateway.clearResponseCache();
    const refused = await overHttp();
    // totalCount and edges, each refused.
    expect(new Set(codes(refused))).toEqual(new Set(['RATE_LIMITED']));
    // The event was proved by its first page (no getevent), which is refused too: the error may sit at the event.
    expect(refused.errors?.[0]?.path?.[0]).toEqual('event');
    expect(refused.extensions?.stale).toBeUndefined();
  });

  it('with no copy of the read (another filter), RATE_LIMITED with retryAfterSeconds, as before', async () => {
    await overHttp();
    await spendBudget();
    at(5_000);
    const refused = await overHttp({ filter: { reservationStatus: 'CANCELLED' } });
    expect(new Set(codes(refused))).toEqual(new Set(['RATE_LIMITED']));
    expect(refused.errors?.[0]?.extensions?.retryAfterSeconds).toEqual(expect.any(Number));
    expect(refused.extensions?.stale).toBeUndefined();
  });

  it('a copy older than UPSTREAM_STALE_MAX_MS is not served: RATE_LIMITED', async () => {
    await overHttp();
    await spendBudget();
    // The budget's window is a minute: a longer one, so the slots are still spent two minutes on.
    at(120_001);
    await spendBudget();
    t.gateway.clearResponseCache();
    const refused = await overHttp();
    expect(codes(refused)).toEqual(['RATE_LIMITED']);
    expect(refused.extensions?.stale).toBeUndefined();
  });
});

describe('each field fed by a copy is named', () => {
  // A budget window of ten minutes: the event and its hotels (kept a minute) outlive their cache too.
  beforeEach(() => start(600_000));

  it('the event, its hotels, and the reservations’ hotels looked up in them, marked once at their list', async () => {
    const query = `{ event(eventId: 5001) { name hotels { name } reservations(first: 2) { edges { node { hotel { name city } } } } } }`;
    const post = async () =>
      (await (
        await fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query }),
        })
      ).json()) as Answer;
    const fresh = await post();
    expect(fresh.errors).toBeUndefined();
    await spendBudget();
    at(61_900); // past the minute events and hotels are cached
    t.gateway.clearResponseCache();
    const stale = await post();
    expect(stale.errors).toBeUndefined();
    expect(stale.data).toEqual(fresh.data);
    const marks = stale.extensions?.stale as { path: (string | number)[]; ageSeconds: number }[];
    expect(marks.map((m) => m.path.join('.')).sort()).toEqual([
      'event',
      'event.hotels',
      'event.reservations',
      // Each reservation's hotel lookup is marked once, at the list that holds them.
      'event.reservations.edges',
    ]);
    expect(new Set(marks.map((m) => m.ageSeconds))).toEqual(new Set([61]));
  });
});
