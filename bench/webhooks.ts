import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { machine, RUNS, startBenchGateway, startProcess, stop, summary } from './lib.ts';

/**
 * `npm run bench -- webhooks`: 1,000 changes of one event to 10 webhook endpoints (10,000
 * deliveries), against a fresh gateway process (built, `node scripts/start.mjs`, no Redis: the
 * in-memory queue) over one emulator process, and the same changes to 1 endpoint in the same run.
 * Endpoints are registered first (the event's feed joins), then the bookings are made at the
 * emulator (`/_emulator/bookings`, 10 at a time) between two polls (CHANGES_POLL_INTERVAL_MS 30000
 * here). Figures: the time from the first delivery (the poll that saw the changes) to the last;
 * the gateway's RSS before and at its peak (sampled every 100 ms); upstream calls from the first
 * booking to the last delivery (the emulator's log), which should not depend on the endpoints.
 * The receivers answer 204 at once, on 127.0.0.1 (WEBHOOK_ALLOW_HTTP_HOSTS).
 *
 * BENCH_RUNS (3), BENCH_WEBHOOKS_CHANGES (1000) and BENCH_WEBHOOKS_ENDPOINTS (10) change the sizes.
 */
const CHANGES = Number(process.env.BENCH_WEBHOOKS_CHANGES ?? 1_000);
const ENDPOINTS = Number(process.env.BENCH_WEBHOOKS_ENDPOINTS ?? 10);
const POLL_MS = 30_000;
const EVENT_ID = 5003;

interface Figures {
  endpoints: number;
  deliveries: number;
  pollToLastMs: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  upstreamCalls: number;
  bookingMs: number;
  /** Whether a poll fell inside the booking burst (the run then measures two polls). */
  straddled: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

async function upstreamCalls(emulatorUrl: string): Promise<number> {
  const res = await fetch(`${emulatorUrl}/_emulator/requests`);
  return ((await res.json()) as { requests: { endpoint: string }[] }).requests.filter(
    (r) => r.endpoint !== 'authenticate',
  ).length;
}

async function book(emulatorUrl: string): Promise<void> {
  const res = await fetch(`${emulatorUrl}/_emulator/bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ eventId: EVENT_ID }),
  });
  if (!res.ok) throw new Error(`booking refused: ${res.status} ${await res.text()}`);
}

/** One receiver server: arrival times, per path. */
async function startReceiver() {
  const arrivals: number[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrivals.push(performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function measure(emulatorUrl: string, endpoints: number): Promise<Figures> {
  // The service keeps minutes, and a feed's first read tells what changed in its own minute: the
  // previous measurement's bookings are moved two minutes into the past.
  await fetch(`${emulatorUrl}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advanceMs: 120_000 }),
  });
  const receiver = await startReceiver();
  const gateway = await startBenchGateway(emulatorUrl, {
    CHANGES_POLL_INTERVAL_MS: String(POLL_MS),
    WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
  });
  const pid = gateway.child.pid!;
  try {
    for (let n = 0; n < endpoints; n++) {
      const res = await fetch(`${gateway.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: `mutation { createWebhookEndpoint(input: { url: "${receiver.url}/hooks/${n}", eventIds: [${EVENT_ID}] }) { userErrors { message } } }`,
        }),
      });
      const answer = (await res.json()) as {
        errors?: unknown;
        data?: { createWebhookEndpoint: { userErrors: unknown[] } };
      };
      if (answer.errors || answer.data?.createWebhookEndpoint.userErrors.length)
        throw new Error(`endpoint refused: ${JSON.stringify(answer)}`);
    }
    // The feed's baseline read, then a moment after it: the bookings fall between two polls.
    await sleep(3_000);
    const rssBeforeMiB = rssMiB(pid);
    let rssPeakMiB = rssBeforeMiB;
    const sampler = setInterval(() => {
      rssPeakMiB = Math.max(rssPeakMiB, rssMiB(pid));
    }, 100);
    const callsBefore = await upstreamCalls(emulatorUrl);
    const bookingStart = performance.now();
    for (let made = 0; made < CHANGES; made += 10)
      await Promise.all(Array.from({ length: Math.min(10, CHANGES - made) }, () => book(emulatorUrl)));
    const bookingEnd = performance.now();
    const expected = CHANGES * endpoints;
    while (receiver.arrivals.length < expected) await sleep(50);
    clearInterval(sampler);
    const first = Math.min(...receiver.arrivals);
    const last = Math.max(...receiver.arrivals);
    return {
      endpoints,
      deliveries: receiver.arrivals.length,
      pollToLastMs: last - first,
      rssBeforeMiB,
      rssPeakMiB,
      upstreamCalls: (await upstreamCalls(emulatorUrl)) - callsBefore,
      bookingMs: bookingEnd - bookingStart,
      straddled: first < bookingEnd,
    };
  } finally {
    await stop(gateway.child);
    await receiver.close();
  }
}

const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
try {
  const runs: Figures[][] = [];
  for (let run = 0; run < RUNS; run++) {
    // The two sides alternate in each run (docs/benchmarking.md).
    const pair = [await measure(emulator.url, ENDPOINTS), await measure(emulator.url, 1)];
    runs.push(pair);
    console.log(`run ${run + 1}: ${pair.map((figures) => JSON.stringify(figures)).join('\n       ')}`);
  }
  const column = (side: number, pick: (figures: Figures) => number, digits = 0) =>
    summary(
      runs.map((pair) => pick(pair[side]!)),
      digits,
    );
  console.log(`\nwebhooks: ${CHANGES} changes of one event, median (min–max) of ${RUNS} runs; ${machine()}`);
  console.log('| endpoints | deliveries | first to last delivery (ms) | RSS before → peak (MiB) | upstream calls |');
  console.log('|---|---|---|---|---|');
  for (const side of [0, 1])
    console.log(
      `| ${runs[0]![side]!.endpoints} | ${runs[0]![side]!.deliveries} | ${column(side, (f) => f.pollToLastMs)} | ${column(side, (f) => f.rssBeforeMiB)} → ${column(side, (f) => f.rssPeakMiB)} | ${column(side, (f) => f.upstreamCalls)} |`,
    );
  const straddled = runs.flat().filter((figures) => figures.straddled).length;
  if (straddled) console.log(`\n${straddled} measurement(s) had a poll inside the booking burst: run again.`);
} finally {
  await stop(emulator.child);
}
