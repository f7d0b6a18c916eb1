import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether dist/ must be built again before `npm start` runs it: plain JavaScript, so that starting
 * needs neither tsx nor TypeScript when dist/ is fresh.
 */

/**
 * The installed packages, which the bundle dist/main.js holds copies of: npm rewrites the second on
 * every install, so an upgrade makes the bundle stale. Counted only in a tree with src/: a tree
 * without sources (the image, a production install) is never built, and its own install is newer
 * than the dist/ it was given.
 */
const DEPENDENCY_INPUTS = ['package-lock.json', 'node_modules/.package-lock.json'];

/** What dist/ is built from: a change to any of these makes it stale. */
export const BUILD_INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', ...DEPENDENCY_INPUTS];

/** The file in the output directory that records what a build was made from. */
export const STAMP_FILE = '.build-stamp.json';

/**
 * Stale when there is no stamp (never built, or a build that did not finish) or when a source
 * changed after the newest source the last build saw.
 */
export function isStale(newestSourceMs, stamp) {
  if (!stamp || typeof stamp.newestSourceMs !== 'number') return true;
  return newestSourceMs > stamp.newestSourceMs;
}

/** The newest modification time (ms) of the files under `root`'s BUILD_INPUTS, 0 when none exist. */
export function newestSourceMtime(root, inputs = BUILD_INPUTS) {
  let newest = 0;
  const visit = (path) => {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return; // an optional input (say tsconfig.build.json in an old checkout) that is not there
    }
    if (stats.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else newest = Math.max(newest, stats.mtimeMs);
  };
  const withSources = statSync(join(root, 'src'), { throwIfNoEntry: false })?.isDirectory() ?? false;
  for (const input of inputs) if (withSources || !DEPENDENCY_INPUTS.includes(input)) visit(join(root, input));
  return newest;
}

/** The stamp a finished build left in `outDir`, or undefined. */
export function readStamp(outDir) {
  try {
    return JSON.parse(readFileSync(join(outDir, STAMP_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}
