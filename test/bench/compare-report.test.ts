import { describe, expect, it } from 'vitest';
import { END, replaceBetweenMarkers, START } from '../../bench/compare/markdown.ts';
import { fmt, goals, goalTable, loadTable } from '../../bench/compare/report.ts';
import {
  emptyLoadCell,
  emptyResults,
  emptySessionCell,
  emptyWalkCell,
  type Results,
} from '../../bench/compare/results.ts';

/** The compare benchmark's pure parts: figures → markdown, goals judged on ratios, the docs markers. */

function run(): Results {
  const r = emptyResults({ durationS: 10, warmupS: 3, s6Seconds: 150, s6Users: 50 });
  r.load.S1 = {
    ours: { ...emptyLoadCell(), coldCalls: [1], rps50: [2900, 3000, 3100], idleRss: [110], startupMs: [900] },
    'ours-cache-off': { ...emptyLoadCell(), rps50: [2000] },
    ceiling: { ...emptyLoadCell(), rps50: [3200] },
  };
  r.load.S2 = {
    ours: { ...emptyLoadCell(), coldCalls: [4] },
    naive: { ...emptyLoadCell(), coldCalls: [25] },
    mesh: { ...emptyLoadCell(), coldCalls: [24] },
  };
  r.load.S4b = {
    ours: { ...emptyLoadCell(), rps50: [19], p99at10: [1012], peakRss: [656] },
    naive: { ...emptyLoadCell(), rps50: [33], p99at10: [408] },
    mesh: { ...emptyLoadCell(), rps50: [12], p99at10: [1623] },
  };
  r.walk = {
    ours: { ...emptyWalkCell(), ms: [1560], calls: [53] },
    direct: { ...emptyWalkCell(), ms: [360], calls: [26] },
  };
  r.sessions = {
    ours: {
      ...emptySessionCell(),
      operations: [1599],
      served: [1188],
      rateLimited: [411],
      rateLimitedWithoutRetryAfter: [0],
      otherErrors: [0],
      serverErrors: [0],
      p95: [2900],
      calls: [683],
      upstream429: [0],
      busiestMinute: [228],
    },
    naive: {
      ...emptySessionCell(),
      operations: [900],
      served: [300],
      calls: [600],
      upstream429: [50],
      serverErrors: [0],
    },
  };
  return r;
}

const find = (list: ReturnType<typeof goals>, text: string) => list.find((g) => g.goal.startsWith(text));

describe('compare report', () => {
  it('writes one value per run as median (min–max), a single run alone, none as a dash', () => {
    expect(fmt([3, 1, 2])).toBe('2 (1–3)');
    expect(fmt([1.234], 2)).toBe('1.23');
    expect(fmt([])).toBe('–');
  });

  it('tabulates each scenario and system that ran, by name', () => {
    const table = loadTable(run());
    expect(table.split('\n')).toHaveLength(2 + 3 + 3 + 3);
    expect(table).toContain('| S1 | ours | 1 |');
    expect(table).toContain('| S1 | ours, response cache off |');
    expect(table).toContain('| 3000 (2900–3100) |');
  });

  it('judges the goals on this run’s ratios: the issue’s own figures miss where it says they do', () => {
    const list = goals(run());
    expect(find(list, "S2 upstream calls (cold) at most 1/3 of naive's")?.met).toBe(true); // 4 ≤ 25/3
    expect(find(list, 'S1, response cache off')).toMatchObject({ measured: '0.63 ×', met: false });
    expect(find(list, 'S1, response cache on')?.met).toBe(true); // 3000/3200 = 0.94
    expect(find(list, "S4b: at least 2 × naive's throughput")?.met).toBe(false);
    expect(find(list, "S4b: p99 below Mesh's")?.met).toBe(true);
    expect(find(list, 'S5 at most 27 upstream calls')).toMatchObject({ measured: '53', met: false });
    expect(find(list, "S5: at most 1.3 × the direct walk's time")?.met).toBe(false);
    expect(find(list, 'S6: no upstream 429')?.met).toBe(true);
    expect(find(list, 'S6: every RATE_LIMITED carries retryAfterSeconds')?.met).toBe(true);
    expect(find(list, 'S6: at least 95 %')?.met).toBe(false);
    expect(find(list, 'S6: at least 5 operations served per upstream call')).toMatchObject({
      measured: '1.74',
      met: false,
    });
    expect(find(list, 'idle RSS under 120 MiB')?.met).toBe(true);
    expect(find(list, 'peak RSS under 300 MiB during S4b')?.met).toBe(false);
  });

  it('leaves unjudged what the run did not measure (no S3, no Mesh in S6, no @stream run)', () => {
    const list = goals(run());
    expect(find(list, "S3 upstream calls (cold) at most 1/3 of naive's")?.met).toBeNull();
    expect(find(list, "S6 upstream calls per operation at most 1/3 of Mesh's")?.met).toBeNull();
    expect(find(list, 'S5 with @stream')?.met).toBeNull();
    expect(goalTable(list)).toMatch(
      /\| S3 upstream calls \(cold\) at most 1\/3 of naive's \| – vs – \| not evaluated \|/,
    );
    expect(goalTable(list)).toContain('| **missed** |');
  });

  it('counts @stream answered with an error as missed, not as unmeasured', () => {
    const r = run();
    r.stream = { firstRecordMs: [], totalMs: [], records: [], unsupported: 'Unknown directive "@stream".' };
    expect(find(goals(r), 'S5 with @stream')).toMatchObject({ measured: 'not supported', met: false });
  });
});

describe('compare markers in docs/benchmarks.md', () => {
  const doc = `# Benchmarks\n\nintro\n\n## Side by side\n\n${START}\nold figures\n${END}\n\n## Later\n\nkept\n`;

  it('replaces only what lies between the markers', () => {
    const out = replaceBetweenMarkers(doc, 'new figures\n');
    expect(out).toBe(`# Benchmarks\n\nintro\n\n## Side by side\n\n${START}\nnew figures\n${END}\n\n## Later\n\nkept\n`);
    expect(replaceBetweenMarkers(out, 'new figures')).toBe(out);
  });

  it('adds the markers under a "## Side by side" heading when missing, the heading too when absent', () => {
    expect(replaceBetweenMarkers('# Benchmarks\n\nintro\n', 'figures')).toBe(
      `# Benchmarks\n\nintro\n\n## Side by side\n\n${START}\nfigures\n${END}\n`,
    );
    expect(replaceBetweenMarkers('# B\n\n## Side by side\n\n## Later\n', 'figures')).toBe(
      `# B\n\n## Side by side\n\n${START}\nfigures\n${END}\n\n## Later\n`,
    );
  });

  it('refuses a document with one marker alone rather than guess', () => {
    expect(() => replaceBetweenMarkers(`# B\n${START}\n`, 'x')).toThrow(/one compare marker/);
  });
});
