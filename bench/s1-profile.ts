import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapping } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { treeCpuMs } from './compare/cpu.ts';
import { startEmulator } from './compare/emulator.ts';
import { type LoadFigures, measure } from './compare/load.ts';
import { S1 } from './compare/scenarios.ts';
import { startOurs } from './compare/systems.ts';
import { DURATION_S, machine, type Started, stop, WARMUP_S } from './lib.ts';

/**
 * `npm run bench -- s1-profile`: where the gateway's CPU goes answering S1 (one event by id, a
 * response-cache hit but for the first answer and each expiry). The gateway starts as the compare
 * harness starts ours (`npm start`'s dist/, a fresh emulator, rate limits lifted), under V8's CPU
 * profiler (written when it exits on SIGTERM). S1's request as the harness sends it, at 50
 * connections: WARMUP_S of warm-up, then BENCH_DURATION_S (10) s measured.
 * Only the samples of the measured window count (V8's profile and this process share the monotonic
 * clock); frames in dist/ are mapped back to src/ and node_modules/ through dist's source maps.
 */

const CONNECTIONS = 50;
const TOP = 25;
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const dir = mkdtempSync(join(tmpdir(), 's1-profile-'));
/**
 * What `--cpu-prof` does, as a module the gateway imports first (`--import` in NODE_OPTIONS): Node 20
 * refuses `--cpu-prof` there, and startOurs takes no flags. V8's profiler, started through the
 * inspector, writes its profile on exit (a same-thread session answers synchronously, in `exit` too).
 */
writeFileSync(
  join(dir, 'profiler.mjs'),
  `import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.start');
process.on('exit', () => session.post('Profiler.stop', (error, result) => {
  if (!error) writeFileSync(${JSON.stringify(dir)} + '/gateway.' + process.pid + '.cpuprofile', JSON.stringify(result.profile));
}));
`,
);
const emulator = await startEmulator({ rateLimit: false });
let gateway: Started | undefined;
let figures: LoadFigures | undefined;
const window: [number, number] = [0, 0];
let cpuMs = 0;
let query = '';
try {
  // `unlimited('ours')` of bench/compare.ts: the figures measure the gateway, not the budget.
  gateway = await startOurs({
    UPSTREAM_BASE_URL: emulator.url,
    UPSTREAM_RATE_LIMIT: '100000',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(join(dir, 'profiler.mjs'))}`.trim(),
  });
  const pid = gateway.child.pid!;
  const target = await S1.targets.ours!({ url: `${gateway.url}/graphql`, emulator });
  query = (JSON.parse(target.bodies[0]!) as { query: string }).query;
  const first = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.bodies[0] });
  const body = await first.text();
  if (!first.ok || body.includes('"errors"')) throw new Error(`S1's first answer: ${first.status} ${body}`);
  let cpuFrom = 0;
  figures = await measure(target, CONNECTIONS, () => {
    window[0] = nowUs();
    cpuFrom = treeCpuMs(pid);
  });
  window[1] = nowUs();
  cpuMs = treeCpuMs(pid) - cpuFrom;
} finally {
  if (gateway) await stop(gateway.child);
  await emulator.close();
}

// The gateway's own (a rebuild of dist/ before it starts writes one too).
const path = join(dir, `gateway.${gateway!.child.pid}.cpuprofile`);
if (!existsSync(path)) throw new Error(`no profile of the gateway written in ${dir}`);
const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;

// Samples per node, in the measured window only.
const hits = new Map<number, number>();
let total = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i]!;
  if (at < window[0] || at > window[1]) continue;
  hits.set(profile.samples[i]!, (hits.get(profile.samples[i]!) ?? 0) + 1);
  total++;
}

