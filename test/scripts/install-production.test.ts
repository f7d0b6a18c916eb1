import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * scripts/install-production.sh refuses a tree that is not built before it runs npm (the install
 * itself is tried in test/e2e/production-install.test.ts).
 */
const SCRIPT = fileURLToPath(new URL('../../scripts/install-production.sh', import.meta.url));
const tree = mkdtempSync(join(tmpdir(), 'reservation-gateway-unbuilt-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

describe('scripts/install-production.sh', () => {
  it('names what is missing from a tree without dist/, and installs nothing', () => {
    writeFileSync(join(tree, 'package.json'), '{"name": "x", "version": "0.0.0"}');
    writeFileSync(join(tree, 'package-lock.json'), '{"lockfileVersion": 3, "packages": {}}');
    const run = spawnSync('sh', [SCRIPT, tree], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${tree}/dist/main.js is missing: run \`npm run build\``);
    expect(spawnSync('ls', [tree], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort()).toEqual([
      'package-lock.json',
      'package.json',
    ]);
  });

  it('wants the build’s stamp too: without it `npm start` would try to build, which needs TypeScript', () => {
    mkdirSync(join(tree, 'dist'), { recursive: true });
    writeFileSync(join(tree, 'dist/main.js'), '');
    const run = spawnSync('sh', [SCRIPT, tree], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('dist/.build-stamp.json is missing');
  });
});
