import { readFileSync } from 'node:fs';

/**
 * Peak resident memory of a process and its descendants, sampled from /proc (Linux): a server that
 * forks workers is measured whole, as docs/benchmarking.md asks for "the measured process".
 */

function rssKiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0; // gone
  }
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A process and all its descendants now. */
export function descendants(pid: number): number[] {
  const all: number[] = [];
  const pending = [pid];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    all.push(next);
    pending.push(...children(next));
  }
  return all;
}

/** RSS of a process tree now, in MiB. */
export function treeRssMiB(pid: number): number {
  return descendants(pid).reduce((kib, p) => kib + rssKiB(p), 0) / 1024;
}

export interface RssSampler {
  /** Stops sampling; the highest RSS seen, in MiB. */
  stop(): number;
  peak(): number;
}

export function sampleRss(pid: number, everyMs = 200): RssSampler {
  let peak = treeRssMiB(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssMiB(pid));
  }, everyMs);
  return {
    peak: () => peak,
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}
