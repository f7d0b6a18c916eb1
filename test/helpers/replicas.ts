import { type ChildProcess, spawn } from 'node:child_process';
import { FREE_PORTS, GATEWAY_MAIN, ROOT } from './built-gateway.ts';

/** A gateway in a process of its own (`node dist/main.js`, the compiled gateway), as a replica runs in production. */
export interface Replica {
  /** Its /graphql address. */
  url: string;
  /** Its operators' port's origin (OPS_PORT: /metrics, /status, /status.json, /health, /ready). */
  opsUrl: string;
  /** Its process id. */
  pid: number;
  /** Everything it wrote to stdout and stderr so far (pino lines and the ready line). */
  output(): string;
  /** Asks it to stop (SIGTERM) and waits until it has. */
  stop(): Promise<void>;
  /** Ends it at once (SIGKILL), as a crash would: nothing is released. */
  kill(): Promise<void>;
}

/** Starts the compiled gateway on free ports (PORT and OPS_PORT 0) with `env` added; resolves once it says it is ready. */
export function startReplica(env: Record<string, string>): Promise<Replica> {
  const child: ChildProcess = spawn(process.execPath, [GATEWAY_MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', ...FREE_PORTS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /Reservation gateway ready at (\S+) /.exec(output);
      const ops = /Operators' pages at (http:\/\/\S+)\/status /.exec(output);
      if (!ready || !ops) return;
      child.stdout!.off('data', onData);
      child.stdout!.on('data', (more: Buffer) => void (output += more.toString()));
      resolve({
        url: ready[1]!,
        opsUrl: ops[1]!,
        pid: child.pid!,
        output: () => output,
        async stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
        async kill() {
          if (child.exitCode === null) child.kill('SIGKILL');
          await exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`the replica exited with ${code} before it was ready:\n${output}`)));
  });
}

/**
 * Three replicas of licensee 1001 on one emulator and one Redis, each with its own
 * `UPSTREAM_USER_AGENT` (replica-1..3), so that the emulator's log tells them apart.
 */
export function startThreeReplicas(
  upstreamUrl: string,
  redisUrl: string,
  prefix: string,
  env: Record<string, string> = {},
): Promise<Replica[]> {
  return startReplicas(3, upstreamUrl, redisUrl, prefix, env);
}

/** `count` replicas of licensee 1001 on one emulator and one Redis, told apart as replica-1, replica-2… */
export function startReplicas(
  count: number,
  upstreamUrl: string,
  redisUrl: string,
  prefix: string,
  env: Record<string, string> = {},
): Promise<Replica[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      startReplica({
        UPSTREAM_BASE_URL: upstreamUrl,
        UPSTREAM_KEY: 'demo-key-1001',
        UPSTREAM_SYSTEM_IDENTIFIER: '1001',
        UPSTREAM_USER_AGENT: `replica-${i + 1}`,
        REDIS_URL: redisUrl,
        REDIS_PREFIX: prefix,
        ...env,
      }),
    ),
  );
}

export interface Answer {
  status: number;
  body: { data?: unknown; errors?: { extensions?: { code?: string; retryAfterSeconds?: number } }[] };
}

/** Posts one GraphQL document to a replica. */
export async function post(url: string, query: string, variables: Record<string, unknown> = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}
