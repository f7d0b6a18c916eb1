import { totalmem } from 'node:os';

/**
 * V8's heap, sized for the memory a container gives the process (docs/deploying.md, "Sizing"). The
 * image's command starts Node with HEAP_FLAGS; `npm start` (scripts/start.mjs) asks `startFlags`
 * whether to start Node again, as the same process, with them.
 *
 * Left to itself under a memory limit, V8 takes half of it for the old generation (at least 256 MiB,
 * more than half below 512), a young generation of 2 MiB at 512 MiB or less (48 MiB above), and
 * collects whenever the old generation has grown by 30–40 % over what survived the last collection
 * (the smaller its limit, the sooner). Under distinct 1000-record pages at 50 connections,
 * whose answers outlive the young generation, that is about 45 ms of CPU per answer in 512 MiB, five
 * times what the same image spends with the machine's memory (bench/image-memory.ts). Hence:
 * - the old generation at 60 % of the limit: what the process needs besides (the young generation,
 *   code, buffers, sockets) is some 100–150 MiB, which that leaves from 512 MiB on;
 * - semi-spaces of 16 MiB whatever the limit (V8's own between 512 MiB and 2 GiB);
 * - a collection only once the old generation has tripled (`--heap-growing-percent=200`; V8 lets it
 *   grow up to fourfold when its limit is 2 GiB or more), and never later than half way from what
 *   survived to the limit (V8's own bound).
 */
export const HEAP_PERCENTAGE = 60;
export const SEMI_SPACE_MIB = 16;
export const GROWING_PERCENT = 200;

/** The image's command's flags (Node 22.21 and 24.8 on know the percentage). */
export const HEAP_FLAGS = [
  `--max-old-space-size-percentage=${HEAP_PERCENTAGE}`,
  `--max-semi-space-size=${SEMI_SPACE_MIB}`,
  `--heap-growing-percent=${GROWING_PERCENT}`,
] as const;

/** Whether Node was given a heap size of its own, on its command line or in NODE_OPTIONS. */
export function heapSizeGiven(execArgv: readonly string[], nodeOptions = ''): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) =>
    /^--(max[-_]old[-_]space[-_]size|max[-_]semi[-_]space[-_]size|heap[-_]growing[-_]percent)/.test(flag),
  );
}

/**
 * The memory the process may use when something other than the machine's size limits it (a
 * container's cgroup `memory.max`, as Node reads it); undefined otherwise. Node reports no limit as
 * 0 or as a number beyond the machine's memory, depending on the version.
 */
export function memoryLimit(
  constrained = process.constrainedMemory?.() ?? 0,
  machine = totalmem(),
): number | undefined {
  return constrained > 0 && constrained < machine ? constrained : undefined;
}

export interface StartInputs {
  execArgv: readonly string[];
  nodeOptions?: string;
  /** memoryLimit()'s answer. */
  limit: number | undefined;
  /** Whether this Node knows `--max-old-space-size-percentage`. */
  knowsPercentage: boolean;
}

/**
 * The flags `npm start` starts Node again with, so that the heap is sized as the image's command
 * sizes it: only under a memory limit and when none of them was given. Where this Node does not
 * know the percentage, the old generation's share of the limit is given in MiB, as Node computes
 * it. Undefined when V8's own sizing stays.
 */
export function startFlags({ execArgv, nodeOptions, limit, knowsPercentage }: StartInputs): string[] | undefined {
  if (limit === undefined || heapSizeGiven(execArgv, nodeOptions)) return undefined;
  if (knowsPercentage) return [...HEAP_FLAGS];
  const oldSpaceMiB = Math.floor((Math.floor(limit / 2 ** 20) * HEAP_PERCENTAGE) / 100);
  return [`--max-old-space-size=${oldSpaceMiB}`, ...HEAP_FLAGS.slice(1)];
}
