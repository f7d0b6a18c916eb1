import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { type Started, sseData, startCommand } from '../lib.ts';
import { treeCpuMs } from './cpu.ts';
import { type Emulator, served } from './emulator.ts';
import { treeRssMiB } from './rss.ts';
import { percentile } from './s6.ts';

/**
 * S8 (issue 28): N live `reservationChanged` subscriptions, half SSE streams (a connection each),
 * half graphql-ws subscriptions ten to a socket, spread over the three demo events (5001: 25,600
 * reservations; 5002; 5003), the gateway polling every 2 s. Bookings are made at the emulator
 * (`/_emulator/bookings`), one event after another. Measured from outside: subscriptions accepted,
 * every booking reaching every subscriber of its event, the latency from the booking to each
 * subscriber and the spread from the first subscriber to the last (the poll's delivery: the
 * booking waits up to an interval for the poll), the gateway's RSS (ready, all subscribed, after
 * they left), its CPU while idle (no booking, S8_IDLE_S), and the upstream calls a minute while
 * idle (the emulator's log; one poll per event every 2 s is 90 a minute).
 */

export const S8_EVENTS = [5001, 5002, 5003] as const;
export const S8_POLL_MS = 2_000;
const SUBSCRIPTIONS_PER_SOCKET = 10;
const QUERY =
  'subscription ($eventId: Int!) { reservationChanged(eventId: $eventId) { kind modifiedAt reservation { reservationNumber } } }';

export interface SubscriberFigures {
  subscribers: number;
  accepted: number;
  /** Subscribers that received every booking of their event. */
  reachedAll: number;
  bookings: number;
  /** ms from the booking to each subscriber of its event. */
  p50Ms: number;
  p99Ms: number;
  /** p99 over bookings of the ms from its first subscriber to its last (the delivery after the poll). */
  spreadP99Ms: number;
  rssReadyMiB: number;
  /** One subscriber per event, live: the feeds' cost. */
  rssFeedsMiB: number;
  rssSubscribedMiB: number;
  rssLeftMiB: number;
  /** The gateway's CPU while idle with every subscriber live, % of one core. */
  idleCpuPercent: number;
  /** Upstream calls a minute while idle, authenticate aside. */
  idleCallsPerMin: number;
  /** RSS beyond the feeds' per further subscriber, KiB. */
  kibPerSubscriber: number;
}

export interface Subscriber {
  eventId: number;
  /** When each reservation number first reached it (performance.now()). */
  arrivals: Map<number, number>;
  failed: boolean;
  close(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function reservationNumberOf(result: unknown): number | undefined {
  return (result as { data?: { reservationChanged?: { reservation?: { reservationNumber?: number } } } })?.data
    ?.reservationChanged?.reservation?.reservationNumber;
}

export async function subscribeSse(url: string, eventId: number): Promise<Subscriber> {
  const abort = new AbortController();
  const subscriber: Subscriber = { eventId, arrivals: new Map(), failed: false, close: () => abort.abort() };
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: QUERY, variables: { eventId } }),
    signal: abort.signal,
  }).catch(() => null);
  if (response?.status !== 200) {
    subscriber.failed = true;
    return subscriber;
  }
  void (async () => {
    try {
      for await (const data of sseData(response.body!)) {
        const parsed = JSON.parse(data) as { errors?: unknown };
        if (parsed.errors) subscriber.failed = true;
        const number = reservationNumberOf(parsed);
        if (number !== undefined && !subscriber.arrivals.has(number))
          subscriber.arrivals.set(number, performance.now());
      }
    } catch {
      // closed
    }
  })();
  return subscriber;
}

