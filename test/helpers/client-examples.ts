import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The client examples (examples/clients): a package of their own, with their own lock, installed
 * into their own node_modules by `npm ci` there. Their programs run as a team would run them,
 * `node --import tsx <program>` in that folder (the repository's tsx, found up the tree).
 */
export const CLIENTS_DIR = new URL('../../examples/clients/', import.meta.url).pathname;

type Env = Record<string, string | undefined>;

/** CI (CI set, or REQUIRE_CLIENT_EXAMPLES=1 as .ci/run sets): the examples must be installed and run. */
const required = (env: Env) => Boolean(env.CI) || env.REQUIRE_CLIENT_EXAMPLES === '1';

/**
 * Whether the client tests run: yes when the examples are installed, in CI, or when the registry
 * answers (`npm ci` will install them); otherwise they are skipped with a message saying why.
 */
export function clientExamplesOrSkip(env: Env = process.env): boolean {
  if (existsSync(join(CLIENTS_DIR, 'node_modules')) || required(env)) return true;
  if (
    spawnSync('npm', ['ping', '--fetch-retries=0', '--fetch-timeout=5000'], {
      cwd: CLIENTS_DIR,
      env: npmEnv(),
      stdio: 'ignore',
      timeout: 15_000,
    }).status === 0
  )
    return true;
  console.warn(
    'Skipping the client example tests: examples/clients/node_modules is missing and the npm registry cannot be reached (run `npm ci` in examples/clients once it can)',
  );
  return false;
}

/**
 * `npm ci --prefer-offline` in examples/clients (packages from npm's cache when it has them, so a
 * CI cache of ~/.npm makes it quick). Outside CI it is left out when node_modules already holds
 * exactly the lock's packages.
 */
export function installClientExamples(env: Env = process.env): void {
  if (!required(env) && installedFromLock()) return;
  const result = spawnSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: CLIENTS_DIR,
    env: npmEnv(),
    encoding: 'utf8',
    timeout: 280_000,
  });
  if (result.status !== 0)
    throw new Error(
      `npm ci in examples/clients failed (${result.status ?? result.signal}):\n${(result.stdout + result.stderr).slice(-3000)}`,
    );
}

/** Whether node_modules holds the lock's packages, at the lock's versions (npm's own record of what it installed). */
function installedFromLock(): boolean {
  const installed = join(CLIENTS_DIR, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) return false;
  type Lock = { packages: Record<string, { version?: string; optional?: boolean; peer?: boolean }> };
  const wanted = (JSON.parse(readFileSync(join(CLIENTS_DIR, 'package-lock.json'), 'utf8')) as Lock).packages;
  const have = (JSON.parse(readFileSync(installed, 'utf8')) as Lock).packages;
  return Object.entries(wanted).every(
    ([path, entry]) => path === '' || entry.optional || entry.peer || have[path]?.version === entry.version,
  );
}

/**
 * The environment of npm and the programs: this process's, without what `npm test` adds for the
 * repository's own package (its prefix and package fields), which would point npm at the root.
 */
function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^npm_(package_|lifecycle_|config_local_prefix$|config_prefix$)/.test(name),
    ),
  );
  return { ...env, ...extra };
}

/** Runs a script of examples/clients' package.json; throws with its output when it fails. */
export function runScript(script: string): string {
  const result = spawnSync('npm', ['run', '--silent', script], {
    cwd: CLIENTS_DIR,
    env: npmEnv(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0)
    throw new Error(
      `npm run ${script} in examples/clients failed (${result.status ?? result.signal}):\n${(result.stdout + result.stderr).slice(-3000)}`,
    );
  return result.stdout + result.stderr;
}

/** Runs an example program to its end and returns the JSON it printed last. */
export function runProgram<T>(program: string, env: Record<string, string>): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', program], {
      cwd: CLIENTS_DIR,
      env: npmEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const last = stdout.trim().split('\n').at(-1);
      if (code !== 0 || !last) return reject(new Error(`${program} exited with ${code}:\n${stderr.slice(-3000)}`));
      resolve(JSON.parse(last) as T);
    });
  });
}

/** A long-running example program (a subscriber): the JSON lines it printed so far. */
export interface RunningProgram<T> {
  lines: T[];
  /** Output on stderr so far (for failure messages). */
  errors(): string;
  stop(): Promise<void>;
}

export function startProgram<T>(program: string, env: Record<string, string>): RunningProgram<T> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', program], {
    cwd: CLIENTS_DIR,
    env: npmEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: T[] = [];
  let pending = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    let end: number;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end).trim();
      pending = pending.slice(end + 1);
      if (line) lines.push(JSON.parse(line) as T);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    lines,
    errors: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const late = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(late);
    },
  };
}
