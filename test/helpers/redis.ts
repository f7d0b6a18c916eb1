import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { findProgram, programOrSkip, type SystemProgram } from './system-program.ts';

export const REDIS_INSTALL_HINT =
  'no redis-server found: set REDIS_SERVER_PATH, or install it (Debian/Ubuntu: `apt-get install redis-server`)';

const REDIS_SERVER: SystemProgram = {
  tests: 'Redis',
  pathVariable: 'REDIS_SERVER_PATH',
  names: ['redis-server'],
  requireVariable: 'REQUIRE_REDIS',
  installHint: REDIS_INSTALL_HINT,
};

/** `REDIS_SERVER_PATH` when set, else `redis-server` on PATH; undefined when there is none. */
export function findRedisServer(env: Record<string, string | undefined> = process.env): string | undefined {
  return findProgram(REDIS_SERVER, env);
}

/**
 * Whether the Redis tests run: with redis-server yes; without it they are skipped with a message
 * saying how to install it, except under REQUIRE_REDIS=1 (CI), where a missing one fails.
 */
export function redisServerOrSkip(env: Record<string, string | undefined> = process.env): string | undefined {
  return programOrSkip(REDIS_SERVER, env);
}

/** A redis-server of the test's own, on a free loopback port, with no persistence, in a temp dir. */
export interface TestRedis {
  url: string;
  port: number;
  /**
   * Stops the server (its data is gone: nothing is saved); with `keep`, it saves its data as it
   * shuts down (SHUTDOWN SAVE), and the next start loads it: a Redis with persistence restarted.
   */
  stop(options?: { keep?: boolean }): Promise<void>;
  /** Starts it again on the same port: empty, unless the last stop kept its data. */
  start(): Promise<void>;
  /** A client of the test's own (closed by `stop`). */
  client(): Redis;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

export async function startRedis(serverPath: string): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-'));
  let child: ChildProcess | undefined;
  const clients: Redis[] = [];
  const url = `redis://127.0.0.1:${port}`;

  const start = async () => {
    child = spawn(
      serverPath,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    for (let attempt = 0; ; attempt++) {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (attempt > 100) throw new Error(`redis-server did not start on port ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  const dump = join(dir, 'dump.rdb');
  const stop = async ({ keep = false }: { keep?: boolean } = {}) => {
    for (const c of clients.splice(0)) c.disconnect();
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    if (keep) {
      const last = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      last.on('error', () => {});
      // No answer comes: the server saves, then closes every connection and exits.
      await last.call('SHUTDOWN', 'SAVE').catch(() => undefined);
      last.disconnect();
    } else {
      running.kill('SIGKILL');
      rmSync(dump, { force: true });
    }
    await exited;
  };
  await start();
  return {
    url,
    port,
    start,
    stop,
    client() {
      const c = new Redis(url, { maxRetriesPerRequest: 0 });
      c.on('error', () => {});
      clients.push(c);
      return c;
    },
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