/** `count` graphql-ws subscriptions on one socket. */
export function subscribeWsSocket(url: string, eventIds: number[]): { subscribers: Subscriber[]; close(): void } {
  const client = createClient({ url, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
  const subscribers = eventIds.map((eventId) => {
    const subscriber: Subscriber = { eventId, arrivals: new Map(), failed: false, close: () => {} };
    subscriber.close = client.subscribe(
      { query: QUERY, variables: { eventId } },
      {
        next: (result) => {
          if (result.errors) subscriber.failed = true;
          const number = reservationNumberOf(result);
          if (number !== undefined && !subscriber.arrivals.has(number))
            subscriber.arrivals.set(number, performance.now());
        },
        error: () => void (subscriber.failed = true),
        complete: () => {},
      },
    );
    return subscriber;
  });
  return { subscribers, close: () => void client.dispose() };
}

async function book(emulatorUrl: string, eventId: number): Promise<number> {
  const res = await fetch(`${emulatorUrl}/_emulator/bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ eventId }),
  });
  if (!res.ok) throw new Error(`booking refused: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { reservationNumber: number }).reservationNumber;
}

/** Books on `eventId` and waits (up to `waitMs`) until each live subscriber of the event has it. */
export async function bookAndWait(
  emulatorUrl: string,
  eventId: number,
  subscribers: readonly Subscriber[],
  waitMs: number,
): Promise<{ number: number; at: number; of: Subscriber[] }> {
  const of = subscribers.filter((s) => s.eventId === eventId && !s.failed);
  const at = performance.now();
  const number = await book(emulatorUrl, eventId);
  const deadline = Date.now() + waitMs;
  while (!of.every((s) => s.arrivals.has(number)) && Date.now() < deadline) await sleep(20);
  return { number, at, of };
}

/**
 * Runs S8 against a gateway already started at `url` (its process `pid`) over `emulator`.
 * `subscribers` are split half SSE, half graphql-ws (ten a socket), round robin over the events.
 */
/**
 * Our gateway as a process of its own (`node <nodeFlags> scripts/start.mjs`) over `emulatorUrl`,
 * polling every S8_POLL_MS, with room for `subscribers` live subscriptions: what the subscriber
 * benches (subscriber-heap, subscriber-profile) measure.
 */
export function startSubscriberGateway(
  nodeFlags: string[],
  emulatorUrl: string,
  subscribers: number,
): Promise<Started> {
  return startCommand([...nodeFlags, 'scripts/start.mjs'], {
    env: {
      PORT: '0',
      OPS_PORT: '0',
      LOG_LEVEL: 'warn',
      UPSTREAM_BASE_URL: emulatorUrl,
      UPSTREAM_KEY: 'demo-key-1001',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
      UPSTREAM_RATE_LIMIT: '100000',
      CHANGES_POLL_INTERVAL_MS: String(S8_POLL_MS),
      SUBSCRIPTIONS_PER_CLIENT: String(Math.min(10_000, subscribers + 10)),
      MAX_CONNECTIONS: String(Math.max(1024, subscribers + 100)),
    },
    pattern: /ready at (http:\/\/127\.0\.0\.1:\d+)\/graphql/,
  });
}

/**
 * Subscribers `from` to `sse` as SSE streams (in batches of 100: their requests answer at once),
 * then `ws` graphql-ws subscriptions ten a socket, subscriber i watching S8_EVENTS[i % 3]; each is
 * added to `into` as it is made, so that whoever stops the run can close them all.
 */
export async function subscribeMix(
  url: string,
  counts: { sse: number; ws: number; from?: number },
  into: { subscribers: Subscriber[]; sockets: { close(): void }[] },
): Promise<void> {
  const { sse, ws, from = 0 } = counts;
  const eventOf = (i: number) => S8_EVENTS[i % S8_EVENTS.length]!;
  for (let i = from; i < sse; i += 100)
    into.subscribers.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(100, sse - i) }, (_, j) => subscribeSse(url, eventOf(i + j))),
      )),
    );
  for (let i = 0; i < ws; i += SUBSCRIPTIONS_PER_SOCKET) {
    const socket = subscribeWsSocket(
      url.replace(/^http/, 'ws'),
      Array.from({ length: Math.min(SUBSCRIPTIONS_PER_SOCKET, ws - i) }, (_, j) => eventOf(sse + i + j)),
    );
    into.sockets.push(socket);
    into.subscribers.push(...socket.subscribers);
    if (into.sockets.length % 20 === 0) await sleep(10);
  }
}

