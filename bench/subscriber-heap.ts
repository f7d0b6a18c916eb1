import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from './compare/emulator.ts';
import { byConstructor, growth, takeSnapshot, totalBytes as total } from './compare/heap.ts';
import { treeRssMiB } from './compare/rss.ts';
import {
  bookAndWait,
  S8_EVENTS,
  type Subscriber,
  startSubscriberGateway,
  subscribeMix,
  subscribeSse,
} from './compare/s8.ts';
import { machine, stop } from './lib.ts';

/**
 * `npm run bench -- subscriber-heap`: what each further `reservationChanged` subscriber costs the
 * gateway's heap, by constructor (issue 28: S8 measured ~20 KiB of RSS per subscriber beyond the
 * feeds). The gateway runs as `npm start` does, in a process of its own with
 * `--heapsnapshot-signal`; one SSE subscriber per demo event first (the feeds), a snapshot, then
 * BENCH_HEAP_SUBSCRIBERS more (default 2,000: half SSE streams, half graphql-ws ten a socket;
 * BENCH_HEAP_DOORS=sse or ws for one door alone), a
 * booking per event delivered to all, a second snapshot. Prints the constructors that grew most,
 * per subscriber.
 */

const SUBSCRIBERS = Number(process.env.BENCH_HEAP_SUBSCRIBERS ?? 2_000);
/** `sse`, `ws` or both (half each): which door the further subscribers come through. */
const DOORS = process.env.BENCH_HEAP_DOORS ?? 'both';
if (!['sse', 'ws', 'both'].includes(DOORS)) throw new Error(`BENCH_HEAP_DOORS is sse, ws or both; got ${DOORS}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const dir = mkdtempSync(join(tmpdir(), 'subscriber-heap-'));
const emulator = await startEmulator({ rateLimit: false });
const gateway = await startSubscriberGateway(
  ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`],
  emulator.url,
  SUBSCRIBERS,
);
const pid = gateway.child.pid!;
const url = `${gateway.url}/graphql`;

const snapshot = () => takeSnapshot(pid, dir);

const subscribers: Subscriber[] = [];
const sockets: { close(): void }[] = [];
try {
  subscribers.push(...(await Promise.all(S8_EVENTS.map((eventId) => subscribeSse(url, eventId)))));
  for (const eventId of S8_EVENTS) await bookAndWait(emulator.url, eventId, subscribers, 120_000);
  await sleep(2_000);
  const rssA = treeRssMiB(pid);
  const a = await snapshot();

  const sse = DOORS === 'sse' ? SUBSCRIBERS : DOORS === 'ws' ? 0 : Math.ceil(SUBSCRIBERS / 2);
  await subscribeMix(url, { sse, ws: SUBSCRIBERS - sse }, { subscribers, sockets });
  for (const eventId of S8_EVENTS) await bookAndWait(emulator.url, eventId, subscribers, 120_000);
  await sleep(2_000);
  const rssB = treeRssMiB(pid);
  const live = subscribers.filter((s) => !s.failed).length - S8_EVENTS.length;
  const b = await snapshot();

  const before = byConstructor(a);
  const after = byConstructor(b);
  const rows = growth(before, after, 30);
  console.log(`\n### Heap per subscriber (${machine()})\n`);
  console.log(
    `\`BENCH_HEAP_SUBSCRIBERS=${SUBSCRIBERS} BENCH_HEAP_DOORS=${DOORS} npm run bench -- subscriber-heap\`: ${live} further subscribers live (${DOORS === 'both' ? 'half SSE, half graphql-ws ten a socket' : DOORS === 'sse' ? 'SSE streams' : 'graphql-ws, ten a socket'}). ` +
      // RSS after the first snapshot holds what writing it cost: not a figure per subscriber.
      `RSS ${rssA.toFixed(0)} → ${rssB.toFixed(0)} MiB (the second after a snapshot was written); ` +
      `heap ${(total(before) / 1048576).toFixed(1)} → ${(total(after) / 1048576).toFixed(1)} MiB (${((total(after) - total(before)) / 1024 / live).toFixed(1)} KiB each).\n`,
  );
  console.log('| node type and constructor | count per subscriber | bytes per subscriber |');
  console.log('|---|---|---|');
  for (const row of rows)
    console.log(
      `| ${row.key.replace(/\|/g, '\\|')} | ${(row.count / live).toFixed(2)} | ${(row.bytes / live).toFixed(0)} |`,
    );
} finally {
  for (const subscriber of subscribers) subscriber.close();
  for (const socket of sockets) socket.close();
  await stop(gateway.child);
  await emulator.close();
  if (!process.env.BENCH_KEEP_SNAPSHOTS) rmSync(dir, { recursive: true, force: true });
  else console.error(`snapshots kept in ${dir}`);
}
