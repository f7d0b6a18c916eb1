import { median } from '../lib.ts';
import type { Results, SessionCell, TableCell } from './results.ts';
import { SYSTEM_LABELS, type SystemName } from './systems.ts';

/** The markdown tables of a compare run, and the goals evaluated on its ratios. */

/** Median (min–max) of one value per run; one run: the value alone; none: a dash. */
export function fmt(values: readonly number[], digits = 0): string {
  if (values.length === 0) return '–';
  const m = median([...values]).toFixed(digits);
  if (values.length === 1) return m;
  return `${m} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

const med = (values: readonly number[]) => (values.length ? median([...values]) : NaN);
/** A figure for the goals table; a dash where this run has none. */
const show = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '–');
const label = (s: string) => SYSTEM_LABELS[s as SystemName] ?? s;

export function loadTable(results: Results): string {
  const rows = Object.entries(results.load).flatMap(([scenario, systems]) =>
    Object.entries(systems).map(
      ([system, c]) =>
        `| ${scenario} | ${label(system)} | ${fmt(c.coldCalls)} | ${fmt(c.loadCalls, 2)} | ${fmt(c.rps10)} | ${fmt(c.p50at10)} / ${fmt(c.p99at10)} | ${fmt(c.rps50)} | ${fmt(c.p50at50)} / ${fmt(c.p99at50)} | ${fmt(c.cpuMsPerAnswer10, 1)} / ${fmt(c.cpuMsPerAnswer50, 1)} | ${fmt(c.peakRss)} | ${c.upstream429} | ${c.clientErrors} (${c.rateLimited}) |`,
    ),
  );
  return [
    '| scenario | system | upstream calls per op, cold | calls per op under load (40 requests, 10 conn.) | req/s, 10 conn. | p50 / p99 ms, 10 conn. | req/s, 50 conn. | p50 / p99 ms, 50 conn. | CPU ms per answer, 10 / 50 conn. | peak RSS MiB | upstream 429s | client errors (RATE_LIMITED) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export function walkTable(results: Results): string {
  const rows = Object.entries(results.walk).map(
    ([system, c]) =>
      `| ${label(system)} | ${fmt(
        c.ms.map((ms) => ms / 1000),
        2,
      )} | ${fmt(c.calls)} | ${fmt(c.records)} | ${fmt(c.peakRss)} |`,
  );
  const stream = results.stream;
  if (stream) {
    rows.push(
      stream.unsupported !== undefined
        ? `| ours, one query with \`@stream\` | not supported (${stream.unsupported.replace(/\|/g, '\\|')}) | | | |`
        : `| ours, one query with \`@stream\` | ${fmt(
            stream.totalMs.map((ms) => ms / 1000),
            2,
          )} (first record after ${fmt(stream.firstRecordMs)} ms) | | ${fmt(stream.records)} | |`,
    );
  }
  return ['| system | walk time s | upstream calls | records | peak RSS MiB |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}

export function sessionTable(results: Results): string {
  const rows = Object.entries(results.sessions).map(
    ([system, c]) =>
      `| ${label(system)} | ${fmt(c.operations)} | ${fmt(c.served)} | ${fmt(c.rateLimited)} | ${fmt(c.otherErrors)} (${fmt(c.serverErrors)}) | ${fmt(c.p95)} | ${fmt(c.calls)} | ${fmt(opsPerCall(c), 2)} | ${fmt(c.upstream429)} | ${fmt(c.busiestMinute)} of 240 |`,
  );
  return [
    '| system | operations | served | RATE_LIMITED | other errors (5xx) | p95 ms | upstream calls | operations served per call | upstream 429s | busiest minute |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export function tableTable(results: Results): string {
  const rows = Object.entries(results.tables).map(
    ([system, c]) =>
      `| ${label(system)} | ${fmt(c.operations)} | ${fmt(c.fresh)} | ${fmt(c.stale)} | ${fmt(c.rateLimited)} | ${fmt(c.otherErrors)} (${fmt(c.serverErrors)}) | ${fmt(c.p95)} | ${fmt(c.calls)} | ${fmt(c.upstream429)} | ${fmt(c.busiestMinute)} of 240 |`,
  );
  return [
    '| system | operations | served fresh | served stale | RATE_LIMITED | other errors (5xx) | p95 ms | upstream calls | upstream 429s | busiest minute |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** Operations answered with data, fresh or marked stale, per run. */
export const answeredWithData = (c: TableCell) => c.fresh.map((f, i) => f + (c.stale[i] ?? 0));

export const opsPerCall = (c: SessionCell) => c.served.map((s, i) => s / Math.max(1, c.calls[i] ?? 0));

export interface Goal {
  goal: string;
  measured: string;
  /** null: this run cannot tell (a system or scenario left out, or not supported yet). */
  met: boolean | null;
}

const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);
const known = (...xs: number[]) => xs.every((x) => Number.isFinite(x));
const judge = (ok: boolean, ...xs: number[]): boolean | null => (known(...xs) ? ok : null);

/**
 * The goals of issue 28 (cost that stays flat) one compare run can judge: memory that follows the
 * answer (S4b's peak at or below naive's, idle RSS at the ready line at most 90 MiB), walks faster
 * than the wire (S5 at most 0.9 × direct REST, with at most 27 calls) and small answers at the
 * wire's speed (S1 at least 0.7 × the emulator's own `getevent`, 50 connections).
 */
function costGoals(r: Results, idle: number): Goal[] {
  const ours = med(r.load.S4b?.ours?.peakRss ?? []);
  const naive = med(r.load.S4b?.naive?.peakRss ?? []);
  const walk = ratio(med(r.walk.ours?.ms ?? []), med(r.walk.direct?.ms ?? []));
  const calls = med(r.walk.ours?.calls ?? []);
  const s1 = ratio(med(r.load.S1?.ours?.rps50 ?? []), med(r.load.S1?.direct?.rps50 ?? []));
  return [
    {
      goal: "S4b: peak RSS at or below naive's (10 and 50 conn.)",
      measured: `${show(ours)} vs ${show(naive)} MiB`,
      met: judge(ours <= naive, ours, naive),
    },
    { goal: 'idle RSS at the ready line at most 90 MiB', measured: `${show(idle)} MiB`, met: judge(idle <= 90, idle) },
    {
      goal: "S5: at most 0.9 × the direct walk's time, with at most 27 upstream calls",
      measured: `${show(walk, 2)} ×, ${show(calls)} calls`,
      met: judge(walk <= 0.9 && calls <= 27, walk, calls),
    },
    {
      goal: "S1: at least 0.7 × direct REST's throughput (50 conn.)",
      measured: `${show(s1, 2)} ×`,
      met: judge(s1 >= 0.7, s1),
    },
  ];
}

/**
 * The speed and thrift goals that one compare run can evaluate, on its medians: the first speed
 * issue's, and the bulk-read issue's where it sets a goal of its own (it wins where both do: S3
 * against Mesh, S5 against direct REST, idle RSS).
 */
export function goals(r: Results): Goal[] {
  const out: Goal[] = [];
  const load = (scenario: string, system: SystemName) => r.load[scenario]?.[system];

  const ceiling = med(load('S1', 'ceiling')?.rps50 ?? []);
  const off = ratio(med(load('S1', 'ours-cache-off')?.rps50 ?? []), ceiling);
  const on = ratio(med(load('S1', 'ours')?.rps50 ?? []), ceiling);
  out.push({
    goal: 'S1, response cache off: at least 0.7 × the ceiling (req/s, 50 conn.)',
    measured: `${show(off, 2)} ×`,
    met: judge(off >= 0.7, off),
  });
  out.push({
    goal: 'S1, response cache on: at least 0.9 × the ceiling',
    measured: `${show(on, 2)} ×`,
    met: judge(on >= 0.9, on),
  });

  for (const scenario of ['S2', 'S3']) {
    const ours = med(load(scenario, 'ours')?.coldCalls ?? []);
    for (const peer of ['naive', 'mesh'] as const) {
      const theirs = med(load(scenario, peer)?.coldCalls ?? []);
      // Mesh reads S3's 100 reservations with one page call: S3 asks to match it, not to beat it by 3.
      const atMost = scenario === 'S3' && peer === 'mesh' ? 1 : 1 / 3;
      out.push({
        goal: `${scenario} upstream calls (cold) at most ${atMost === 1 ? '' : '1/3 of '}${label(peer)}'s`,
        measured: `${show(ours)} vs ${show(theirs)}`,
        met: judge(ours <= theirs * atMost, ours, theirs),
      });
    }
  }

  const s4Calls = med(load('S4', 'ours')?.coldCalls ?? []);
  out.push({
    goal: 'S4 at most one call per upstream page plus one (≤ 2)',
    measured: show(s4Calls),
    met: judge(s4Calls <= 2, s4Calls),
  });
  const s4 = load('S4', 'ours');
  for (const [peer, factor] of [
    ['naive', 2],
    ['mesh', 3],
  ] as const) {
    const theirs = load('S4', peer);
    const x = ratio(med(s4?.rps50 ?? []), med(theirs?.rps50 ?? []));
    out.push({
      goal: `S4: at least ${factor} × ${label(peer)}'s throughput`,
      measured: `${show(x, 2)} ×`,
      met: judge(x >= factor, x),
    });
    const p99 = med(s4?.p99at10 ?? []);
    const theirP99 = med(theirs?.p99at10 ?? []);
    out.push({
      goal: `S4: p99 below ${label(peer)}'s (10 conn.)`,
      measured: `${show(p99)} vs ${show(theirP99)} ms`,
      met: judge(p99 < theirP99, p99, theirP99),
    });
  }
  // Judged with the response cache off: with it on, S4's one page is a cache hit, not an answer built.
  const cpu = med(load('S4', 'ours-cache-off')?.cpuMsPerAnswer10 ?? []);
  out.push({
    goal: 'S4, response cache off: gateway CPU per answer at most 8 ms (10 conn.)',
    measured: `${show(cpu, 1)} ms`,
    met: judge(cpu <= 8, cpu),
  });

  const s4b = load('S4b', 'ours');
  for (const connections of [10, 50] as const) {
    for (const [peer, factor] of [
      ['naive', 2],
      ['mesh', 3],
    ] as const) {
      const theirs = load('S4b', peer);
      const rps = connections === 10 ? 'rps10' : 'rps50';
      const p99s = connections === 10 ? 'p99at10' : 'p99at50';
      const x = ratio(med(s4b?.[rps] ?? []), med(theirs?.[rps] ?? []));
      out.push({
        goal: `S4b: at least ${factor} × ${label(peer)}'s throughput (${connections} conn.)`,
        measured: `${show(x, 2)} ×`,
        met: judge(x >= factor, x),
      });
      const p99 = med(s4b?.[p99s] ?? []);
      const theirP99 = med(theirs?.[p99s] ?? []);
      out.push({
        goal: `S4b: p99 below ${label(peer)}'s (${connections} conn.)`,
        measured: `${show(p99)} vs ${show(theirP99)} ms`,
        met: judge(p99 < theirP99, p99, theirP99),
      });
    }
  }

  const s5Calls = med(r.walk.ours?.calls ?? []);
  out.push({ goal: 'S5 at most 27 upstream calls', measured: show(s5Calls), met: judge(s5Calls <= 27, s5Calls) });
  const walk = med(r.walk.ours?.ms ?? []);
  const direct = ratio(walk, med(r.walk.direct?.ms ?? []));
  out.push({
    goal: "S5: at most 1.1 × the direct walk's time",
    measured: `${show(direct, 2)} ×`,
    met: judge(direct <= 1.1, direct),
  });
  for (const peer of ['naive', 'mesh'] as const) {
    const theirs = med(r.walk[peer]?.ms ?? []);
    out.push({
      goal: `S5: faster than ${label(peer)}`,
      measured: `${show(walk / 1000, 2)} vs ${show(theirs / 1000, 2)} s`,
      met: judge(walk < theirs, walk, theirs),
    });
  }
  const stream = r.stream;
  const streamGoal = 'S5 with @stream: first record in under 100 ms (warm gateway)';
  out.push(
    stream && stream.unsupported === undefined
      ? {
          goal: streamGoal,
          measured: `${med(stream.firstRecordMs).toFixed(0)} ms`,
          met: med(stream.firstRecordMs) < 100,
        }
      : { goal: streamGoal, measured: stream ? 'not supported' : 'not run', met: stream ? false : null },
  );

  for (const [what, peak] of [
    ['S4b (10 and 50 conn.)', med(s4b?.peakRss ?? [])],
    ['S5', med(r.walk.ours?.peakRss ?? [])],
  ] as const) {
    out.push({
      goal: `peak RSS under 300 MiB during ${what}`,
      measured: `${show(peak)} MiB`,
      met: judge(peak < 300, peak),
    });
  }
  const idle = Math.max(
    ...Object.values(r.load)
      .flatMap((systems) => med(systems.ours?.idleRss ?? []))
      .filter(Number.isFinite),
  );
  out.push({
    goal: 'idle RSS right after ready under 100 MiB',
    measured: `${show(idle)} MiB`,
    met: judge(idle < 100, idle),
  });
  out.push(...costGoals(r, idle));
  const startup = med(Object.values(r.load).flatMap((systems) => systems.ours?.startupMs ?? []));
  out.push({
    goal: 'start to ready under 2 s (as the harness starts ours)',
    measured: `${show(startup)} ms`,
    met: judge(startup < 2000, startup),
  });

  const s6 = r.sessions.ours;
  if (s6) {
    const served = med(s6.served) / Math.max(1, med(s6.operations));
    const perCall = med(opsPerCall(s6));
    const peerPerCall = Math.max(
      ...(['naive', 'mesh'] as const)
        .map((p) => med(r.sessions[p] ? opsPerCall(r.sessions[p]!) : []))
        .filter(Number.isFinite),
    );
    out.push({
      goal: 'S6: no upstream 429',
      measured: `${Math.max(...s6.upstream429)}`,
      met: Math.max(...s6.upstream429) === 0,
    });
    out.push({
      goal: 'S6: at least 95 % of operations served',
      measured: `${(served * 100).toFixed(1)} %`,
      met: served >= 0.95,
    });
    out.push({ goal: 'S6: p95 under 1 s', measured: `${med(s6.p95).toFixed(0)} ms`, met: med(s6.p95) < 1000 });
    out.push({
      goal: 'S6: at least 5 operations served per upstream call',
      measured: perCall.toFixed(2),
      met: perCall >= 5,
    });
    out.push({
      goal: "S6: at least 10 × the better peer's operations per call",
      measured: `${show(perCall, 2)} vs ${show(peerPerCall, 2)}`,
      met: judge(perCall >= 10 * peerPerCall, peerPerCall),
    });
    const bare = Math.max(...s6.rateLimitedWithoutRetryAfter);
    out.push({
      goal: 'S6: every RATE_LIMITED carries retryAfterSeconds',
      measured: `${bare} without`,
      met: bare === 0,
    });
    out.push({
      goal: 'S6: never a 5xx',
      measured: `${Math.max(...s6.serverErrors)}`,
      met: Math.max(...s6.serverErrors) === 0,
    });
    for (const peer of ['naive', 'mesh'] as const) {
      const theirs = r.sessions[peer];
      const oursCallsPerOp = 1 / perCall;
      const theirsCallsPerOp = theirs ? 1 / med(opsPerCall(theirs)) : NaN;
      out.push({
        goal: `S6 upstream calls per operation at most 1/3 of ${label(peer)}'s`,
        measured: `${show(oursCallsPerOp, 2)} vs ${show(theirsCallsPerOp, 2)}`,
        met: judge(oursCallsPerOp <= theirsCallsPerOp / 3, theirsCallsPerOp),
      });
    }
  }

  const s7 = r.tables.ours;
  if (s7) {
    const answered = med(answeredWithData(s7)) / Math.max(1, med(s7.operations));
    const stale = med(s7.stale) / Math.max(1, med(s7.operations));
    out.push({
      goal: 'S7: no upstream 429',
      measured: `${Math.max(...s7.upstream429)}`,
      met: Math.max(...s7.upstream429) === 0,
    });
    out.push({
      goal: 'S7: at least 95 % of operations answered with data (fresh or marked stale)',
      measured: `${(answered * 100).toFixed(1)} % (stale ${(stale * 100).toFixed(1)} %)`,
      met: answered >= 0.95,
    });
    out.push({ goal: 'S7: p95 under 1 s', measured: `${med(s7.p95).toFixed(0)} ms`, met: med(s7.p95) < 1000 });
  }
  return out;
}

export function goalTable(list: readonly Goal[]): string {
  const verdict = (met: boolean | null) => (met === null ? 'not evaluated' : met ? 'met' : '**missed**');
  return [
    '| goal | this run | verdict |',
    '|---|---|---|',
    ...list.map((g) => `| ${g.goal} | ${g.measured} | ${verdict(g.met)} |`),
  ].join('\n');
}