export async function simulateSubscribers(
  url: string,
  pid: number,
  emulator: Emulator,
  options: { subscribers: number; idleS: number; bookingsPerEvent: number },
): Promise<SubscriberFigures> {
  const rssReadyMiB = treeRssMiB(pid);
  const sse = Math.ceil(options.subscribers / 2);
  const ws = options.subscribers - sse;
  const eventOf = (i: number) => S8_EVENTS[i % S8_EVENTS.length]!;
  const subscribers: Subscriber[] = [];
  const sockets: { close(): void }[] = [];
  // First one SSE subscriber per event, live: the feeds' own cost, before the rest come.
  const first = Math.min(S8_EVENTS.length, sse);
  subscribers.push(...(await Promise.all(Array.from({ length: first }, (_, i) => subscribeSse(url, eventOf(i))))));
  for (const eventId of S8_EVENTS) await bookAndWait(emulator.url, eventId, subscribers, 120_000);
  await sleep(S8_POLL_MS);
  const rssFeedsMiB = treeRssMiB(pid);
  // The others: the rest of the SSE streams, then the graphql-ws sockets.
  await subscribeMix(url, { sse, ws, from: first }, { subscribers, sockets });
  // Live once a booking of each event has reached every subscriber of it (the baseline reads done).
  for (const eventId of S8_EVENTS) await bookAndWait(emulator.url, eventId, subscribers, 120_000);
  const accepted = subscribers.filter((s) => !s.failed).length;
  await sleep(S8_POLL_MS);
  const rssSubscribedMiB = treeRssMiB(pid);

  // Idle: nothing booked, every subscriber live.
  const idleFrom = Date.now();
  const cpuFrom = treeCpuMs(pid);
  await sleep(options.idleS * 1000);
  const idleCpuPercent = ((treeCpuMs(pid) - cpuFrom) / (Date.now() - idleFrom)) * 100;
  const idleLog = (await emulator.requestsSince(idleFrom)).filter((r) => r.endpoint !== 'authenticate');
  const idleCallsPerMin = (served(idleLog) / (Date.now() - idleFrom)) * 60_000;

  // Bookings, one event after another: each reaches every subscriber of its event.
  const latencies: number[] = [];
  const spreads: number[] = [];
  const bookings: { number: number; of: Subscriber[] }[] = [];
  for (let round = 0; round < options.bookingsPerEvent; round++) {
    for (const eventId of S8_EVENTS) {
      const { number, at, of } = await bookAndWait(emulator.url, eventId, subscribers, 30_000);
      bookings.push({ number, of });
      const arrivals = of.map((s) => s.arrivals.get(number)).filter((t): t is number => t !== undefined);
      latencies.push(...arrivals.map((t) => t - at));
      if (arrivals.length > 0) spreads.push(Math.max(...arrivals) - Math.min(...arrivals));
    }
  }
  const reachedAll = subscribers.filter(
    (s) => !s.failed && bookings.every(({ number, of }) => !of.includes(s) || s.arrivals.has(number)),
  ).length;

  for (const subscriber of subscribers) subscriber.close();
  for (const socket of sockets) socket.close();
  await sleep(5_000);
  const rssLeftMiB = treeRssMiB(pid);
  return {
    subscribers: options.subscribers,
    accepted,
    reachedAll,
    bookings: bookings.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    spreadP99Ms: percentile(spreads, 99),
    rssReadyMiB,
    rssFeedsMiB,
    rssSubscribedMiB,
    rssLeftMiB,
    idleCpuPercent,
    idleCallsPerMin,
    kibPerSubscriber: ((rssSubscribedMiB - rssFeedsMiB) * 1024) / Math.max(1, options.subscribers - first),
  };
}

/** The S8 table: one row per figure, median (min–max) over the runs. */
export function subscriberTable(runs: readonly SubscriberFigures[]): string {
  const cell = (pick: (f: SubscriberFigures) => number, digits = 0) => {
    const values = runs.map(pick);
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    return runs.length > 1
      ? `${median.toFixed(digits)} (${sorted[0]!.toFixed(digits)}–${sorted.at(-1)!.toFixed(digits)})`
      : median.toFixed(digits);
  };
  const rows: [string, string][] = [
    ['subscriptions (SSE streams + graphql-ws, 10 a socket)', cell((f) => f.subscribers)],
    ['accepted', cell((f) => f.accepted)],
    ['received every booking of their event', cell((f) => f.reachedAll)],
    ['bookings', cell((f) => f.bookings)],
    [
      'booking → subscriber p50 / p99 (ms; includes the wait for the 2 s poll)',
      `${cell((f) => f.p50Ms)} / ${cell((f) => f.p99Ms)}`,
    ],
    ['first → last subscriber of a booking, p99 (ms)', cell((f) => f.spreadP99Ms)],
    [
      'RSS ready / one subscriber per event / all subscribed / 5 s after they left (MiB)',
      `${cell((f) => f.rssReadyMiB)} / ${cell((f) => f.rssFeedsMiB)} / ${cell((f) => f.rssSubscribedMiB)} / ${cell((f) => f.rssLeftMiB)}`,
    ],
    ['RSS per subscriber beyond the feeds (KiB)', cell((f) => f.kibPerSubscriber, 1)],
    ['CPU while idle, all subscribed (% of a core)', cell((f) => f.idleCpuPercent, 1)],
    ['upstream calls a minute while idle (one poll per event every 2 s: 90)', cell((f) => f.idleCallsPerMin)],
  ];
  return ['| S8 | ours |', '|---|---|', ...rows.map(([label, value]) => `| ${label} | ${value} |`)].join('\n');
}
