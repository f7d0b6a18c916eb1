import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  HEAP_FLAGS,
  HEAP_PERCENTAGE,
  heapSizeGiven,
  memoryLimit,
  SEMI_SPACE_MIB,
  startFlags,
} from '../../src/config/heap.ts';

/** How V8's heap is sized: by the image's command, and by `npm start` under a memory limit. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GiB = 2 ** 30;

describe('the heap size', () => {
  it('is what the image’s command gives Node', () => {
    const cmd = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('CMD '))
      .at(-1)!;
    expect(JSON.parse(cmd.slice(4))).toEqual(['node', ...HEAP_FLAGS, 'dist/main.js']);
  });

  it('is taken as given by any of those flags, on the command line or in NODE_OPTIONS, however written', () => {
    expect(heapSizeGiven([], '')).toBe(false);
    expect(heapSizeGiven(['--enable-source-maps'], '--no-warnings')).toBe(false);
    expect(heapSizeGiven(['--max-old-space-size=640'])).toBe(true);
    expect(heapSizeGiven(['--max_old_space_size=640'])).toBe(true);
    expect(heapSizeGiven(['--max-semi-space-size=32'])).toBe(true);
    expect(heapSizeGiven([], '--enable-source-maps  --max-old-space-size-percentage=50')).toBe(true);
  });

  it('reads a limit only below the machine’s memory', () => {
    expect(memoryLimit(512 * 2 ** 20, 16 * GiB)).toBe(512 * 2 ** 20);
    expect(memoryLimit(0, 16 * GiB)).toBeUndefined();
    // Node 22 and later report "no limit" as the largest number a cgroup file can hold.
    expect(memoryLimit(2 ** 64, 16 * GiB)).toBeUndefined();
    expect(memoryLimit(16 * GiB, 16 * GiB)).toBeUndefined();
  });

  it('makes `npm start` start Node again only under a limit and without a size of its own', () => {
    const limit = 1 * GiB;
    expect(startFlags({ execArgv: [], limit, knowsPercentage: true })).toEqual([...HEAP_FLAGS]);
    // A Node without the percentage flag gets the same share in MiB, as Node would compute it.
    expect(startFlags({ execArgv: [], limit: 1000 * 2 ** 20, knowsPercentage: false })).toEqual([
      `--max-old-space-size=${(1000 * HEAP_PERCENTAGE) / 100}`,
      `--max-semi-space-size=${SEMI_SPACE_MIB}`,
      expect.stringMatching(/^--heap-growing-percent=\d+$/),
    ]);
    expect(startFlags({ execArgv: [], limit: undefined, knowsPercentage: true })).toBeUndefined();
    expect(startFlags({ execArgv: ['--max-old-space-size=300'], limit, knowsPercentage: true })).toBeUndefined();
    expect(
      startFlags({ execArgv: [], nodeOptions: '--max-old-space-size=300', limit, knowsPercentage: true }),
    ).toBeUndefined();
    // The Node started again carries the flags: it is not started a third time.
    expect(startFlags({ execArgv: [...HEAP_FLAGS], limit, knowsPercentage: true })).toBeUndefined();
  });
});
