import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { treeCpuMs } from './compare/cpu.ts';
import { startEmulator } from './compare/emulator.ts';
import { bookAndWait, S8_EVENTS, type Subscriber, startSubscriberGateway, subscribeMix } from './compare/s8.ts';
import { machine, stop } from './lib.ts';

/**
 * `npm run bench -- subscriber-profile`: where the gateway's CPU goes while N `reservationChanged`
 * subscribers idle (issue 28). The gateway runs as `npm start` does, with `--cpu-prof`; S8's mix of
 * BENCH_PROFILE_SUBSCRIBERS (default 10,000: half SSE streams, half graphql-ws ten a socket) over the
 * three demo events, polled every 2 s; once a booking of each event reached every subscriber,
 * BENCH_PROFILE_IDLE_S (default 36: three of Yoga's 12 s SSE pings) of nothing. Only the samples
 * taken in that window are counted (V8's profile and this process share the monotonic clock): the
 * functions with the most self time, and the scripts they belong to.
 */

const SUBSCRIBERS = Number(process.env.BENCH_PROFILE_SUBSCRIBERS ?? 10_000);
const IDLE_S = Number(process.env.BENCH_PROFILE_IDLE_S ?? 36);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** CPU ms of each of a process's threads by name (/proc/<pid>/task; utime + stime at 100 ticks a second). */
function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[0-9]+$/, 'N');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // the thread ended
    }
  }
  return byName;
}

const PROFILE = process.env.BENCH_PROFILE !== 'off';
const dir = mkdtempSync(join(tmpdir(), 'subscriber-profile-'));
const emulator = await startEmulator({ rateLimit: false });
const gateway = await startSubscriberGateway(
  PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [],
  emulator.url,
  SUBSCRIBERS,
);
const pid = gateway.child.pid!;
const url = `${gateway.url}/graphql`;

const subscribers: Subscriber[] = [];
const sockets: { close(): void }[] = [];
let window: [number, number] = [0, 0];
let cpuPercent = 0;
try {
  const sse = Math.ceil(SUBSCRIBERS / 2);
  await subscribeMix(url, { sse, ws: SUBSCRIBERS - sse }, { subscribers, sockets });
  for (const eventId of S8_EVENTS) await bookAndWait(emulator.url, eventId, subscribers, 180_000);
  const live = subscribers.filter((s) => !s.failed).length;
  const from = Date.now();
  const cpuFrom = treeCpuMs(pid);
  const threadsFrom = threadCpuMs(pid);
  window = [nowUs(), 0];
  await sleep(IDLE_S * 1000);
  window[1] = nowUs();
  cpuPercent = ((treeCpuMs(pid) - cpuFrom) / (Date.now() - from)) * 100;
  const threads = [...threadCpuMs(pid)]
    .map(([name, ms]) => [name, ((ms - (threadsFrom.get(name) ?? 0)) / (Date.now() - from)) * 100] as const)
    .filter(([, percent]) => percent > 0)
    .sort((a, b) => b[1] - a[1]);
  console.log(`\n### Idle CPU profile (${machine()})\n`);
  console.log(
    `\`BENCH_PROFILE_SUBSCRIBERS=${SUBSCRIBERS} npm run bench -- subscriber-profile\`: ${live} subscribers live, ` +
      `${IDLE_S} s idle, ${cpuPercent.toFixed(1)} % of a core (/proc${PROFILE ? ', the profiler thread included' : ', no profiler'}); ` +
      `by thread: ${threads.map(([name, percent]) => `${name} ${percent.toFixed(1)} %`).join(', ')}.\n`,
  );
} finally {
  for (const subscriber of subscribers) subscriber.close();
  for (const socket of sockets) socket.close();
  await sleep(2_000);
  await stop(gateway.child);
  await emulator.close();
}

if (!PROFILE) process.exit(0);
const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile written in ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
if (!process.env.BENCH_KEEP_PROFILE) rmSync(dir, { recursive: true, force: true });
else console.error(`profile kept in ${dir}/${file}`);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<number, number>();
let at = profile.startTime;
let sampled = 0;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i]!;
  if (at < window[0] || at > window[1]) continue;
  // A sample's weight is the delta to the next one (the interval it stands for).
  const weight = profile.timeDeltas[i + 1] ?? 0;
  selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + weight);
  sampled += weight;
}

const script = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')
    .replace(/^.*\/dist\//, 'dist/');
const byFunction = new Map<string, number>();
const byScript = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = url ? `${script(url)}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const owner = url ? script(url) : functionName;
  byScript.set(owner, (byScript.get(owner) ?? 0) + us);
}
const seconds = (window[1] - window[0]) / 1e6;
const rows = (map: Map<string, number>, n: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([key, us]) =>
        `| ${key.replace(/\|/g, '\\|')} | ${((us / 1e6 / seconds) * 100).toFixed(2)} | ${((us / sampled) * 100).toFixed(1)} |`,
    );
const busy = [...selfUs].reduce(
  (sum, [id, us]) => (byId.get(id)!.callFrame.functionName === '(idle)' ? sum : sum + us),
  0,
);
console.log(
  `Samples in the window: ${(sampled / 1e6).toFixed(1)} s, of which not idle ${((busy / 1e6 / seconds) * 100).toFixed(2)} % of a core (the main thread only).\n`,
);
console.log('| function (self time) | % of a core | % of samples |\n|---|---|---|');
console.log(rows(byFunction, 30).join('\n'));
console.log('\n| script (self time) | % of a core | % of samples |\n|---|---|---|');
console.log(rows(byScript, 20).join('\n'));
