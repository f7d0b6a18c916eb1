import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import type { LogEntry } from '../../src/emulator/state.ts';
import { FREE_PORTS, GATEWAY_MAIN, ROOT } from '../helpers/built-gateway.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { type Answer, post, type Replica, startThreeReplicas } from '../helpers/replicas.ts';
import { until } from '../helpers/subscriptions.ts';

const serverPath = redisServerOrSkip();

/** A short real window on both sides, so that three windows of load fit a test of seconds. */
const LIMIT = 30;
const WINDOW_MS = 2_000;
/** What the three replicas may send together per window: the limit less the 5 % margin. */
const BUDGET = Math.floor(LIMIT * 0.95);
const RESERVATION =
  'query ($n: Int!) { event(eventId: 5002) { reservation(reservationNumber: $n) { reservationNumber } } }';

/** Three gateway processes on one Redis and one emulator behave as one budget and one token. */
describe.skipIf(!serverPath)('three replicas on one Redis', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  let replicas: Replica[] = [];
  let runs = 0;

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
  });
  afterEach(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    replicas = [];
    await emulator?.close();
  });
  afterAll(async () => {
    await redis?.close();
  });

  async function startAll(): Promise<void> {
    emulator = await startEmulator({ port: 0, rateLimit: LIMIT, rateWindowMs: WINDOW_MS });
    const prefix = `run${++runs}:`;
    replicas = await startThreeReplicas(emulator.url, redis.url, prefix, {
      UPSTREAM_RATE_LIMIT: String(LIMIT),
      UPSTREAM_RATE_WINDOW_MS: String(WINDOW_MS),
      UPSTREAM_DEADLINE_MS: '1500',
      LOG_LEVEL: 'info',
    });
  }

  /** Distinct reservations, 3 × the budget per window, spread evenly over `windows` windows, round robin over the replicas. */
  async function load(windows: number, during?: (elapsedMs: number) => void): Promise<Answer[]> {
    const total = 3 * BUDGET * windows;
    const gapMs = (WINDOW_MS * windows) / total;
    const started = Date.now();
    const answers: Promise<Answer>[] = [];
    for (let i = 0; i < total; i++) {
      const waitMs = started + i * gapMs - Date.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      during?.(Date.now() - started);
      answers.push(post(replicas[i % 3]!.url, RESERVATION, { n: 700_000 + runs * 10_000 + i }));
    }
    return Promise.all(answers);
  }

  it('under 3 × the budget for three windows: never over the limit in any window, no 429, one authenticate, no 5xx, the rest RATE_LIMITED', async () => {
    await startAll();
    const answers = await load(3);

    const log = emulator.state.log;
    expect(busiest(log, WINDOW_MS)).toBeLessThanOrEqual(LIMIT);
    expect(log.filter((entry) => entry.status === 429)).toEqual([]);
    expect(log.filter((entry) => entry.endpoint === 'authenticate')).toHaveLength(1);
    // The emulator's log tells the replicas apart: each of them sent calls.
    expect(new Set(log.map((entry) => entry.userAgent))).toEqual(new Set(['replica-1', 'replica-2', 'replica-3']));
    expectOnlyDataOrRateLimited(answers);
    // Every call sent served a client (none was wasted), at least the first window's worth (less
    // the authenticate and each replica's getevent); how many later windows serve is the machine's timing.
    const served = answers.filter((answer) => !answer.body.errors).length;
    expect(served).toBe(log.filter((entry) => entry.endpoint === 'getreservation').length);
    expect(served).toBeGreaterThanOrEqual(BUDGET - 4);
  }, 60_000);

  it('with Redis stopped for a whole window mid-load: no 5xx, each replica within its share meanwhile, all back on Redis after', async () => {
    await startAll();
    let stoppedAt = Infinity;
    let startedAt = Infinity;
    const outage: Promise<void>[] = [];
    const answers = await load(4, (elapsedMs) => {
      if (elapsedMs >= WINDOW_MS && stoppedAt === Infinity) {
        stoppedAt = Date.now();
        outage.push(redis.stop());
      }
      if (elapsedMs >= 2.25 * WINDOW_MS && startedAt === Infinity) {
        startedAt = Date.now();
        outage.push(outage[0]!.then(() => redis.start()));
      }
    });
    await Promise.all(outage);
    // Once back, every replica returns to Redis on its own (reconnection, then its sends written back).
    const budgetBack = /"component":"redis".*Redis reachable again/;
    await until(() => replicas.every((replica) => budgetBack.test(replica.output())), 15_000);

    expectOnlyDataOrRateLimited(answers);
    for (const replica of replicas) {
      // The rate budget's lines (component redis): the webhook dispatcher logs its own loss and return.
      const redisLines = replica
        .output()
        .split('\n')
        .filter((line) => line.includes('Redis') && line.includes('"component":"redis"'));
      const count = (phrase: string) => redisLines.filter((line) => line.includes(phrase)).length;
      expect(count('Redis unreachable'), redisLines.join('\n')).toBe(1);
      expect(count('Redis reachable again'), redisLines.join('\n')).toBe(1);
    }
    // While Redis was away, each replica kept to its share (1/3 of the budget) in every window.
    const away = emulator.state.log.filter(
      (entry) => Date.parse(entry.at) > stoppedAt + 100 && Date.parse(entry.at) < startedAt,
    );
    for (const n of [1, 2, 3])
      expect(
        busiest(
          away.filter((entry) => entry.userAgent === `replica-${n}`),
          WINDOW_MS,
        ),
      ).toBeLessThanOrEqual(Math.floor(BUDGET / 3));
    expect(emulator.state.log.filter((entry) => entry.endpoint === 'authenticate')).toHaveLength(1);
  }, 60_000);
});

describe.skipIf(!serverPath)('a replica whose Redis cannot be reached at start', () => {
  it('says so naming REDIS_URL (password hidden) and exits 2 within 10 s', async () => {
    const child = spawn(process.execPath, [GATEWAY_MAIN], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...FREE_PORTS, REDIS_URL: 'redis://:hunter2@127.0.0.1:1', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(output).toContain('REDIS_URL: cannot reach Redis at redis://:***@127.0.0.1:1');
    expect(output).not.toContain('hunter2');
  }, 15_000);
});

/** Clients see data, or RATE_LIMITED with a time to come back: never a 5xx, never another error. */
function expectOnlyDataOrRateLimited(answers: Answer[]): void {
  expect(answers.filter((answer) => answer.status >= 500)).toEqual([]);
  const failures = answers.flatMap((answer) => answer.body.errors ?? []);
  for (const error of failures)
    expect(error.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) });
}

/** The most calls the log holds inside any rolling window. */
function busiest(log: readonly LogEntry[], windowMs: number): number {
  const times = log.map((entry) => Date.parse(entry.at)).sort((a, b) => a - b);
  let most = 0;
  for (let end = 0, start = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
