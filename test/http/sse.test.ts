import { GraphQLError } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { SseStreams } from '../../src/http/sse.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, subscribeSse, until } from '../helpers/subscriptions.ts';

/*
 * Issue 28: a subscription's SSE stream as Yoga's own processor writes it, but kept alive by one
 * timer for every stream (Yoga's gave each its own, every 12 s), every SUBSCRIPTION_KEEPALIVE_MS;
 * graphql-ws sockets are pinged as often.
 */

/** Everything a stream's body says until it ends. */
async function text(body: NodeJS.ReadableStream): Promise<string> {
  let all = '';
  for await (const chunk of body) all += chunk.toString();
  return all;
}

describe('SseStreams', () => {
  afterEach(() => void vi.useRealTimers());

  it('writes a comment first, each payload as `next` without what is meant for the response, then `complete`', async () => {
    const streams = new SseStreams(20_000);
    async function* payloads() {
      yield { data: { n: 1 } };
      yield {
        data: null,
        errors: [new GraphQLError('refused', { extensions: { code: 'FORBIDDEN', http: { status: 403 } } })],
        extensions: { http: { status: 403 }, stale: [] },
      };
      yield { data: { n: 3 }, stringify: () => '{"data":{"n":"own serializer"}}' };
    }
    const body = streams.stream(payloads());
    expect(streams.open()).toBe(1);
    expect(await text(body)).toBe(
      ':\n\n' +
        'event: next\ndata: {"data":{"n":1}}\n\n' +
        'event: next\ndata: {"data":null,"errors":[{"message":"refused","extensions":{"code":"FORBIDDEN"}}],"extensions":{"stale":[]}}\n\n' +
        'event: next\ndata: {"data":{"n":"own serializer"}}\n\n' +
        'event: complete\ndata:\n\n',
    );
    expect(streams.open()).toBe(0);
  });

  it('keeps every open stream alive from one timer, a tenth of them a tick, and stops it with the last stream', async () => {
    vi.useFakeTimers();
    const streams = new SseStreams(1_000);
    const timers = () => vi.getTimerCount();
    const returned: number[] = [];
    const waiting = (id: number): AsyncIterable<{ data: null }> => ({
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise(() => {}),
        return: async () => {
          returned.push(id);
          return { done: true, value: undefined };
        },
      }),
    });
    const a = streams.stream(waiting(1));
    const b = streams.stream(waiting(2));
    const c = streams.stream(waiting(3));
    expect(timers()).toBe(1);
    const seen = new Map<unknown, string>();
    for (const s of [a, b, c]) s.on('data', (chunk: Buffer) => seen.set(s, (seen.get(s) ?? '') + chunk.toString()));
    // A tick every tenth of the interval, each to one tenth of the streams: spread, not all at once.
    await vi.advanceTimersByTimeAsync(100);
    expect([a, b, c].map((s) => seen.get(s))).toEqual([':\n\n:\n\n', ':\n\n', ':\n\n']);
    await vi.advanceTimersByTimeAsync(2_900);
    // The first comment, then one per tick; no source was asked for more than its one pending payload.
    for (const s of [a, b, c]) expect(seen.get(s)).toBe(':\n\n'.repeat(4));
    a.destroy();
    b.destroy();
    expect(timers()).toBe(1);
    c.destroy();
    await vi.advanceTimersByTimeAsync(0);
    expect(streams.open()).toBe(0);
    expect(timers()).toBe(0);
    // The client left: each subscription was told to end.
    expect(returned.sort()).toEqual([1, 2, 3]);
  });

  it('pushes no comment into a stream whose reader stopped reading', async () => {
    vi.useFakeTimers();
    const streams = new SseStreams(1_000);
    const stuck = streams.stream({ [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) });
    // Nobody reads: the buffer holds the first comment and comments up to the high-water mark, no more.
    await vi.advanceTimersByTimeAsync(100_000);
    expect(stuck.readableLength).toBeLessThanOrEqual(stuck.readableHighWaterMark + 3);
    stuck.destroy();
  });
});

describe('subscriptions on a listening gateway', () => {
  const EVENT = 5003;
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    t = await startGateway(
      { rateLimit: false },
      { CHANGES_POLL_INTERVAL_MS: '100', SUBSCRIPTION_KEEPALIVE_MS: '1000' },
    );
    server = await listen(t);
    await t.exec('{ event(eventId: 5003) { eventId } }');
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

  it('three SSE streams of one feed take no more timers than one, get keep-alive comments and their changes', async () => {
    const first = await subscribeSse(fetch, server.url, { eventId: EVENT });
    await until(() => t.gateway.changeFeeds.active().some((feed) => feed.eventId === EVENT && feed.polls > 0));
    // Counted while the feed's next poll waits (a poll in flight holds no timer: a loaded machine).
    const pollWaiting = () => until(() => t.gateway.changeFeeds.footprint().timers === 1, 5_000);
    await pollWaiting();
    const withOne = timers();
    // A raw reader of one more stream sees the comments between events.
    const leave = new AbortController();
    const raw = await fetch(server.url, {
      signal: leave.signal,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        query: 'subscription ($e: Int!) { reservationChanged(eventId: $e) { reservation { reservationNumber } } }',
        variables: { e: EVENT },
      }),
    });
    expect(raw.headers.get('content-type')).toBe('text/event-stream');
    const third = await subscribeSse(fetch, server.url, { eventId: EVENT });
    // Yoga's own processor started a timer per stream (this fails with it); the one tick here is unref'd.
    await pollWaiting();
    expect(timers()).toBe(withOne);
    const reader = raw.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    while ((seen.match(/^:$/gm) ?? []).length < 2) seen += (await reader.read()).value;
    expect(seen.startsWith(':\n\n')).toBe(true);
    const booked = await book(t.emulator, { eventId: EVENT });
    const [a] = await first.take(1);
    const [c] = await third.take(1);
    for (const received of [a, c])
      expect(received?.data?.reservationChanged).toMatchObject({
        reservation: { reservationNumber: booked.reservationNumber },
      });
    while (!seen.includes('event: next')) seen += (await reader.read()).value;
    expect(seen).toMatch(
      new RegExp(
        `event: next\\ndata: \\{"data":\\{"reservationChanged":\\{"reservation":\\{"reservationNumber":${booked.reservationNumber}\\}\\}\\}\\}\\n\\n`,
      ),
    );
    leave.abort();
    first.close();
    third.close();
    await until(() => t.gateway.changeFeeds.footprint().feeds === 0);
  });

  it('pings a graphql-ws socket every SUBSCRIPTION_KEEPALIVE_MS', async () => {
    const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await new Promise((resolve) => socket.once('ping', resolve));
    socket.close();
  });
});
