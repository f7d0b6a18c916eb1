import { spawnSync } from 'node:child_process';
import { isStale, newestSourceMtime, readStamp } from '../../scripts/staleness.mjs';
import { DIST, ROOT } from '../helpers/built-gateway.ts';

/**
 * Builds dist/ before the run when `npm start` would (missing, or older than a source): the tests
 * that start the gateway as a process run the compiled one (test/helpers/built-gateway.ts). A build
 * that fails ends the run here, with the compiler's words.
 */
export default function setup(): void {
  if (!isStale(newestSourceMtime(ROOT), readStamp(DIST))) return;
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0)
    throw new Error(
      `npm run build failed (exit ${build.status}), so no test can start the built gateway:\n${build.stdout}${build.stderr}`,
    );
}
