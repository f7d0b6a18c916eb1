import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { compareChart } from './compare/chart.ts';
import { treeCpuMs } from './compare/cpu.ts';
import {
  busiestMinute,
  type Emulator,
  type LoggedRequest,
  refused429,
  served,
  startEmulator,
} from './compare/emulator.ts';
import { fixedAmount, measure } from './compare/load.ts';
import { part, replaceBetweenMarkers, replaceParts } from './compare/markdown.ts';
import { goals, goalTable, loadTable, sessionTable, tableTable, walkTable } from './compare/report.ts';
import {
  emptyLoadCell,
  emptyResults,
  emptySessionCell,
  emptyTableCell,
  emptyWalkCell,
  type Results,
  type SessionCell,
  type TableCell,
} from './compare/results.ts';
import { sampleRss, treeRssMiB } from './compare/rss.ts';
import { percentile, SESSIONS, type SessionFigures, simulateUsers } from './compare/s6.ts';
import { hotelsOf, S7_EVENTS, simulateTables } from './compare/s7.ts';
import { S8_EVENTS, S8_POLL_MS, type SubscriberFigures, simulateSubscribers, subscriberTable } from './compare/s8.ts';
import { S9_DESCRIPTION, type SoakFigures, simulateSoak, soakReport } from './compare/s9.ts';
import { DEFAULT_POLL_MS, S10_DESCRIPTION, simulateLiveEvent } from './compare/s10.ts';
import { type LiveEventRun, liveEventGoals, liveEventTable } from './compare/s10-report.ts';
import { LOAD_SCENARIOS, type LoadScenario, S5 } from './compare/scenarios.ts';
import { streamWalk, WARM_EVENT } from './compare/stream.ts';
import {
  composeMesh,
  installPeer,
  type SystemName,
  startCeiling,
  startMesh,
  startNaive,
  startOurs,
} from './compare/systems.ts';
import { DURATION_S, machine, RUNS, type Started, stop, WARMUP_S } from './lib.ts';

/**
 * `npm run bench -- compare [--only S1,S5] [--systems ours,naive]`: the side-by-side run (docs/development.md, "Benchmarks").
 * Every system against a fresh emulator of its own per scenario (the emulator's page cache, rate
 * window and request log then hold that system's traffic only), systems in a rotating order from
 * run to run; upstream calls counted from the emulator's log. Writes the tables between the
 * compare markers of docs/benchmarks.md and the chart to docs/images/compare.svg.
 */

const ALL_SCENARIOS = ['S1', 'S2', 'S3', 'S4', 'S4b', 'S5', 'S5-stream', 'S6', 'S7', 'S8', 'S9', 'S10'];
const ALL_SYSTEMS: SystemName[] = ['ours', 'ours-cache-off', 'naive', 'mesh', 'ceiling', 'direct'];
const S6_SECONDS = Number(process.env.BENCH_S6_SECONDS ?? 150);
const S6_USERS = 50;
const S7_SECONDS = Number(process.env.BENCH_S7_SECONDS ?? 150);
const S7_USERS = 50;
/** S8: live subscriptions (half SSE, half graphql-ws), idle seconds, bookings per event. */
const S8_SUBSCRIBERS = Number(process.env.BENCH_S8_SUBSCRIBERS ?? 300);
const S8_IDLE_S = Number(process.env.BENCH_S8_IDLE_S ?? 20);
const S8_BOOKINGS = Number(process.env.BENCH_S8_BOOKINGS ?? 2);
/** S9, the soak: live subscribers at a time, minutes, S7 users. */
const S9_SUBSCRIBERS = Number(process.env.BENCH_S9_SUBSCRIBERS ?? 1000);
const S9_MINUTES = Number(process.env.BENCH_S9_MINUTES ?? 30);
const S9_USERS = Number(process.env.BENCH_S9_USERS ?? 50);
/** BENCH_S9_SNAPSHOTS=0: no heap snapshots (each stops replica 1 for seconds). */
const S9_SNAPSHOTS = process.env.BENCH_S9_SNAPSHOTS !== '0';
/** S10, the live event: seconds, users; the feeds' poll (the gateway's default unless set), the freshness check's margin. */
const S10_SECONDS = Number(process.env.BENCH_S10_SECONDS ?? 120);
const S10_USERS = Number(process.env.BENCH_S10_USERS ?? 30);
const S10_POLL_MS = process.env.BENCH_S10_POLL_MS ? Number(process.env.BENCH_S10_POLL_MS) : undefined;
const S10_MARGIN_MS = Number(process.env.BENCH_S10_MARGIN_MS ?? 1_000);
/** Requests (over 10 connections) whose upstream calls give "calls per op under load". */
const CALLS_SAMPLE = 40;
const CLIENT_AUTHENTICATES: SystemName[] = ['mesh', 'direct'];

