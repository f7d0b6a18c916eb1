import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { machine, RUNS, startProcess, stop, summary } from './lib.ts';

/**
 * `npm run bench -- start`: how long `npm start` takes to print "ready at" with a fresh dist/, and
 * the gateway's resident memory while idle, with UPSTREAM_BASE_URL set (an emulator in another
 * process) and with the embedded emulator (its demo data included, reported apart).
 *
 * Idle memory is read twice: 5 s after ready, and once V8's memory reducer has run on an idle
 * process (it gives back the young generation and start-up garbage after some 30 s without work).
 * BENCH_START_ENTRY runs another entry point instead (say, an older checkout's `--import tsx
 * src/main.ts`) for a before/after comparison.
 */
const SOON_S = 5;
const SETTLED_S = Number(process.env.BENCH_START_SETTLE_S ?? 40);
const entry = (process.env.BENCH_START_ENTRY ?? 'scripts/start.mjs').split(' ');

interface Sample {
  readyMs: number;
  rssSoonMiB: number;
  rssSettledMiB: number;
}

/** Resident memory of a process from /proc (Linux), in MiB. */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startOnce(env: Record<string, string | undefined>): Promise<Sample> {
  const started = performance.now();
  const child = spawn(process.execPath, entry, {
    env: { ...process.env, PORT: '0', OPS_PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const readyMs = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready at')) resolve(performance.now() - started);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited with ${code} before it was ready:\n${out}`)));
  });
  await sleep(SOON_S * 1000);
  const rssSoonMiB = rssMiB(child.pid!);
  await sleep((SETTLED_S - SOON_S) * 1000);
  const rssSettledMiB = rssMiB(child.pid!);
  await stop(child);
  return { readyMs, rssSoonMiB, rssSettledMiB };
}

// A fresh dist/ first: the figures are of starting, not of building.
if (entry[0] === 'scripts/start.mjs') spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });

const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
const modes = {
  'UPSTREAM_BASE_URL set': {
    UPSTREAM_BASE_URL: emulator.url,
    UPSTREAM_KEY: 'demo-key-1001',
    UPSTREAM_SYSTEM_IDENTIFIER: '1001',
  },
  'embedded emulator (demo data)': {
    UPSTREAM_BASE_URL: undefined,
    UPSTREAM_KEY: undefined,
    UPSTREAM_SYSTEM_IDENTIFIER: undefined,
  },
};
const results: [string, Sample[]][] = [];
try {
  for (const [mode, env] of Object.entries(modes)) {
    const samples: Sample[] = [];
    for (let run = 0; run < RUNS; run++) {
      const sample = await startOnce(env);
      console.error(
        `${mode}, run ${run + 1}: ready in ${sample.readyMs.toFixed(0)} ms, RSS ${sample.rssSoonMiB.toFixed(0)} MiB after ${SOON_S} s, ${sample.rssSettledMiB.toFixed(0)} MiB after ${SETTLED_S} s`,
      );
      samples.push(sample);
    }
    results.push([mode, samples]);
  }
} finally {
  await stop(emulator.child);
}

console.log(`### Start and idle memory (${machine()})

\`${['node', ...entry].join(' ')}\` with PORT=0, LOG_LEVEL=warn; ready = the "ready at" line; RSS from
/proc/<pid>/status. ${RUNS} runs, median (min–max). Load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}.

| mode | ready (ms) | idle RSS after ${SOON_S} s (MiB) | idle RSS after ${SETTLED_S} s (MiB) |
|---|---|---|---|
${results.map(([mode, samples]) => `| ${mode} | ${summary(samples.map((s) => s.readyMs))} | ${summary(samples.map((s) => s.rssSoonMiB))} | ${summary(samples.map((s) => s.rssSettledMiB))} |`).join('\n')}
`);
