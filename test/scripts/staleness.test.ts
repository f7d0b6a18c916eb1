import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isStale, newestSourceMtime, readStamp, STAMP_FILE } from '../../scripts/staleness.mjs';

/** `npm start` builds dist/ again when a source is newer than the last build, and only then. */

describe('isStale', () => {
  it('is stale without a stamp: never built, or a build that stopped before writing it', () => {
    expect(isStale(1_000, undefined)).toBe(true);
  });

  it('rebuilds when a source is newer than the newest source the last build saw', () => {
    expect(isStale(2_000, { newestSourceMs: 1_000 })).toBe(true);
  });

  it('runs the existing build when no source changed since', () => {
    expect(isStale(1_000, { newestSourceMs: 1_000 })).toBe(false);
    expect(isStale(500, { newestSourceMs: 1_000 })).toBe(false);
  });
});

describe('newestSourceMtime and readStamp', () => {
  mkdirSync('test/artifacts', { recursive: true });
  const root = mkdtempSync(join('test/artifacts', 'staleness-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds the newest file at any depth under src and among the tsconfig files; a source touched after a build makes it stale', () => {
    mkdirSync(join(root, 'src/schema'), { recursive: true });
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'src/main.ts'), '');
    writeFileSync(join(root, 'src/schema/event.ts'), '');
    writeFileSync(join(root, 'tsconfig.json'), '{}');
    utimesSync(join(root, 'src/main.ts'), 1_000, 1_000);
    utimesSync(join(root, 'src/schema/event.ts'), 3_000, 3_000);
    utimesSync(join(root, 'tsconfig.json'), 2_000, 2_000);
    expect(newestSourceMtime(root)).toBe(3_000_000);

    writeFileSync(join(root, 'dist', STAMP_FILE), JSON.stringify({ newestSourceMs: newestSourceMtime(root) }));
    expect(isStale(newestSourceMtime(root), readStamp(join(root, 'dist')))).toBe(false);

    utimesSync(join(root, 'src/schema/event.ts'), 4_000, 4_000);
    expect(isStale(newestSourceMtime(root), readStamp(join(root, 'dist')))).toBe(true);
  });

  it('counts an install after the build where src/ is (the bundle holds the packages), and not in a tree without src/', () => {
    const tree = mkdtempSync(join('test/artifacts', 'staleness-install-'));
    mkdirSync(join(tree, 'src'));
    mkdirSync(join(tree, 'node_modules'));
    writeFileSync(join(tree, 'src/main.ts'), '');
    writeFileSync(join(tree, 'node_modules/.package-lock.json'), '{}');
    utimesSync(join(tree, 'src/main.ts'), 1_000, 1_000);
    utimesSync(join(tree, 'node_modules/.package-lock.json'), 5_000, 5_000);
    expect(newestSourceMtime(tree)).toBe(5_000_000);
    // A production install: dist/ and the packages installed after it, no sources to build from.
    rmSync(join(tree, 'src'), { recursive: true });
    expect(newestSourceMtime(tree)).toBe(0);
    rmSync(tree, { recursive: true, force: true });
  });

  it('reads no stamp from a directory without one', () => {
    expect(readStamp(join(root, 'nowhere'))).toBeUndefined();
  });
});
