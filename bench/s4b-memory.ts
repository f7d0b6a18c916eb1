import { createWriteStream, mkdirSync } from 'node:fs';
import autocannon from 'autocannon';
import { byConstructor, takeSnapshot, totalBytes } from './compare/heap.ts';
import { sampleRss, treeRssMiB } from './compare/rss.ts';
import { startCommand, startProcess, stop } from './lib.ts';

/**
 * What holds the gateway's memory at S4b's peak: the gateway as `npm start` runs it against an
 * emulator without rate limit, every 1000-record window of event 5001 walked once (as the compare
 * harness does), then BENCH_CONNECTIONS (10) connections asking a different window each request
 * for BENCH_DURATION_S (10) s, RSS sampled, and a heap snapshot taken BENCH_SNAPSHOT_AT_S (4) s in
 * (the largest constructors by self size printed). BENCH_NODE_FLAGS: more flags for the gateway;
 * BENCH_ENV: more settings, as JSON.
 */

const EVENT = 5001;
const FIELDS = `node { reservationNumber status arrivalDate contact { firstName lastName email } rooms { roomType guests { firstName lastName } } }`;
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const seconds = Number(process.env.BENCH_DURATION_S ?? 10);
const snapshotAt = Number(process.env.BENCH_SNAPSHOT_AT_S ?? 4);
const dir = process.env.BENCH_SNAPSHOT_DIR ?? '/tmp/s4b-memory';
mkdirSync(dir, { recursive: true });

const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const gateway = await startCommand(
  [
    ...(snapshotAt > 0 ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] : []),
    ...flags,
    'scripts/start.mjs',
  ],
  {
    env: {
      PORT: '0',
      OPS_PORT: '0',
      UPSTREAM_KEY: 'demo-key-1001',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
      UPSTREAM_BASE_URL: emulator.url,
      UPSTREAM_RATE_LIMIT: '100000',
      LOG_LEVEL: 'warn',
      ...(JSON.parse(process.env.BENCH_ENV ?? '{}') as Record<string, string>),
    },
    pattern: /ready at (http:\/\/127\.0\.0\.1:\d+)\/graphql/,
  },
);
const pid = gateway.child.pid!;
// The gateway's output from its ready line on (with BENCH_NODE_FLAGS=--trace-gc: its collections).
if (process.env.BENCH_GATEWAY_LOG) gateway.child.stdout!.pipe(createWriteStream(process.env.BENCH_GATEWAY_LOG));
console.log(`idle RSS at ready: ${treeRssMiB(pid).toFixed(0)} MiB`);
const url = `${gateway.url}/graphql`;
const post = async (query: string, variables: Record<string, unknown>) =>
  (await (
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    })
  ).json()) as { data: { event: { reservations: { pageInfo: { hasNextPage: boolean; endCursor: string } } } } };
const cursors: (string | null)[] = [null];
for (;;) {
  const page = await post(
    `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { pageInfo { hasNextPage endCursor } } } }`,
    { after: cursors.at(-1) },
  );
  const info = page.data.event.reservations.pageInfo;
  if (!info.hasNextPage) break;
  cursors.push(info.endCursor);
}
console.log(`${cursors.length} windows; RSS after the walk: ${treeRssMiB(pid).toFixed(0)} MiB`);
const bodies = cursors.map((after) =>
  JSON.stringify({
    query: `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { edges { ${FIELDS} } } } }`,
    variables: { after },
  }),
);
let next = 0;
const rss = sampleRss(pid, 100);
const timer =
  snapshotAt > 0
    ? setTimeout(async () => {
        console.log(`RSS at the snapshot: ${treeRssMiB(pid).toFixed(0)} MiB`);
        const file = await takeSnapshot(pid, dir);
        const census = byConstructor(file);
        console.log(`snapshot ${file}: ${(totalBytes(census) / 2 ** 20).toFixed(1)} MiB reachable`);
        for (const [key, e] of [...census.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 25))
          console.log(`${(e.bytes / 2 ** 20).toFixed(1).padStart(7)} MiB ${String(e.count).padStart(9)}  ${key}`);
      }, snapshotAt * 1000)
    : undefined;
const result = await autocannon({
  url,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  connections,
  duration: seconds,
  requests: [
    {
      method: 'POST',
      body: bodies[0],
      setupRequest: (req: autocannon.Request) => ({ ...req, body: bodies[next++ % bodies.length] }),
    },
  ],
});
console.log(
  `req/s ${result.requests.average}, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}; peak RSS ${rss.stop().toFixed(0)} MiB`,
);
clearTimeout(timer);
await new Promise((r) => setTimeout(r, 15_000));
await stop(gateway.child);
await stop(emulator.child);
