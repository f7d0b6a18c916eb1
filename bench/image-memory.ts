import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { count, noOutcomes, type OutcomeCounts } from './compare/outcome.ts';
import { percentile, SESSIONS, simulateUsers } from './compare/s6.ts';
import { machine } from './lib.ts';

/**
 * The image in containers of a few memory limits (podman `--memory`, no swap): the gateway alone in
 * its container, as in production, over the emulator in a container of its own (no rate limit, the
 * same network namespace), under
 * - S4b: BENCH_CONNECTIONS (50) connections each asking a different 1000-record window of event
 *   5001 per request (bench/compare/scenarios.ts), after a walk and a 3 s warm-up, for
 *   BENCH_DURATION_S (30) s, the gateway's rate budget lifted as in the side-by-side runs;
 * - S6: 50 simulated frontend users (bench/compare/s6.ts) for BENCH_DURATION_S, at the gateway's
 *   default budget.
 * Per run: V8's heap limit under that command and memory, the container's memory at ready, its peak
 * (the cgroup's high-water mark, which counts page cache too, and the peak of its anonymous memory
 * and of Node's RSS, sampled every 100 ms), whether the kernel killed anything (the cgroup's
 * oom_kill count, podman's OOMKilled), whether the container still runs, req/s, p50/p99, the
 * answers that were not data, and the container's CPU per answer.
 *
 * BENCH_LIMITS: podman memory limits (default 768m,512m,384m; `none`: the machine's memory).
 * BENCH_HEAP: the commands, `;`-separated: `image` (the image's own CMD), `v8` (`node dist/main.js`:
 * V8's own sizing from the container's memory), or node flags put before dist/main.js, e.g.
 * `--max-old-space-size=640` (default `image;v8`). BENCH_SCENARIOS: s4b, s6 (default both).
 * BENCH_IMAGE: the image (default localhost/reservation-gateway:ci), built first from this tree with
 * scripts/image/build.sh unless BENCH_IMAGE_BUILD=0. Needs podman, as root.
 *
 *   npm run bench -- image-memory
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMAGE = process.env.BENCH_IMAGE ?? 'localhost/reservation-gateway:ci';
const LIMITS = (process.env.BENCH_LIMITS ?? '768m,512m,384m').split(',').filter(Boolean);
const HEAPS = (process.env.BENCH_HEAP ?? 'image;v8').split(';').filter(Boolean);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 's4b,s6').split(',').filter(Boolean) as ('s4b' | 's6')[];
const SECONDS = Number(process.env.BENCH_DURATION_S ?? 30);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP_S = 3;
const EVENT = 5001;
const FIELDS =
  'node { reservationNumber status arrivalDate contact { firstName lastName email } rooms { roomType guests { firstName lastName } } }';
/** What scripts/image/build.sh passes: containers here need explicit limits. */
const ULIMITS = ['--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096'];
const MiB = 2 ** 20;

if (process.getuid?.() !== 0 || spawnSync('podman', ['--version']).status !== 0) {
  console.error('image-memory: needs podman, run as root (as scripts/image/build.sh does)');
  process.exit(2);
}

