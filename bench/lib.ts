import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { cpus } from 'node:os';
import autocannon from 'autocannon';

/** Shared pieces of the benchmarks: how docs/benchmarking.md says every figure is measured. */

export const WARMUP_S = 3;
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);

export interface Started {
  child: ChildProcess;
  url: string;
  startupMs: number;
}

/** Starts a TypeScript entry point in its own process and waits for the URL it prints. */
export function startProcess(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  pattern = /(http:\/\/127\.0\.0\.1:\d+)/,
): Promise<Started> {
  return startCommand(['--import', 'tsx', entry, ...args], { env, pattern });
}

/** Starts `node <args>` (in `cwd`) and waits for the URL it prints or, given `waitFor`, for that URL to answer 2xx. */
export function startCommand(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; pattern?: RegExp; waitFor?: string },
): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const pattern = options.pattern ?? /(http:\/\/127\.0\.0\.1:\d+)/;
  return new Promise((resolve, reject) => {
    let out = '';
    let done = false;
    const ready = (url: string) => {
      if (done) return;
      done = true;
      resolve({ child, url, startupMs: performance.now() - t0 });
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = options.waitFor ? null : pattern.exec(out);
      if (m) ready(m[1]!);
    });
    child.once('exit', (code) => {
      if (!done) reject(new Error(`node ${args.join(' ')} exited with ${code} before it listened:\n${out}`));
      done = true;
    });
    if (options.waitFor)
      void poll(options.waitFor, () => done).then((ok) => ok && ready(new URL(options.waitFor!).origin));
  });
}

/** Asks `url` every 100 ms until it answers 2xx or `gaveUp()`; true when it did. */
async function poll(url: string, gaveUp: () => boolean): Promise<boolean> {
  while (!gaveUp()) {
    try {
      if ((await fetch(url)).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** A TCP port free right now on 127.0.0.1 (for servers that cannot listen on port 0 and say where). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** One measurement: a warm-up, then DURATION_S seconds of load; keep-alive on, no pipelining. */
export async function load(options: autocannon.Options): Promise<LoadResult> {
  await autocannon({ ...options, duration: WARMUP_S });
  const r = await autocannon({ ...options, duration: DURATION_S });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function summary(values: number[], digits = 0): string {
  return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

export function machine(): string {
  let commit = 'uncommitted';
  try {
    commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  return `${new Date().toISOString().slice(0, 10)}, commit ${commit}, nproc ${cpus().length}, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
}

export async function authenticate(url: string, licensee = '1001'): Promise<string> {
  const res = await fetch(`${url}/api/v102/authenticate`, {
    method: 'POST',
    headers: { 'user-agent': 'bench/1', 'content-type': 'application/x-www-form-urlencoded' },
    body: `key=demo-key-${licensee}&systemIdentifier=${licensee}`,
  });
  return ((await res.json()) as { token: string }).token;
}

/**
 * The gateway as `npm start` runs it (dist/, rebuilt first when stale) over an emulator, with the
 * rate limit lifted: figures measure the gateway, not the budget.
 */
export function startBenchGateway(upstreamUrl: string, env: Record<string, string> = {}): Promise<Started> {
  const settings = {
    PORT: '0',
    OPS_PORT: '0',
    LOG_LEVEL: 'warn',
    UPSTREAM_BASE_URL: upstreamUrl,
    UPSTREAM_KEY: 'demo-key-1001',
    UPSTREAM_SYSTEM_IDENTIFIER: '1001',
    UPSTREAM_RATE_LIMIT: '100000',
  };
  return startCommand(['scripts/start.mjs'], {
    env: { ...settings, ...env },
    pattern: /ready at (http:\/\/127\.0\.0\.1:\d+)\/graphql/,
  });
}

/**
 * The `data` of each message of a GraphQL-over-SSE response body, in order, as it arrives (messages
 * without data, such as pings, left out). Ends with the stream; throws when it fails.
 */
export async function* sseData(body: NonNullable<Response['body']>): AsyncGenerator<string> {
  let text = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
      const message = text.slice(0, end);
      text = text.slice(end + 2);
      const data = message
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (data) yield data;
    }
  }
}