/** The bundle's (and its chunks') source maps, read once each. */
const maps = new Map<string, SourceMap | null>();
function sourceMap(url: string): SourceMap | null {
  if (!maps.has(url)) {
    try {
      maps.set(url, new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8'))));
    } catch {
      maps.set(url, null);
    }
  }
  return maps.get(url)!;
}

/** Where a frame's function is (`pkg/…/file.js:line`, `src/path.ts:line`, `node:…:line`), and the group it counts in. */
function locate({ functionName, url, lineNumber, columnNumber }: CallFrame): { where: string; group: string } {
  if (!url) return { where: '', group: functionName.startsWith('(') ? functionName : '(native)' };
  let file = url;
  let line = lineNumber + 1;
  if (url.startsWith('file://') && url.includes('/dist/')) {
    const entry = sourceMap(url)?.findEntry(lineNumber, columnNumber) as Partial<SourceMapping> | undefined;
    if (entry?.originalSource) [file, line] = [entry.originalSource, entry.originalLine! + 1];
  }
  if (file.startsWith('node:')) return { where: `${file}:${line}`, group: 'node: internals' };
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:.*\/)?([^/]+)$/.exec(file);
  if (pkg) return { where: `${pkg[1]}/…/${pkg[2]}:${line}`, group: `node_modules/${pkg[1]}` };
  const ours = /(?:^|\/)(src\/.*)$/.exec(file);
  if (ours) {
    const folder = ours[1]!.slice(0, ours[1]!.lastIndexOf('/'));
    return { where: `${ours[1]}:${line}`, group: folder === 'src' ? ours[1]! : folder };
  }
  const rest = file.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
  return { where: `${rest}:${line}`, group: rest };
}

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const located = new Map<number, { key: string; where: string; name: string; group: string }>();
const frameOf = (id: number) => {
  let frame = located.get(id);
  if (!frame) {
    const { callFrame } = byId.get(id)!;
    const { where, group } = locate(callFrame);
    const name = callFrame.functionName || '(anonymous)';
    frame = { key: `${name}\t${where}`, where, name, group };
    located.set(id, frame);
  }
  return frame;
};

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const byGroup = new Map<string, number>();
const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);
for (const [id, n] of hits) {
  const frame = frameOf(id);
  add(self, frame.key, n);
  add(byGroup, frame.group, n);
  // Each sample counts once per function on its stack, however often recursion puts it there.
  const onStack = new Set<string>();
  for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
    if (byId.get(node)!.callFrame.functionName !== '(root)') onStack.add(frameOf(node).key);
  }
  for (const key of onStack) add(inclusive, key, n);
}

const percent = (n: number) => `${((n / total) * 100).toFixed(1)}`;
const cell = (text: string) => text.replace(/\|/g, '\\|');
const top = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP);
const idle = byGroup.get('(idle)') ?? 0;

console.log(`\n### S1 CPU profile (${machine()})\n`);
console.log(
  `\`npm run bench -- s1-profile\`: S1 (\`${query}\`) ` +
    `at ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${DURATION_S} s measured: ` +
    `${figures!.rps.toFixed(0)} req/s, p50 ${figures!.p50} ms, p99 ${figures!.p99} ms, ${figures!.requests} answers ` +
    `(${figures!.outcomes.ok} with data, ${figures!.requests - figures!.outcomes.ok} not); gateway CPU ` +
    `${((cpuMs / ((window[1] - window[0]) / 1000)) * 100).toFixed(0)} % of a core (the profiler's thread included), ` +
    `${((cpuMs / figures!.requests) * 1000).toFixed(0)} µs per answer.\n`,
);
console.log(
  `Samples in the measured window: ${total} (${percent(total - idle)} % not idle, main thread). Profile, ` +
    `startup and warm-up included, for DevTools (Performance, load profile): ${path}\n`,
);
const names = new Map([...located.values()].map((frame) => [frame.key, frame]));
console.log('| self % | function | where |\n|---|---|---|');
for (const [key, n] of top(self)) {
  const { name, where } = names.get(key)!;
  console.log(`| ${percent(n)} | ${cell(name)} | ${cell(where)} |`);
}
console.log('\n| total % | self % | function | where |\n|---|---|---|---|');
for (const [key, n] of top(inclusive)) {
  const { name, where } = names.get(key)!;
  console.log(`| ${percent(n)} | ${percent(self.get(key) ?? 0)} | ${cell(name)} | ${cell(where)} |`);
}
console.log('\n| self % | group |\n|---|---|');
for (const [group, n] of [...byGroup].sort((a, b) => b[1] - a[1])) console.log(`| ${percent(n)} | ${cell(group)} |`);
