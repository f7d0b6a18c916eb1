import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Heap snapshots of a process started with `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir>`
 * (V8 collects first: a snapshot holds what is reachable), and what grew between two of them.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks `pid` for a heap snapshot and waits until its file in `dir` is written whole. */
export async function takeSnapshot(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    await sleep(500);
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (!file) continue;
    const size = statSync(join(dir, file)).size;
    await sleep(1_000);
    if (size > 0 && statSync(join(dir, file)).size === size) return join(dir, file);
  }
}

export type HeapCensus = Map<string, { count: number; bytes: number }>;

/** Self size and count by node type and constructor (strings by type alone), read in a process of its own. */
export function byConstructor(file: string): HeapCensus {
  const script = `const s = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
    const m = s.snapshot.meta, f = m.node_fields, types = m.node_types[0], n = f.length;
    const ti = f.indexOf('type'), ni = f.indexOf('name'), si = f.indexOf('self_size'); const out = {};
    for (let i = 0; i < s.nodes.length; i += n) {
      const type = types[s.nodes[i + ti]];
      const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : s.strings[s.nodes[i + ni]].slice(0, 60);
      const k = type + ' ' + name; const e = out[k] ??= [0, 0]; e[0]++; e[1] += s.nodes[i + si];
    }
    console.log(JSON.stringify(out));`;
  const out = JSON.parse(
    execFileSync(process.execPath, ['--max-old-space-size=4096', '-e', script, file], {
      encoding: 'utf8',
      maxBuffer: 256 << 20,
    }),
  ) as Record<string, [number, number]>;
  return new Map(Object.entries(out).map(([k, [count, bytes]]) => [k, { count, bytes }]));
}

export const totalBytes = (census: HeapCensus) => [...census.values()].reduce((sum, e) => sum + e.bytes, 0);

/** The `top` entries that grew most from `before` to `after`, by bytes. */
export function growth(
  before: HeapCensus,
  after: HeapCensus,
  top: number,
): { key: string; count: number; bytes: number }[] {
  return [...after.entries()]
    .map(([key, e]) => {
      const was = before.get(key) ?? { count: 0, bytes: 0 };
      return { key, count: e.count - was.count, bytes: e.bytes - was.bytes };
    })
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, top);
}
