import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { descendants } from './rss.ts';

/**
 * CPU time (user + system) a process and its descendants have used, from /proc/<pid>/stat
 * (Linux): CPU per answer holds better than req/s on a machine other work also loads.
 */

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime of one process, in clock ticks; 0 once it is gone. */
function ticks(pid: number): number {
  try {
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** CPU time of a process tree so far, in ms. */
export function treeCpuMs(pid: number): number {
  return (descendants(pid).reduce((sum, p) => sum + ticks(p), 0) * 1000) / clockTicks();
}
