import '../examples/federation/quiet-apollo.ts';
import { type ChildProcess, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startHiveGateway } from '../examples/federation/hive-gateway.ts';
import { REGISTRATION_SDL } from '../examples/federation/registration-subgraph.ts';
import { RESERVATIONS_SUBGRAPH } from '../examples/federation/subgraph-names.ts';
import { subgraphSdl } from '../src/schema/index.ts';
import { freePort, machine, RUNS, sseData, startBenchGateway, startProcess, stop, summary } from './lib.ts';

/**
 * `npm run bench -- callbacks`: 100 subscribers of one event's changes, two ways, alternating in
 * each run, each against a fresh gateway process (built, `node scripts/start.mjs`) over one
 * emulator process:
 * - through Hive Gateway: 100 clients over SSE to Hive Gateway, which subscribes to us through
 *   Apollo's callback protocol (its http-callback transport, heartbeat 5 s), our callbacks counted
 *   by a pass-through in front of its callback path;
 * - straight: 100 graphql-ws clients (one socket each) to our gateway.
 * Figures: our process's RSS before and after the 100 subscribe, upstream calls a minute while
 * idle (the emulator's log), callback requests a minute to the router while idle, and the latency
 * from a booking (`/_emulator/bookings`) to each subscriber receiving it (p50, p99 of 100 × the
 * bookings). CHANGES_POLL_INTERVAL_MS is 2000 here (15000 by default): a booking waits for the next
 * poll, so the latency is mostly that wait.
 *
 * BENCH_RUNS (3), BENCH_CALLBACKS_SUBSCRIBERS (100), BENCH_CALLBACKS_IDLE_S (30) and
 * BENCH_CALLBACKS_BOOKINGS (5) change the sizes (the test of this scenario makes it small).
 */
const SUBSCRIBERS = Number(process.env.BENCH_CALLBACKS_SUBSCRIBERS ?? 100);
const IDLE_S = Number(process.env.BENCH_CALLBACKS_IDLE_S ?? 30);
const BOOKINGS = Number(process.env.BENCH_CALLBACKS_BOOKINGS ?? 5);
const POLL_MS = 2_000;
const HEARTBEAT_MS = 5_000;
const EVENT_ID = 5003;
const QUERY =
  'subscription ($eventId: Int!) { reservationChanged(eventId: $eventId) { kind modifiedAt reservation { reservationNumber } } }';

interface Figures {
  rssBeforeMiB: number;
  rssAfterMiB: number;
  upstreamPerMin: number;
  callbacksPerMin: number;
  /** Distinct callback subscriptions our gateway called back while idle (the router may share one among its clients). */
  callbackSubscriptions: number;
  p50Ms: number;
  p99Ms: number;
}

