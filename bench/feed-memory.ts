import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FeedMembership } from '../src/changes/registry.ts';
import { loadConfig } from '../src/config/environment.ts';
import { createGateway } from '../src/gateway.ts';
import { startEmulator } from './compare/emulator.ts';
import { machine } from './lib.ts';

/**
 * `npm run bench -- feed-memory`: what one change feed of event 5001 (25,600 reservations in the
 * emulator's demo data) costs the gateway's heap (issue 28). The emulator runs in a process of its
 * own; the gateway in this one, so its heap is read after a full collection: before any
 * subscriber, with one subscriber once the baseline read is done, after a few idle polls, and
 * after it left. Also the peak heap during the baseline read (sampled every 20 ms, no collection),
 * the upstream calls of each idle poll (the emulator's log) and this process's CPU while idle.
 * BENCH_FEED_POLLS idle polls (default 5) at CHANGES_POLL_INTERVAL_MS=2000.
 */

const EVENT = 5001;
const INTERVAL_MS = 2_000;
const IDLE_POLLS = Number(process.env.BENCH_FEED_POLLS ?? 5);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
/**
 * What the heap holds, MiB: the sum of a heap snapshot's objects (a snapshot collects first, and
 * counts only what is reachable). `heapUsed` after gc moves by megabytes with V8's own bookkeeping
 * (a second feed that came and left "grew" it by 3 MiB; the snapshots of before and after were equal).
 */
let snapshots = 0;
async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) gc();
  const file = writeHeapSnapshot(join(tmpdir(), `feed-memory-${process.pid}-${++snapshots}.heapsnapshot`));
  try {
    // Read in a process of its own: parsing a snapshot here would be in the next one's heap.
    const sum = `const s = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
      const f = s.snapshot.meta.node_fields, i0 = f.indexOf('self_size'); let b = 0;
      for (let i = i0; i < s.nodes.length; i += f.length) b += s.nodes[i]; console.log(b);`;
    return Number(execFileSync(process.execPath, ['-e', sum, file], { encoding: 'utf8' })) / MiB;
  } finally {
    if (!process.env.BENCH_KEEP_SNAPSHOTS) rmSync(file, { force: true });
  }
}
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
};

const settled = () => new Promise((resolve) => setTimeout(resolve, 500));

const emulator = await startEmulator({ rateLimit: false });
const config = loadConfig({ LOG_LEVEL: 'silent', CHANGES_POLL_INTERVAL_MS: String(INTERVAL_MS) });
const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url });
const account = config.licensees[0]!.account;
try {
  // A token and the code paths warm: a small query over another event first.
  await gateway.yoga.fetch('http://bench/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ event(eventId: 5003) { eventId reservations(first: 5) { totalCount } } }' }),
  });
  await gateway.upstream.clearCache();
  const before = await heapAfterGc();
  const rssBefore = process.memoryUsage().rss / MiB;

  let peak = 0;
  let peakRss = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed / MiB);
    peakRss = Math.max(peakRss, process.memoryUsage.rss() / MiB);
  }, 20);
  const readFrom = Date.now();
  let membership: FeedMembership | undefined = await gateway.changeFeeds.join(account, EVENT, () => {});
  const baselineMs = Date.now() - readFrom;
  clearInterval(sampler);
  const baselineCalls = (await emulator.requestsSince(readFrom)).filter((r) => r.endpoint === 'getreservation').length;
  const withOne = await heapAfterGc();
  const known = gateway.changeFeeds.footprint().known;

  const pollsOf = () => gateway.changeFeeds.active()[0]?.polls ?? 0;
  // Polls from the second on: the first may still look back over the minute the feed started in.
  await until(() => pollsOf() >= 1);
  const idleFrom = Date.now();
  const cpuFrom = process.cpuUsage();
  const pollsFrom = pollsOf();
  await until(() => pollsOf() >= pollsFrom + IDLE_POLLS);
  const cpu = process.cpuUsage(cpuFrom);
  const idleS = (Date.now() - idleFrom) / 1000;
  const idleCalls = (await emulator.requestsSince(idleFrom)).filter((r) => r.endpoint === 'getreservation').length;
  const afterPolls = await heapAfterGc();

  membership.leave();
  // The membership holds its feed (its latest modification): the bench lets go of it as a stream would.
  membership = undefined;
  await until(() => gateway.changeFeeds.footprint().feeds === 0);
  // A poll in flight (or the wait before the next) holds the stopped feed until it ends: a moment.
  await settled();
  const after = await heapAfterGc();
  // A second subscriber comes and goes: what grew for good (a leak) grows again; code compiled once does not.
  (await gateway.changeFeeds.join(account, EVENT, () => {})).leave();
  await until(() => gateway.changeFeeds.footprint().feeds === 0);
  // A poll in flight (or the wait before the next) holds the stopped feed until it ends: a moment.
  await settled();
  const afterSecond = await heapAfterGc();

  const row = (label: string, value: string) => `| ${label} | ${value} |`;
  console.log(
    [
      `Feed of event ${EVENT} (${known} reservations known), ${machine()}:`,
      '',
      '| measure | value |',
      '|---|---|',
      row('heap (snapshot), no subscriber', `${before.toFixed(1)} MiB (RSS ${rssBefore.toFixed(0)} MiB)`),
      row(
        'peak during the baseline read (sampled, no gc)',
        `heap ${peak.toFixed(0)} MiB, RSS ${peakRss.toFixed(0)} MiB`,
      ),
      row('baseline read', `${baselineMs} ms, ${baselineCalls} getreservation calls`),
      row('heap (snapshot), one subscriber', `${withOne.toFixed(1)} MiB (+${(withOne - before).toFixed(1)})`),
      row(
        `heap (snapshot), after ${IDLE_POLLS} idle polls`,
        `${afterPolls.toFixed(1)} MiB (+${(afterPolls - before).toFixed(1)})`,
      ),
      row('heap (snapshot), the subscriber left', `${after.toFixed(1)} MiB (+${(after - before).toFixed(1)})`),
      row(
        'heap (snapshot), a second subscriber came and left',
        `${afterSecond.toFixed(1)} MiB (+${(afterSecond - before).toFixed(1)})`,
      ),
      row(
        'upstream calls per idle poll',
        `${(idleCalls / IDLE_POLLS).toFixed(1)} (${idleCalls} getreservation over ${IDLE_POLLS} polls)`,
      ),
      row(
        'CPU while idle (this process)',
        `${(((cpu.user + cpu.system) / 1000 / (idleS * 1000)) * 100).toFixed(2)} % of a core over ${idleS.toFixed(1)} s`,
      ),
    ].join('\n'),
  );
} finally {
  await gateway.close();
  await emulator.close();
}
