import { createWriteStream, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRedisServer, REDIS_INSTALL_HINT, startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { freePort, type Started, stop } from '../lib.ts';
import { treeCpuMs } from './cpu.ts';
import { startEmulator } from './emulator.ts';
import { byConstructor, growth, type HeapCensus, takeSnapshot, totalBytes } from './heap.ts';
import { treeRssMiB } from './rss.ts';
import { checkSoak, emulatorLog, runSoak, SOAK_EVENTS, SOAK_FAULTS, type SoakVerdict } from './soak.ts';
import { startOurs } from './systems.ts';

/**
 * S9, the soak (issue 28): `minutes` of the S7 frontend mix (50 users), `subscribers` live
 * `reservationChanged` subscriptions coming and going (bench/compare/soak.ts), bookings at the
 * emulator, attendee pushes through the gateway, the emulator's faults on and its tokens revoked
 * every 2 minutes, two replicas on one Redis restarted halfway (one replica and no restart when
 * there is no redis-server). Each minute it samples each replica's RSS, open file descriptors,
 * CPU and event-loop delay (`gateway_event_loop_delay_seconds` on its operators' port).
 */

export const S9_POLL_MS = 2_000;

export interface MinuteSample {
  minute: number;
  rssMiB: number;
  fds: number;
  cpuPercent: number;
  /** gateway_event_loop_delay_seconds over the minute, in ms. */
  loopP99Ms: number;
  loopMaxMs: number;
}

export interface SoakFigures {
  minutes: number;
  users: number;
  subscribers: number;
  replicas: number;
  redisRestarted: boolean;
  /** Per replica, one sample a minute. */
  samples: MinuteSample[][];
  verdict: SoakVerdict;
  operations: number;
  operationOutcomes: { ok: number; rateLimited: number; errors: number; serverErrors: number; stale: number };
  bookings: number;
  revocations: number;
  faults: Record<string, number>;
  calls: number;
  /** Replica 1's heap at two minutes (the 10th and the last; the 1st and the last in a run under 10 min): what grew most. */
  heap?: {
    from: number;
    to: number;
    fromMiB: number;
    toMiB: number;
    top: { key: string; count: number; bytes: number }[];
  };
}

/** The minute of the first heap snapshot: the 10th, or the 1st in a run shorter than ten minutes. */
const firstSnapshotMinute = (minutes: number) => (minutes >= 10 ? 10 : 1);

function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

async function loopDelayMs(opsUrl: string): Promise<{ p99: number; max: number }> {
  try {
    const text = await (await fetch(`${opsUrl}/metrics`)).text();
    const read = (quantile: string) =>
      Number(
        new RegExp(
          `^gateway_event_loop_delay_seconds\\{quantile="${quantile.replace('.', '\\.')}"\\} (\\S+)$`,
          'm',
        ).exec(text)?.[1] ?? Number.NaN,
      ) * 1000;
    return { p99: read('0.99'), max: read('1') };
  } catch {
    return { p99: Number.NaN, max: Number.NaN };
  }
}

export async function simulateSoak(options: {
  minutes: number;
  subscribers: number;
  users: number;
  /** Heap snapshots of replica 1 (they stop it for seconds). */
  snapshots: boolean;
}): Promise<SoakFigures> {
  const serverPath = findRedisServer();
  if (!serverPath)
    console.error(`S9: ${REDIS_INSTALL_HINT}; running one replica on its memory stores, without the Redis restart`);
  const redis: TestRedis | undefined = serverPath ? await startRedis(serverPath) : undefined;
  const emulator = await startEmulator({ rateLimit: true });
  const replicas: { started: Started; opsUrl: string }[] = [];
  // Replica 1 writes a heap snapshot when asked (SIGUSR2), into a directory of the run's own.
  const snapshots = mkdtempSync(join(tmpdir(), 'soak-heap-'));
  const censuses = new Map<number, HeapCensus>();
  try {
    for (const n of redis ? [1, 2] : [1]) {
      const opsPort = await freePort();
      const started = await startOurs({
        UPSTREAM_BASE_URL: emulator.url,
        UPSTREAM_USER_AGENT: `soak-${n}`,
        OPS_PORT: String(opsPort),
        CHANGES_POLL_INTERVAL_MS: String(S9_POLL_MS),
        // One anonymous client holds every subscription here (slots shared across replicas on Redis).
        SUBSCRIPTIONS_PER_CLIENT: String(Math.min(10_000, options.subscribers + 100)),
        MAX_CONNECTIONS: String(Math.max(1024, options.subscribers + 200)),
        ...(redis ? { REDIS_URL: redis.url, REDIS_PREFIX: 'soak:' } : {}),
        ...(n === 1 && options.snapshots
          ? {
              NODE_OPTIONS:
                `${process.env.NODE_OPTIONS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}`.trim(),
            }
          : {}),
      });
      // BENCH_S9_LOGS=<dir>: each replica's log (stdout, at LOG_LEVEL warn) kept there as replica-<n>.log.
      if (process.env.BENCH_S9_LOGS)
        started.child.stdout?.pipe(createWriteStream(join(process.env.BENCH_S9_LOGS, `replica-${n}.log`)));
      replicas.push({ started, opsUrl: `http://127.0.0.1:${opsPort}` });
    }
    const pids = replicas.map((r) => r.started.child.pid!);
    const samples: MinuteSample[][] = replicas.map(() => []);
    const cpuAt = pids.map((pid) => ({ ms: treeCpuMs(pid), at: Date.now() }));
    // The delay histogram counts from the first scrape: one now, so that minute 1 is minute 1's.
    await Promise.all(replicas.map((r) => loopDelayMs(r.opsUrl)));
    const since = Date.now();
    let redisRestarted = false;
    const record = await runSoak({
      urls: replicas.map((r) => `${r.started.url}/graphql`),
      emulatorUrl: emulator.url,
      durationMs: options.minutes * 60_000,
      subscribers: options.subscribers,
      lifetimeMs: [30_000, 180_000],
      socketLifetimeMs: [120_000, 600_000],
      users: options.users,
      bookEveryMs: 2_000,
      writeEveryMs: 1_000,
      // Every 2 min, at least thrice in a short run.
      revokeEveryMs: Math.min(120_000, (options.minutes * 60_000) / 3),
      drainMs: 60_000,
      faults: SOAK_FAULTS,
      midway: redis
        ? {
            atMs: (options.minutes * 60_000) / 2,
            async run() {
              console.error('S9: restarting Redis');
              await redis.stop();
              await new Promise((resolve) => setTimeout(resolve, 2_000));
              await redis.start();
              redisRestarted = true;
            },
          }
        : undefined,
      everyMinute: async (minute) => {
        await Promise.all(
          replicas.map(async (replica, i) => {
            const pid = pids[i]!;
            const cpu = treeCpuMs(pid);
            const now = Date.now();
            const loop = await loopDelayMs(replica.opsUrl);
            samples[i]!.push({
              minute,
              rssMiB: treeRssMiB(pid),
              fds: openFds(pid),
              cpuPercent: ((cpu - cpuAt[i]!.ms) / (now - cpuAt[i]!.at)) * 100,
              loopP99Ms: loop.p99,
              loopMaxMs: loop.max,
            });
            cpuAt[i] = { ms: cpu, at: now };
          }),
        );
        // After the minute's samples: writing a snapshot stops replica 1 for seconds (its next minute's loop delay shows it).
        if (options.snapshots && (minute === firstSnapshotMinute(options.minutes) || minute === options.minutes)) {
          const file = await takeSnapshot(pids[0]!, snapshots);
          censuses.set(minute, byConstructor(file));
          rmSync(file, { force: true });
        }
        const last = samples.map((s) => s.at(-1)!);
        console.error(
          `S9 minute ${minute}: ${last.map((s) => `RSS ${s.rssMiB.toFixed(0)} MiB, ${s.fds} fds, CPU ${s.cpuPercent.toFixed(0)} %, loop p99 ${s.loopP99Ms.toFixed(0)} ms`).join(' | ')}`,
        );
      },
      tag: `bench${since}`,
    });
    const log = await emulatorLog(emulator.url, since);
    const verdict = checkSoak(record, log);
    const faults: Record<string, number> = {};
    for (const call of log) if (call.fault) faults[call.fault] = (faults[call.fault] ?? 0) + 1;
    const from = firstSnapshotMinute(options.minutes);
    const before = censuses.get(from);
    const after = censuses.get(options.minutes);
    const heap =
      before && after && from !== options.minutes
        ? {
            from,
            to: options.minutes,
            fromMiB: totalBytes(before) / 1048576,
            toMiB: totalBytes(after) / 1048576,
            top: growth(before, after, 10),
          }
        : undefined;
    return {
      heap,
      minutes: options.minutes,
      users: options.users,
      subscribers: options.subscribers,
      replicas: replicas.length,
      redisRestarted,
      samples,
      verdict,
      operations: record.operations,
      operationOutcomes: record.operationOutcomes,
      bookings: record.bookings.length,
      revocations: record.revocations,
      faults,
      calls: log.length,
    };
  } finally {
    for (const replica of replicas) await stop(replica.started.child);
    await emulator.close();
    await redis?.close();
    rmSync(snapshots, { recursive: true, force: true });
  }
}

/** The minute RSS growth is measured from: the fifth, or the first in a run shorter than ten minutes. */
export const baselineMinute = (minutes: number) => (minutes >= 10 ? 5 : 1);

const series = (values: readonly number[], digits = 0) => values.map((v) => v.toFixed(digits)).join(', ');

/** The S9 report: what was done, the checks, and each replica's minute-by-minute figures. */
export function soakReport(f: SoakFigures): string {
  const v = f.verdict;
  const from = baselineMinute(f.minutes);
  const rows: [string, string][] = [
    [
      'replicas, S7 users, subscribers live at a time, minutes',
      `${f.replicas}${f.replicas === 2 ? ' on one Redis' : ' (no redis-server)'}, ${f.users}, ${f.subscribers}, ${f.minutes}`,
    ],
    ['Redis restarted halfway', f.redisRestarted ? 'yes' : 'no'],
    [
      'subscriptions made (SSE + graphql-ws) / ended by the gateway',
      `${v.subscribers} / ${Object.values(v.endedByGateway).reduce((a, b) => a + b, 0)}${
        Object.keys(v.endedByGateway).length
          ? ` (${Object.entries(v.endedByGateway)
              .map(([reason, n]) => `${n} ${reason}`)
              .join('; ')})`
          : ''
      }`,
    ],
    ['changes owed to subscribers / missed', `${v.owed} / ${v.missed}`],
    [
      'missed: told to no subscriber / on the other replica only / to others on the same replica',
      `${v.missedWhere.toldNobody} / ${v.missedWhere.otherReplicaOnly} / ${v.missedWhere.sameReplica}`,
    ],
    ['bookings at the emulator', String(f.bookings)],
    [
      'writes (upsertAttendee): answered / refused / unanswered',
      `${v.answered} / ${v.refused} / ${v.unanswered} of ${v.writes}`,
    ],
    ['writes lost / applied twice / refused yet applied', `${v.lost} / ${v.twice} / ${v.refusedButApplied}`],
    [
      'S7 operations: data (of which stale) / RATE_LIMITED / other errors',
      `${f.operationOutcomes.ok} (${f.operationOutcomes.stale}) / ${f.operationOutcomes.rateLimited} / ${f.operationOutcomes.errors} of ${f.operations}`,
    ],
    ['answers that were a 5xx or INTERNAL_SERVER_ERROR', String(v.serverErrors.length)],
    ['S7 queries that got no answer (their connection failed)', String(v.noAnswer.length)],
    [
      'faults injected (of the calls the emulator logged) / token revocations',
      `${Object.entries(f.faults)
        .map(([kind, n]) => `${n} ${kind}`)
        .join(', ')} of ${f.calls} / ${f.revocations}`,
    ],
  ];
  f.samples.forEach((s, i) => {
    const rss = s.map((m) => m.rssMiB);
    const base = s.find((m) => m.minute === from)?.rssMiB;
    const growth = base && s.length ? ((rss.at(-1)! - base) / base) * 100 : Number.NaN;
    rows.push(
      [`replica ${i + 1}: RSS by minute (MiB)`, series(rss)],
      [`replica ${i + 1}: RSS growth from minute ${from} to the end`, `${growth.toFixed(1)} %`],
      [`replica ${i + 1}: open fds by minute`, series(s.map((m) => m.fds))],
      [`replica ${i + 1}: event-loop delay p99 by minute (ms)`, series(s.map((m) => m.loopP99Ms))],
      [`replica ${i + 1}: event-loop delay max by minute (ms)`, series(s.map((m) => m.loopMaxMs))],
      [`replica ${i + 1}: CPU by minute (% of a core)`, series(s.map((m) => m.cpuPercent))],
    );
  });
  if (f.heap)
    rows.push([
      `replica 1: heap at minute ${f.heap.from} → ${f.heap.to} (MiB, a snapshot's reachable objects); grew most`,
      `${f.heap.fromMiB.toFixed(1)} → ${f.heap.toMiB.toFixed(1)}; ${f.heap.top
        .filter((t) => t.bytes > 0)
        .map(
          (t) =>
            `${t.key.trim()} ${t.bytes >= 0 ? '+' : ''}${(t.bytes / 1024).toFixed(0)} KiB (${t.count >= 0 ? '+' : ''}${t.count})`,
        )
        .join(', ')}`,
    ]);
  const lines = [
    '| S9 | ours |',
    '|---|---|',
    ...rows.map(([label, value]) => `| ${label} | ${value.replace(/\|/g, '\\|')} |`),
  ];
  const notes = [
    ...v.missedExamples.map((m) => `- missed: ${m}`),
    ...v.serverErrors.slice(0, 5).map((e) => `- 5xx/INTERNAL_SERVER_ERROR: ${e}`),
    ...v.noAnswer.slice(0, 5).map((e) => `- no answer: ${e}`),
  ];
  return `${lines.join('\n')}${notes.length ? `\n\n${notes.join('\n')}` : ''}`;
}

export const S9_DESCRIPTION = `S9, the soak: the S7 mix over events ${SOAK_EVENTS.join(', ')}, subscribers coming and going (each subscription lives 30 s to 3 min; half SSE, half graphql-ws ten a socket, each socket living 2 to 10 min), a booking at the emulator every 2 s, an \`upsertAttendee\` through the gateway every second, the emulator's faults on (${JSON.stringify(SOAK_FAULTS.rules[0])}), its tokens revoked every 2 min, its real 240/min limit, two replicas on one Redis restarted halfway, polled every ${S9_POLL_MS / 1000} s; replica 1 writes a heap snapshot at minute 10 (minute 1 in a run under 10 minutes) and at the last, which stops it for seconds. A change is owed to a subscriber when booked after it was accepted and answered before it left; a leaving subscriber waits up to 60 s for what it is owed. A write is lost when answered yet never applied (the emulator's log: \`postattendee\` answered 2xx with no fault), twice when applied more than once`;