/** A subscriber: when each reservation number first reached it. */
interface Subscriber {
  arrivals: Map<number, number>;
  close(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** `p` (0–100) of `values`, nearest rank. */
function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function reservationNumberOf(result: unknown): number | undefined {
  return (result as { data?: { reservationChanged?: { reservation?: { reservationNumber?: number } } } })?.data
    ?.reservationChanged?.reservation?.reservationNumber;
}

/** Requests the emulator logged, authentication aside. */
async function upstreamCalls(emulatorUrl: string): Promise<number> {
  const res = await fetch(`${emulatorUrl}/_emulator/requests`);
  return ((await res.json()) as { requests: { endpoint: string }[] }).requests.filter(
    (r) => r.endpoint !== 'authenticate',
  ).length;
}

async function book(emulatorUrl: string): Promise<number> {
  const res = await fetch(`${emulatorUrl}/_emulator/bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ eventId: EVENT_ID }),
  });
  if (!res.ok) throw new Error(`booking refused: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { reservationNumber: number }).reservationNumber;
}

/** A pass-through in front of the router's callback path: counts what our gateway sends it, by action. */
async function startCallbackCounter(): Promise<{
  prefix: string;
  forwardTo(origin: string): void;
  counts: Record<string, number>;
  ids: Set<string>;
  close(): Promise<void>;
}> {
  let target = '';
  const counts: Record<string, number> = {};
  const ids = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      try {
        const message = JSON.parse(body) as { action?: string; id?: string };
        counts[message.action ?? '?'] = (counts[message.action ?? '?'] ?? 0) + 1;
        if (message.id) ids.add(message.id);
      } catch {
        counts['?'] = (counts['?'] ?? 0) + 1;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const protocol = request.headers['subscription-protocol'];
      if (typeof protocol === 'string') headers['subscription-protocol'] = protocol;
      fetch(`${target}${request.url}`, { method: 'POST', headers, body }).then(
        async (answer) => {
          response.writeHead(answer.status).end(await answer.text());
        },
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    prefix: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    forwardTo: (origin) => void (target = origin),
    counts,
    ids,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A client over SSE (`Accept: text/event-stream`), as GraphiQL or a browser subscribes. */
async function subscribeSse(url: string): Promise<Subscriber> {
  const arrivals = new Map<number, number>();
  const abort = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: QUERY, variables: { eventId: EVENT_ID } }),
    signal: abort.signal,
  });
  if (response.status !== 200)
    throw new Error(`SSE subscription answered ${response.status}: ${await response.text()}`);
  void (async () => {
    try {
      for await (const data of sseData(response.body!)) {
        const number = reservationNumberOf(JSON.parse(data));
        if (number !== undefined && !arrivals.has(number)) arrivals.set(number, performance.now());
      }
    } catch {
      // closed
    }
  })();
  return { arrivals, close: () => abort.abort() };
}

/** A graphql-ws client with a socket of its own, as Apollo Client's GraphQLWsLink subscribes. */
function subscribeWs(url: string): Subscriber {
  const arrivals = new Map<number, number>();
  const client = createClient({ url, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
  const unsubscribe = client.subscribe(
    { query: QUERY, variables: { eventId: EVENT_ID } },
    {
      next: (result) => {
        const number = reservationNumberOf(result);
        if (number !== undefined && !arrivals.has(number)) arrivals.set(number, performance.now());
      },
      error: (error) => console.error('graphql-ws subscriber:', error),
      complete: () => {},
    },
  );
  return {
    arrivals,
    close: () => {
      unsubscribe();
      void client.dispose();
    },
  };
}

/** Books, and waits until every subscriber has it: each one's latency from the booking, in ms. */
async function latencies(emulatorUrl: string, subscribers: Subscriber[]): Promise<number[]> {
  const started = performance.now();
  const number = await book(emulatorUrl);
  const deadline = Date.now() + 60_000;
  while (!subscribers.every((s) => s.arrivals.has(number))) {
    if (Date.now() > deadline) {
      const missing = subscribers.filter((s) => !s.arrivals.has(number)).length;
      throw new Error(`booking ${number} did not reach ${missing} of ${subscribers.length} subscribers in 60 s`);
    }
    await sleep(10);
  }
  return subscribers.map((s) => s.arrivals.get(number)! - started);
}

type Way = 'through Hive Gateway (SSE → callbacks)' | 'straight (graphql-ws)';

async function measure(way: Way, emulatorUrl: string): Promise<Figures> {
  const counter = await startCallbackCounter();
  const gateway = await startBenchGateway(emulatorUrl, {
    CHANGES_POLL_INTERVAL_MS: String(POLL_MS),
    // One anonymous client holds every subscription here.
    SUBSCRIPTIONS_PER_CLIENT: String(SUBSCRIBERS + 10),
    SUBSCRIPTION_CALLBACK_URLS: counter.prefix,
  });
  const ours = `${gateway.url}/graphql`;
  let hive: Awaited<ReturnType<typeof startHiveGateway>> | undefined;
  const subscribers: Subscriber[] = [];
  try {
    let clientsUrl = ours;
    if (way === 'through Hive Gateway (SSE → callbacks)') {
      const composed = composeServices([
        { name: RESERVATIONS_SUBGRAPH, url: ours, typeDefs: parse(subgraphSdl()) },
        { name: 'registrations', url: 'http://127.0.0.1:9/graphql', typeDefs: parse(REGISTRATION_SDL) },
      ]);
      if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
      const port = await freePort();
      counter.forwardTo(`http://127.0.0.1:${port}`);
      hive = await startHiveGateway(composed.supergraphSdl, {
        port,
        callbacks: { heartbeatMs: HEARTBEAT_MS, publicUrl: counter.prefix },
      });
      clientsUrl = hive.url;
    }
    // Warm: the token fetched, the code run once (one subscriber, one booking), then let settle.
    const first =
      way === 'straight (graphql-ws)' ? subscribeWs(ours.replace('http', 'ws')) : await subscribeSse(clientsUrl);
    await sleep(1_000);
    await latencies(emulatorUrl, [first]);
    first.close();
    await sleep(3_000);
    const rssBeforeMiB = rssMiB(gateway.child.pid!);

    for (let i = 0; i < SUBSCRIBERS; i++)
      subscribers.push(
        way === 'straight (graphql-ws)' ? subscribeWs(ours.replace('http', 'ws')) : await subscribeSse(clientsUrl),
      );
    // Every one live: a booking reached them all (not counted: the feed may have just started).
    await sleep(1_000);
    await latencies(emulatorUrl, subscribers);
    await sleep(2_000);
    const rssAfterMiB = rssMiB(gateway.child.pid!);

    counter.ids.clear();
    const callbacksBefore = Object.values(counter.counts).reduce((a, b) => a + b, 0);
    const callsBefore = await upstreamCalls(emulatorUrl);
    await sleep(IDLE_S * 1000);
    const upstreamPerMin = ((await upstreamCalls(emulatorUrl)) - callsBefore) * (60 / IDLE_S);
    const callbacksPerMin =
      (Object.values(counter.counts).reduce((a, b) => a + b, 0) - callbacksBefore) * (60 / IDLE_S);

    const samples: number[] = [];
    for (let i = 0; i < BOOKINGS; i++) {
      // At a random point of the poll's cycle.
      await sleep(Math.random() * POLL_MS);
      samples.push(...(await latencies(emulatorUrl, subscribers)));
    }
    return {
      rssBeforeMiB,
      rssAfterMiB,
      upstreamPerMin,
      callbacksPerMin,
      callbackSubscriptions: counter.ids.size,
      p50Ms: percentile(samples, 50),
      p99Ms: percentile(samples, 99),
    };
  } finally {
    for (const subscriber of subscribers) subscriber.close();
    await hive?.close();
    await stop(gateway.child as ChildProcess);
    await counter.close();
  }
}

{
  spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
  const loadBefore = loadAverage();
  const ways: Way[] = ['through Hive Gateway (SSE → callbacks)', 'straight (graphql-ws)'];
  const figures: Partial<Record<Way, Figures[]>> = {};
  try {
    for (let run = 0; run < RUNS; run++) {
      // Alternating: each run starts with the other way.
      for (const way of run % 2 ? [...ways].reverse() : ways) {
        const f = await measure(way, emulator.url);
        (figures[way] ??= []).push(f);
        console.error(
          `${way}, run ${run + 1}: RSS ${f.rssBeforeMiB.toFixed(0)} → ${f.rssAfterMiB.toFixed(0)} MiB, ${f.upstreamPerMin.toFixed(0)} upstream calls/min, ${f.callbacksPerMin.toFixed(0)} callbacks/min (${f.callbackSubscriptions} callback subscriptions), latency p50 ${f.p50Ms.toFixed(0)} ms p99 ${f.p99Ms.toFixed(0)} ms; load ${loadAverage()}`,
        );
      }
    }
  } finally {
    await stop(emulator.child);
  }
  const column = (runs: Figures[], pick: (f: Figures) => number, digits = 0) => summary(runs.map(pick), digits);
  console.log(`### ${SUBSCRIBERS} subscribers of one event: router callbacks against WebSockets (${machine()})

Event ${EVENT_ID}; our gateway built and started with \`node scripts/start.mjs\` (a fresh process per
measurement, CHANGES_POLL_INTERVAL_MS=${POLL_MS}), the emulator in its own process (rate limit off),
Hive Gateway (\`hive-gateway\` CLI, http-callback transport, heartbeat ${HEARTBEAT_MS} ms) in its own; the ${SUBSCRIBERS}
clients, the booking driver and a pass-through counting our callbacks run in the runner's process, on
the same machine. Latency: from the booking's request to each subscriber's receipt, ${BOOKINGS} bookings
at random points of the poll's cycle (it is mostly the wait for the next poll). Idle rates over ${IDLE_S} s.
${RUNS} runs, the two ways alternating; median (min–max). Load average before: ${loadBefore}; after: ${loadAverage()}.

| way | our RSS before (MiB) | our RSS with ${SUBSCRIBERS} (MiB) | upstream calls/min idle | callbacks/min idle | callback subscriptions | latency p50 (ms) | latency p99 (ms) |
|---|---|---|---|---|---|---|---|
${Object.entries(figures)
  .map(
    ([way, runs]) =>
      `| ${way} | ${column(runs, (f) => f.rssBeforeMiB)} | ${column(runs, (f) => f.rssAfterMiB)} | ${column(runs, (f) => f.upstreamPerMin)} | ${column(runs, (f) => f.callbacksPerMin)} | ${column(runs, (f) => f.callbackSubscriptions)} | ${column(runs, (f) => f.p50Ms)} | ${column(runs, (f) => f.p99Ms)} |`,
  )
  .join('\n')}

Reproduce: \`npm run bench -- callbacks\`
`);
}