const firstFlag = process.argv.findIndex((a) => a.startsWith('--'));
const { values: flags } = parseArgs({
  args: firstFlag === -1 ? [] : process.argv.slice(firstFlag),
  options: { only: { type: 'string' }, systems: { type: 'string' } },
});
const only = listFlag('only', flags.only, ALL_SCENARIOS);
const systems = listFlag('systems', flags.systems, ALL_SYSTEMS) as SystemName[];

function listFlag(name: string, value: string | undefined, allowed: readonly string[]): string[] {
  if (value === undefined) return [...allowed];
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = list.filter((s) => !allowed.includes(s));
  if (unknown.length || !list.length) {
    console.error(`--${name} takes a comma-separated list of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return list;
}

const loadScenarios = LOAD_SCENARIOS.filter((s) => only.includes(s.id));
const runsOf = (scenario: LoadScenario) => systems.filter((s) => scenario.targets[s]);
const walkSystems = only.includes('S5') ? systems.filter((s) => S5.walks[s]) : [];
const streamOn = only.includes('S5-stream') && systems.includes('ours');
const sessionSystems = only.includes('S6') ? systems.filter((s) => SESSIONS[s]) : [];
// S7 runs for ours alone: the naive peer takes no filter, and S7 is not written in Mesh's GraphQL yet.
const tablesOn = only.includes('S7') && systems.includes('ours');
// S8 measures ours alone: the peers have no subscriptions.
const subscribersOn = only.includes('S8') && systems.includes('ours');
const subscriberRuns: SubscriberFigures[] = [];
// S9 soaks ours alone, once whatever BENCH_RUNS says (half an hour a run).
const soakOn = only.includes('S9') && systems.includes('ours');
const soakRuns: SoakFigures[] = [];
// S10 measures ours alone: the peers have no subscriptions, no filters and no stale marks.
const liveEventOn = only.includes('S10') && systems.includes('ours');
const liveEventRuns: LiveEventRun[] = [];

// Start-up figures measured on this machine (emulator with full demo data ~2.5 s, ours ~5 s under tsx).
const startS = (s: SystemName) =>
  2.5 + ({ ours: 5, 'ours-cache-off': 5, mesh: 4, naive: 1, ceiling: 1, direct: 0 } as const)[s];
const perRunS =
  loadScenarios.reduce(
    (sum, sc) => sum + runsOf(sc).reduce((t, s) => t + startS(s) + 5 + 2 * (WARMUP_S + DURATION_S), 0),
    0,
  ) +
  walkSystems.reduce((t, s) => t + startS(s) + 6, 0) +
  (streamOn ? startS('ours') + 6 : 0) +
  sessionSystems.reduce((t, s) => t + startS(s) + S6_SECONDS + 3, 0) +
  (tablesOn ? startS('ours') + S7_SECONDS + 3 : 0) +
  (subscribersOn ? startS('ours') + 25 + S8_IDLE_S + 3 * S8_BOOKINGS * 2 + 5 : 0) +
  (liveEventOn ? startS('ours') + 10 + S10_SECONDS + 5 : 0);
const soakS = soakOn ? 2.5 + 2 * startS('ours') + S9_MINUTES * 60 + 60 : 0;
console.error(
  `compare: ${only.join(', ')} × ${systems.join(', ')}, ${RUNS} run(s); estimated ${Math.ceil((perRunS * RUNS + soakS) / 60)} min (${Math.round(perRunS)} s a run${soakOn ? `, S9 once: ${Math.round(soakS)} s` : ''})`,
);

for (const peer of ['naive', 'mesh', 'ceiling'] as const) if (systems.includes(peer)) installPeer(peer);
if (systems.includes('mesh')) composeMesh();

const results: Results = emptyResults({
  durationS: DURATION_S,
  warmupS: WARMUP_S,
  s6Seconds: S6_SECONDS,
  s6Users: S6_USERS,
  s7Seconds: S7_SECONDS,
  s7Users: S7_USERS,
});

/** Starts a system against the emulator; `direct` has no process of its own. */
async function startSystem(
  system: SystemName,
  emulator: Emulator,
  env: Record<string, string>,
): Promise<Started | null> {
  switch (system) {
    case 'ours':
    case 'ours-cache-off':
      return startOurs({ UPSTREAM_BASE_URL: emulator.url, ...env });
    case 'naive':
      return startNaive(emulator.url);
    case 'mesh':
      return startMesh(emulator.url);
    case 'ceiling':
      return startCeiling();
    case 'direct':
      return null;
  }
}

/** Rate limits lifted on both sides for S1–S5, so the figures measure the systems, not the budget. */
const unlimited = (system: SystemName): Record<string, string> =>
  system === 'ours'
    ? { UPSTREAM_RATE_LIMIT: '100000' }
    : system === 'ours-cache-off'
      ? { UPSTREAM_RATE_LIMIT: '100000', RESPONSE_CACHE: 'off' }
      : {};

async function withSystem<T>(
  system: SystemName,
  rateLimit: boolean,
  env: Record<string, string>,
  body: (url: string, emulator: Emulator, started: Started | null) => Promise<T>,
): Promise<T> {
  const emulator = await startEmulator({ rateLimit });
  let started: Started | null = null;
  try {
    started = await startSystem(system, emulator, env);
    return await body(started ? `${started.url}/graphql` : '', emulator, started);
  } finally {
    if (started) await stop(started.child);
    await emulator.close();
  }
}

const rotate = <T>(list: readonly T[], by: number) => list.map((_, i) => list[(i + by) % list.length]!);

async function measureLoad(scenario: LoadScenario, system: SystemName): Promise<void> {
  const cell = ((results.load[scenario.id] ??= {})[system] ??= emptyLoadCell());
  await withSystem(system, false, unlimited(system), async (url, emulator, started) => {
    const pid = started?.child.pid;
    if (started) cell.startupMs.push(started.startupMs);
    if (pid) cell.idleRss.push(treeRssMiB(pid));
    const rss = pid ? sampleRss(pid) : null;
    const target = await scenario.targets[system]!({ url, emulator });
    const coldFrom = Date.now();
    await fetch(target.url, { method: 'POST', headers: target.headers, body: target.bodies[0] }).then((r) => r.text());
    // Mesh's and direct REST's clients authenticate themselves (once, before): that call counts too.
    cell.coldCalls.push(
      served(await emulator.requestsSince(coldFrom)) + (CLIENT_AUTHENTICATES.includes(system) ? 1 : 0),
    );
    const sampleFrom = Date.now();
    const answered = await fixedAmount(target, 10, CALLS_SAMPLE);
    cell.loadCalls.push(served(await emulator.requestsSince(sampleFrom)) / Math.max(1, answered));
    for (const connections of [10, 50] as const) {
      let from = Date.now();
      let cpuFrom = 0;
      const figures = await measure(target, connections, () => {
        from = Date.now();
        if (pid) cpuFrom = treeCpuMs(pid);
      });
      if (pid && figures.requests > 0)
        cell[connections === 10 ? 'cpuMsPerAnswer10' : 'cpuMsPerAnswer50'].push(
          (treeCpuMs(pid) - cpuFrom) / figures.requests,
        );
      const log = await emulator.requestsSince(from);
      cell.upstream429 += refused429(log);
      cell.clientErrors += figures.outcomes.errors + figures.outcomes.serverErrors + figures.socketErrors;
      cell.rateLimited += figures.outcomes.rateLimited;
      cell[connections === 10 ? 'rps10' : 'rps50'].push(figures.rps);
      // No answer within the time: no latency to tell (autocannon would say 0 ms).
      if (figures.requests > 0) {
        cell[connections === 10 ? 'p50at10' : 'p50at50'].push(figures.p50);
        cell[connections === 10 ? 'p99at10' : 'p99at50'].push(figures.p99);
      }
    }
    if (rss) cell.peakRss.push(rss.stop());
  });
}

/** Longer than ours keeps reservation pages (UPSTREAM_PAGE_TTL_MS) and answers (the response cache's 5 s). */
const WALK_PAUSE_MS = 6_000;

async function measureWalk(system: SystemName): Promise<void> {
  const cell = (results.walk[system] ??= emptyWalkCell());
  await withSystem(system, false, unlimited(system), async (url, emulator, started) => {
    const rss = started?.child.pid ? sampleRss(started.child.pid) : null;
    // A client that authenticates itself does so before the walk: the walk is the pages.
    if (CLIENT_AUTHENTICATES.includes(system)) await emulator.token();
    // Every system walks once to warm up (its code paths optimised, the emulator's pages formatted,
    // as load scenarios get their 3 s warm-up), then, after every kept page and answer has expired
    // (5 s), the walk that is measured and counted.
    await S5.walks[system]!({ url, emulator });
    await new Promise((resolve) => setTimeout(resolve, WALK_PAUSE_MS));
    const from = Date.now();
    const walk = await S5.walks[system]!({ url, emulator });
    cell.calls.push(served(await emulator.requestsSince(from)));
    cell.ms.push(walk.ms);
    cell.records.push(walk.records);
    if (rss) cell.peakRss.push(rss.stop());
  });
}

async function measureStream(): Promise<void> {
  const cell = (results.stream ??= { firstRecordMs: [], totalMs: [], records: [] });
  await withSystem('ours', false, unlimited('ours'), async (url) => {
    // Warm: the same document once over another event, so nothing of the measured event is kept.
    const warm = await streamWalk(url, WARM_EVENT);
    if (!warm.supported) {
      cell.unsupported = warm.reason;
      return;
    }
    const r = await streamWalk(url);
    if (!r.supported) cell.unsupported = r.reason;
    else {
      cell.firstRecordMs.push(r.firstRecordMs);
      cell.totalMs.push(r.totalMs);
      cell.records.push(r.records);
    }
  });
}

/** S6: the emulator's real 240/min limit on, ours at its defaults. */
async function measureSessions(system: SystemName): Promise<void> {
  const cell = (results.sessions[system] ??= emptySessionCell());
  await withSystem(system, true, {}, async (url, emulator) => {
    const headers: Record<string, string> = system === 'mesh' ? { 'x-service-token': await emulator.token() } : {};
    const from = Date.now();
    const figures = await simulateUsers(url, headers, SESSIONS[system]!, S6_USERS, S6_SECONDS);
    const log = await emulator.requestsSince(from);
    recordUsers(cell, figures, log);
    cell.served.push(figures.outcomes.ok);
  });
}

/** S7: the emulator's real 240/min limit on, ours at its defaults; answers marked stale counted apart. */
async function measureTables(): Promise<void> {
  const cell = (results.tables.ours ??= emptyTableCell());
  await withSystem('ours', true, {}, async (url, emulator) => {
    const hotels = await hotelsOf(url);
    const from = Date.now();
    const figures = await simulateTables(url, hotels, S7_USERS, S7_SECONDS);
    const log = await emulator.requestsSince(from);
    recordUsers(cell, figures, log);
    cell.fresh.push(figures.outcomes.ok - figures.stale);
    cell.stale.push(figures.stale);
  });
}

/** S8: the emulator's real 240/min limit on, ours at its defaults but for the 2 s poll. */
async function measureSubscribers(): Promise<void> {
  const env = {
    CHANGES_POLL_INTERVAL_MS: String(S8_POLL_MS),
    // One anonymous client holds every subscription here.
    SUBSCRIPTIONS_PER_CLIENT: String(Math.min(10_000, S8_SUBSCRIBERS + 10)),
    // A connection per SSE stream, one per ten graphql-ws subscriptions (1024 by default).
    MAX_CONNECTIONS: String(Math.max(1024, Math.ceil(S8_SUBSCRIBERS / 2) + Math.ceil(S8_SUBSCRIBERS / 20) + 100)),
  };
  await withSystem('ours', true, env, async (url, emulator, started) => {
    subscriberRuns.push(
      await simulateSubscribers(url, started!.child.pid!, emulator, {
        subscribers: S8_SUBSCRIBERS,
        idleS: S8_IDLE_S,
        bookingsPerEvent: S8_BOOKINGS,
      }),
    );
  });
}

/** S10: the emulator's real 240/min limit on, ours at its defaults (BENCH_S10_POLL_MS sets its poll) with a subscriber per event. */
async function measureLiveEvent(run: number): Promise<void> {
  const env: Record<string, string> =
    S10_POLL_MS === undefined ? {} : { CHANGES_POLL_INTERVAL_MS: String(S10_POLL_MS) };
  await withSystem('ours', true, env, async (url, emulator, started) => {
    liveEventRuns.push(
      await simulateLiveEvent(url, emulator.url, {
        gatewayLog: started?.child.stdout,
        users: S10_USERS,
        seconds: S10_SECONDS,
        pollMs: S10_POLL_MS ?? DEFAULT_POLL_MS,
        marginMs: S10_MARGIN_MS,
        tag: `${Date.now()}-${run}`,
      }),
    );
  });
}

/** What S6 and S7 record alike of one run: the users' outcomes and latency, the emulator's log. */
function recordUsers(cell: SessionCell | TableCell, figures: SessionFigures, log: readonly LoggedRequest[]): void {
  cell.operations.push(figures.operations);
  cell.rateLimited.push(figures.outcomes.rateLimited);
  cell.rateLimitedWithoutRetryAfter.push(figures.outcomes.rateLimitedWithoutRetryAfter);
  cell.otherErrors.push(figures.outcomes.errors + figures.outcomes.serverErrors);
  cell.serverErrors.push(figures.outcomes.serverErrors);
  cell.p95.push(percentile(figures.latencies, 95));
  cell.calls.push(served(log));
  cell.upstream429.push(refused429(log));
  cell.busiestMinute.push(busiestMinute(log));
}

for (let run = 0; run < RUNS; run++) {
  const loadBefore = loadavg()[0]!;
  for (const scenario of loadScenarios) {
    for (const system of rotate(runsOf(scenario), run)) {
      console.error(`run ${run + 1}: ${scenario.id} ${system}`);
      await measureLoad(scenario, system);
    }
  }
  for (const system of rotate(walkSystems, run)) {
    console.error(`run ${run + 1}: S5 ${system}`);
    await measureWalk(system);
  }
  if (streamOn) {
    console.error(`run ${run + 1}: S5-stream ours`);
    await measureStream();
  }
  for (const system of rotate(sessionSystems, run)) {
    console.error(`run ${run + 1}: S6 ${system} (${S6_SECONDS} s)`);
    await measureSessions(system);
  }
  if (tablesOn) {
    console.error(`run ${run + 1}: S7 ours (${S7_SECONDS} s)`);
    await measureTables();
  }
  if (subscribersOn) {
    console.error(`run ${run + 1}: S8 ours (${S8_SUBSCRIBERS} subscribers)`);
    await measureSubscribers();
  }
  if (liveEventOn) {
    console.error(`run ${run + 1}: S10 ours (${S10_SECONDS} s, ${S10_USERS} users)`);
    await measureLiveEvent(run);
  }
  results.runs++;
  results.loadavg.push([loadBefore, loadavg()[0]!]);
}
const soakLoad: number[] = [];
if (soakOn) {
  console.error(`S9 ours (${S9_MINUTES} min, ${S9_SUBSCRIBERS} subscribers, ${S9_USERS} users)`);
  soakLoad.push(loadavg()[0]!);
  soakRuns.push(
    await simulateSoak({
      minutes: S9_MINUTES,
      subscribers: S9_SUBSCRIBERS,
      users: S9_USERS,
      snapshots: S9_SNAPSHOTS,
    }),
  );
  soakLoad.push(loadavg()[0]!);
}

// Only the goals this run could judge (a scenario or system left out leaves its goals unjudged).
const goalList = [...goals(results), ...liveEventGoals(liveEventRuns)].filter((g) => g.met !== null);
const command = `npm run bench -- compare${flags.only ? ` --only ${flags.only}` : ''}${flags.systems ? ` --systems ${flags.systems}` : ''}`;
const stamp = (load: readonly (readonly number[])[]) =>
  `_${machine()}; load average (1 min) at the start and end of each run: ${load.map(([a, b]) => `${a!.toFixed(2)} → ${b!.toFixed(2)}`).join(', ')}._`;
// Each scenario's part of the section, between markers of its own (bench/compare/markdown.ts).
const parts: { id: string; text: string }[] = [
  loadScenarios.length ? { id: 'load', text: loadTable(results) } : null,
  walkSystems.length || streamOn
    ? {
        id: 'S5',
        text: `S5, walking all 25,600 reservations of event 5001 with \`first: 1000\` (peers: their pages):\n\n${walkTable(results)}`,
      }
    : null,
  sessionSystems.length
    ? {
        id: 'S6',
        text: `S6, ${S6_USERS} simulated users for ${S6_SECONDS} s (event page, hotel list, two reservation pages of 50, again and again):\n\n${sessionTable(results)}`,
      }
    : null,
  tablesOn
    ? {
        id: 'S7',
        text: `S7, ${S7_USERS} simulated users for ${S7_SECONDS} s over events ${S7_EVENTS.join(', ')} (reservation pages of 50 with \`totalCount\`, filtered by nothing, a status, a hotel or both, paged forward with \`after\`, a new filter now and then; "served stale": data marked \`extensions.stale\`):\n\n${tableTable(results)}`,
      }
    : null,
  subscribersOn
    ? {
        id: 'S8',
        text: `S8, ${S8_SUBSCRIBERS} live \`reservationChanged\` subscriptions over events ${S8_EVENTS.join(', ')} (half SSE streams, half graphql-ws ten a socket), polled every ${S8_POLL_MS / 1000} s, ${S8_IDLE_S} s idle, ${S8_BOOKINGS} booking(s) per event at the emulator:\n\n${subscriberTable(subscriberRuns)}`,
      }
    : null,
  liveEventOn
    ? {
        id: 'S10',
        text: `${S10_DESCRIPTION(S10_USERS, S10_SECONDS, S10_POLL_MS ?? DEFAULT_POLL_MS, S10_MARGIN_MS)}. Reproduce: \`${S10_POLL_MS === undefined ? '' : `BENCH_S10_POLL_MS=${S10_POLL_MS} `}BENCH_S10_SECONDS=${S10_SECONDS} BENCH_S10_USERS=${S10_USERS} BENCH_RUNS=${RUNS} npm run bench -- compare --only S10 --systems ours\`.\n\n${liveEventTable(liveEventRuns)}`,
      }
    : null,
  soakOn
    ? {
        id: 'S9',
        text: `${S9_DESCRIPTION}. Reproduce: \`BENCH_S9_MINUTES=${S9_MINUTES} BENCH_S9_SUBSCRIBERS=${S9_SUBSCRIBERS} BENCH_S9_USERS=${S9_USERS} npm run bench -- compare --only S9 --systems ours\`. ${stamp([soakLoad])}\n\n${soakRuns.map(soakReport).join('\n\n')}`,
      }
    : null,
].filter((p): p is { id: string; text: string } => p !== null);
// A run of some scenarios says when it ran in each of its parts (the header is the last full run's).
if (flags.only) for (const p of parts) if (p.id !== 'S9') p.text = `${stamp(results.loadavg)}\n\n${p.text}`;
const section = `### Side by side (${machine()})

autocannon in the runner's process on the same machine as the measured system and the emulator
(each a process of its own; every system-run gets a fresh emulator); ${RUNS} run(s) of ${WARMUP_S} s warm-up + ${DURATION_S} s,
median (min–max), systems in a rotating order. Rate limits lifted for S1–S5 (\`--no-rate-limit\`,
ours with \`UPSTREAM_RATE_LIMIT=100000\`; "ours" otherwise at its defaults, "ours, response cache
off" with \`RESPONSE_CACHE=off\`); S6 and S7 with the emulator's real 240/min limit and ours at
its defaults. Upstream calls are counted from the emulator's log; "cold" is the first operation on
a fresh system. CPU per answer: the system's CPU time (its process tree, from \`/proc/<pid>/stat\`)
during the measured part, divided by the answers. Idle RSS: right after the system says it is
ready. The \`@stream\` walk is timed on a warm gateway: the same document has run once over event
${WARM_EVENT} first (compiled, token held, no page of event 5001 kept). Load average (1 min) at the start and end of each run:
${results.loadavg.map(([a, b]) => `${a!.toFixed(2)} → ${b!.toFixed(2)}`).join(', ')}.

${parts.map((p) => part(p.id, p.text)).join('\n\n')}

![Upstream calls and throughput per scenario and system](images/compare.svg)

Goals of issues 10 and 20 (where both set one, issue 20's), of issue 28 and of issue 37 (S10), on this run's medians:

${goalTable(goalList)}

Reproduce: \`${command}\` (\`BENCH_RUNS\`, \`BENCH_DURATION_S\`, \`BENCH_S6_SECONDS\`, \`BENCH_S7_SECONDS\` shorten it; \`BENCH_S8_SUBSCRIBERS\`, \`BENCH_S8_IDLE_S\`, \`BENCH_S8_BOOKINGS\` size S8; \`BENCH_S9_MINUTES\`, \`BENCH_S9_SUBSCRIBERS\`, \`BENCH_S9_USERS\` size S9, \`BENCH_S9_SNAPSHOTS=0\` takes no heap snapshot; \`BENCH_S10_SECONDS\`, \`BENCH_S10_USERS\` size S10, \`BENCH_S10_POLL_MS\` sets its feeds' poll, \`BENCH_S10_MARGIN_MS\` its freshness margin). A run with \`--only\` replaces its scenarios' parts alone (S1–S4b are one part), and leaves the chart and the goals as the last full run drew them.
`;

const docPath = new URL('../docs/benchmarks.md', import.meta.url);
if (flags.only) {
  // Some scenarios: their parts alone; the chart and the goals stay the last full run's.
  for (const p of parts) console.log(`${p.text}\n`);
  // The goals this run could judge, printed for the reader (the document keeps the last full run's).
  if (goalList.length) console.log(`Goals this run judged (not written to the document):\n\n${goalTable(goalList)}\n`);
  writeFileSync(docPath, replaceParts(readFileSync(docPath, 'utf8'), parts, section));
  console.error(`wrote the parts ${parts.map((p) => p.id).join(', ')} of docs/benchmarks.md's compare section`);
} else {
  console.log(section);
  writeFileSync(docPath, replaceBetweenMarkers(readFileSync(docPath, 'utf8'), section));
  mkdirSync(new URL('../docs/images/', import.meta.url), { recursive: true });
  writeFileSync(new URL('../docs/images/compare.svg', import.meta.url), compareChart(results));
  console.error('wrote docs/benchmarks.md (between the compare markers) and docs/images/compare.svg');
}