function podman(...args: string[]): string {
  const result = spawnSync('podman', ['--runtime', 'runc', ...args], { encoding: 'utf8', cwd: ROOT });
  if (result.status !== 0) throw new Error(`podman ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** podman's flags for a memory limit without swap; none for `none` (the machine's memory). */
const memoryFlags = (limit: string) => (limit === 'none' ? [] : ['--memory', limit, '--memory-swap', limit]);

/** The command a variant runs: the image's CMD, plain `node dist/main.js`, or node with these flags. */
function commandOf(heap: string, imageCommand: string[]): string[] {
  if (heap === 'image') return imageCommand;
  if (heap === 'v8') return ['node', 'dist/main.js'];
  return ['node', ...heap.split(/\s+/).filter(Boolean), 'dist/main.js'];
}

/** The cgroup files of a running container (v1, as on these machines, or v2). */
interface Cgroup {
  usage(): number;
  anon(): number;
  /** The high-water mark of usage. */
  peak(): number;
  oomKills(): number;
  /** CPU time used, in ms. */
  cpuMs(): number;
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
const field = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

function cgroupOf(container: string): Cgroup {
  const path = podman('inspect', '--format', '{{.State.CgroupPath}}', container);
  if (existsSync('/sys/fs/cgroup/memory/memory.usage_in_bytes')) {
    const memory = `/sys/fs/cgroup/memory${path}`;
    const cpu = `/sys/fs/cgroup/cpuacct${path}`;
    return {
      usage: () => Number(read(`${memory}/memory.usage_in_bytes`)),
      anon: () => field(read(`${memory}/memory.stat`), 'total_rss'),
      peak: () => Number(read(`${memory}/memory.max_usage_in_bytes`)),
      oomKills: () => field(read(`${memory}/memory.oom_control`), 'oom_kill'),
      cpuMs: () => Number(read(`${cpu}/cpuacct.usage`)) / 1e6,
    };
  }
  const dir = `/sys/fs/cgroup${path}`;
  return {
    usage: () => Number(read(`${dir}/memory.current`)),
    anon: () => field(read(`${dir}/memory.stat`), 'anon'),
    peak: () => Number(read(`${dir}/memory.peak`)),
    oomKills: () => field(read(`${dir}/memory.events`), 'oom_kill'),
    cpuMs: () => field(read(`${dir}/cpu.stat`), 'usage_usec') / 1e3,
  };
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(read(`/proc/${pid}/status`))?.[1] ?? 0) * 1024;

interface State {
  Running: boolean;
  OOMKilled: boolean;
  ExitCode: number;
  Pid: number;
}
const stateOf = (container: string) =>
  (JSON.parse(podman('inspect', container)) as { State: State; RestartCount: number }[])[0]!;

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const logsOf = (container: string) => {
  const result = spawnSync('podman', ['--runtime', 'runc', 'logs', container], { encoding: 'utf8' });
  return result.stdout + result.stderr;
};

/** V8's heap limit, in bytes, for this command in a container of this memory. */
function heapLimit(command: string[], memory: string): number {
  const script = "console.log(require('node:v8').getHeapStatistics().heap_size_limit)";
  return Number(
    podman('run', '--rm', ...ULIMITS, ...memoryFlags(memory), IMAGE, ...command.slice(0, -1), '-e', script),
  );
}

interface Row {
  limit: string;
  heap: string;
  scenario: string;
  heapLimitMiB: number;
  idleMiB: number;
  peakMiB: number;
  peakAnonMiB: number;
  peakRssMiB: number;
  oomKills: number;
  oomKilled: boolean;
  running: boolean;
  rps: number;
  p50: number;
  p99: number;
  answers: number;
  outcomes: OutcomeCounts;
  cpuMsPerAnswer: number;
}

const containers = new Set<string>();
function removeAll() {
  for (const c of containers) spawnSync('podman', ['--runtime', 'runc', 'rm', '--force', c], { stdio: 'ignore' });
  containers.clear();
}
process.on('SIGINT', () => {
  removeAll();
  process.exit(130);
});

if (process.env.BENCH_IMAGE_BUILD !== '0') {
  console.error(`building ${IMAGE} from this tree (scripts/image/build.sh)…`);
  execFileSync('sh', ['scripts/image/build.sh', IMAGE], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
const imageCommand = JSON.parse(podman('image', 'inspect', '--format', '{{json .Config.Cmd}}', IMAGE)) as string[];
const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
console.log(
  `image-memory: ${machine()}; HEAD ${git('rev-parse', 'HEAD')}, src/ ${git('status', '--short', 'src') ? 'with uncommitted changes' : 'clean'}; image ${IMAGE} (${podman('image', 'inspect', '--format', '{{.Id}}', IMAGE).slice(0, 12)}, CMD ${JSON.stringify(imageCommand)})`,
);

const rows: Row[] = [];
try {
  // The emulator, published on the gateway's port: each gateway joins its network namespace.
  const emulator = podman(
    'run',
    '--detach',
    '--read-only',
    ...ULIMITS,
    '--publish',
    '127.0.0.1::4000',
    IMAGE,
    'node',
    'dist/emulator/main.js',
    '--host',
    '127.0.0.1',
    '--port',
    '4010',
    '--no-rate-limit',
  );
  containers.add(emulator);
  await until('the emulator', () => (/listening at/.test(logsOf(emulator)) ? true : undefined));
  const url = `http://127.0.0.1:${/:(\d+)\s*$/.exec(podman('port', emulator, '4000'))![1]}/graphql`;

  for (const limit of LIMITS) {
    for (const heap of HEAPS) {
      const command = commandOf(heap, imageCommand);
      const heapLimitMiB = heapLimit(command, limit) / MiB;
      for (const scenario of SCENARIOS) {
        rows.push(await measure(emulator, url, limit, heap, command, heapLimitMiB, scenario));
        const r = rows.at(-1)!;
        console.log(
          `${limit} ${heap} ${scenario}: heap limit ${r.heapLimitMiB.toFixed(0)} MiB, idle ${r.idleMiB.toFixed(0)}, peak ${r.peakMiB.toFixed(0)} (anon ${r.peakAnonMiB.toFixed(0)}, RSS ${r.peakRssMiB.toFixed(0)}) MiB, oom_kill ${r.oomKills}${r.oomKilled ? ' OOMKilled' : ''}${r.running ? '' : ' NOT RUNNING'}, ${r.rps.toFixed(1)} req/s, p50/p99 ${r.p50}/${r.p99} ms, ${JSON.stringify(r.outcomes)}, ${r.cpuMsPerAnswer.toFixed(1)} ms CPU/answer`,
        );
      }
    }
  }
} finally {
  removeAll();
}

console.log(
  `\n| limit | command | scenario | V8 heap limit MiB | at ready MiB | peak (cgroup) MiB | peak anon / RSS MiB | OOM kills | still running | req/s | p50 / p99 ms | not data | CPU ms per answer |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|`,
);
for (const r of rows) {
  const notData = r.outcomes.errors + r.outcomes.serverErrors + r.outcomes.rateLimited;
  console.log(
    `| ${r.limit} | ${r.heap === 'image' ? `image (${imageCommand.slice(1, -1).join(' ') || 'no flag'})` : r.heap} | ${r.scenario} | ${r.heapLimitMiB.toFixed(0)} | ${r.idleMiB.toFixed(0)} | ${r.peakMiB.toFixed(0)} | ${r.peakAnonMiB.toFixed(0)} / ${r.peakRssMiB.toFixed(0)} | ${r.oomKills}${r.oomKilled ? ' (OOMKilled)' : ''} | ${r.running ? 'yes' : 'no'} | ${r.rps.toFixed(1)} | ${r.p50} / ${r.p99} | ${notData} of ${r.answers} | ${r.cpuMsPerAnswer.toFixed(1)} |`,
  );
}

async function measure(
  emulator: string,
  url: string,
  limit: string,
  heap: string,
  command: string[],
  heapLimitMiB: number,
  scenario: 's4b' | 's6',
): Promise<Row> {
  const env = {
    HOST: '0.0.0.0',
    ALLOWED_HOSTS: 'localhost,127.0.0.1',
    GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: 'yes',
    UPSTREAM_BASE_URL: 'http://127.0.0.1:4010',
    UPSTREAM_KEY: 'demo-key-1001',
    UPSTREAM_SYSTEM_IDENTIFIER: '1001',
    LOG_LEVEL: 'warn',
    // S4b as the side-by-side runs it: the budget lifted. S6 at the gateway's defaults.
    ...(scenario === 's4b' ? { UPSTREAM_RATE_LIMIT: '100000' } : {}),
  };
  const gateway = podman(
    'run',
    '--detach',
    '--read-only',
    '--user',
    '1000:1000',
    ...ULIMITS,
    ...memoryFlags(limit),
    '--network',
    `container:${emulator}`,
    ...Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    IMAGE,
    ...command,
  );
  containers.add(gateway);
  try {
    await until('the gateway', () => (/ready at http/.test(logsOf(gateway)) ? true : undefined));
    const cgroup = cgroupOf(gateway);
    const { Pid: pid } = stateOf(gateway).State;
    await new Promise((r) => setTimeout(r, 2000));
    const idle = cgroup.usage();
    let peakUsage = idle;
    let peakAnon = 0;
    let peakRss = 0;
    let oomKills = 0;
    const sampler = setInterval(() => {
      peakUsage = Math.max(peakUsage, cgroup.usage() || 0);
      peakAnon = Math.max(peakAnon, cgroup.anon() || 0);
      peakRss = Math.max(peakRss, rssOf(pid));
      oomKills = Math.max(oomKills, cgroup.oomKills() || 0);
    }, 100);

    const outcomes = noOutcomes();
    let rps = 0;
    let p50 = 0;
    let p99 = 0;
    let answers = 0;
    let cpuMs = 0;
    let failure = '';
    try {
      if (scenario === 's4b') {
        const bodies = await windows(url);
        let next = 0;
        const run = (seconds: number, counts: OutcomeCounts) =>
          autocannon({
            url,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            connections: CONNECTIONS,
            duration: seconds,
            requests: [
              {
                method: 'POST',
                body: bodies[0],
                setupRequest: (req: autocannon.Request) => ({ ...req, body: bodies[next++ % bodies.length] }),
                onResponse: (status: number, body: string) => count(counts, status, body),
              },
            ],
          });
        await run(WARMUP_S, noOutcomes());
        const cpu0 = cgroup.cpuMs();
        const result = await run(SECONDS, outcomes);
        cpuMs = cgroup.cpuMs() - cpu0;
        rps = result.requests.average;
        p50 = result.latency.p50;
        p99 = result.latency.p99;
        answers = result.requests.total;
        outcomes.serverErrors += result.errors + result.timeouts;
      } else {
        const cpu0 = cgroup.cpuMs();
        const figures = await simulateUsers(url, {}, SESSIONS.ours!, 50, SECONDS);
        cpuMs = cgroup.cpuMs() - cpu0;
        Object.assign(outcomes, figures.outcomes);
        answers = figures.operations;
        rps = figures.operations / SECONDS;
        p50 = Math.round(percentile(figures.latencies, 50));
        p99 = Math.round(percentile(figures.latencies, 99));
      }
    } catch (error) {
      // The gateway went away under load (killed, or out of heap): the row says so.
      failure = (error as Error).message;
    }
    clearInterval(sampler);
    // The high-water mark while the cgroup is there; the samples' highest otherwise (a killed container's is gone).
    const peak = Math.max(peakUsage, cgroup.peak() || 0);
    oomKills = Math.max(oomKills, cgroup.oomKills() || 0);
    const info = stateOf(gateway);
    if (failure || !info.State.Running)
      console.error(`${limit} ${heap} ${scenario}: ${failure}\n${logsOf(gateway).slice(-2000)}`);
    return {
      limit,
      heap,
      scenario,
      heapLimitMiB,
      idleMiB: idle / MiB,
      peakMiB: peak / MiB,
      peakAnonMiB: peakAnon / MiB,
      peakRssMiB: peakRss / MiB,
      oomKills,
      oomKilled: info.State.OOMKilled,
      running: info.State.Running && info.State.Pid === pid && info.RestartCount === 0,
      rps,
      p50,
      p99,
      answers,
      outcomes,
      // A killed container's cgroup is gone before its CPU time is read.
      cpuMsPerAnswer: answers > 0 && cpuMs > 0 ? cpuMs / answers : Number.NaN,
    };
  } finally {
    spawnSync('podman', ['--runtime', 'runc', 'rm', '--force', gateway], { stdio: 'ignore' });
    containers.delete(gateway);
  }
}

/** S4b's request bodies: one per 1000-record window of event 5001, found by walking it once. */
async function windows(url: string): Promise<string[]> {
  const cursors: (string | null)[] = [null];
  for (;;) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { pageInfo { hasNextPage endCursor } } } }`,
        variables: { after: cursors.at(-1) },
      }),
    });
    const page = (await res.json()) as {
      data: { event: { reservations: { pageInfo: { hasNextPage: boolean; endCursor: string } } } };
    };
    const info = page.data.event.reservations.pageInfo;
    if (!info.hasNextPage) break;
    cursors.push(info.endCursor);
  }
  return cursors.map((after) =>
    JSON.stringify({
      query: `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { edges { ${FIELDS} } } } }`,
      variables: { after },
    }),
  );
}
