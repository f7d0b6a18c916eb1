import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '../helpers/run.ts';

/**
 * One Node line everywhere: the release scripts/image/node.sh pins (the image's, CI's second run),
 * the Dockerfile's bases, docs/deploying.md, README, and package.json's engines, which says what the production
 * dependencies require. And the lock file installs with the npm that release bundles (an older npm
 * rejects a lock file a newer one wrote): `npm ci --dry-run` with it, in a copy. That Node is the
 * one .ci/run unpacks into the cache; a user's run without it skips that test, saying how to get
 * it; CI (REQUIRE_IMAGE_NODE=1, set by .ci/run) fails instead.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const IMAGE_NODE = /^NODE_IMAGE_VERSION=(\d+\.\d+\.\d+)$/m.exec(read('scripts/image/node.sh'))![1]!;
const MAJOR = IMAGE_NODE.split('.')[0]!;
const manifest = JSON.parse(read('package.json')) as { engines: { node: string } };
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { dev?: boolean; version?: string; engines?: { node?: string } | string[] }>;
};

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.split('.').map((part) => Number.parseInt(part, 10) || 0);
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
/** The lowest version a range admits: the lowest version any of its `||` alternatives names. */
const lowest = (range: string): Version =>
  range
    .split('||')
    .map((alternative) => parse(/(\d+(?:\.(?:\d+|x))*)/.exec(alternative)?.[1] ?? '0'))
    .sort(compare)[0]!;

describe('the Node line', () => {
  it('is the same major in scripts/image/node.sh, both Dockerfile stages, docs/deploying.md and README', () => {
    const froms = [...read('Dockerfile').matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms).toEqual([`node:${MAJOR}-bookworm-slim`, `node:${MAJOR}-bookworm-slim`]);
    expect(read('docs/deploying.md')).toContain(`node:${MAJOR}-bookworm-slim`);
    expect(read('README.md')).toContain(`the image runs Node ${MAJOR} LTS`);
  });

  it('engines names the highest lower bound of the production dependencies, and the image’s Node is above it', () => {
    const bounds = Object.entries(lock.packages)
      .filter(
        ([path, entry]) => path && !entry.dev && entry.engines && !Array.isArray(entry.engines) && entry.engines.node,
      )
      .map(([path, entry]) => ({ path, bound: lowest((entry.engines as { node: string }).node) }));
    const highest = bounds
      .map((b) => b.bound)
      .sort(compare)
      .at(-1)!;
    expect(
      /^>=\s*(\S+)$/.exec(manifest.engines.node)?.[1],
      JSON.stringify(bounds.filter((b) => compare(b.bound, highest) === 0)),
    ).toBeDefined();
    expect(compare(parse(/^>=\s*(\S+)$/.exec(manifest.engines.node)![1]!), highest)).toBe(0);
    expect(compare(parse(IMAGE_NODE), highest)).toBeGreaterThan(0);
  });

  it('installs the lock file with the npm the image’s Node bundles (npm ci --dry-run, in a copy)', async (ctx) => {
    const dir = join(
      process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
      'reservation-gateway',
      `node-${IMAGE_NODE}`,
    );
    const npmCli = join(dir, 'lib/node_modules/npm/bin/npm-cli.js');
    if (!existsSync(join(dir, 'bin/node')) || !existsSync(npmCli)) {
      const why = `Node ${IMAGE_NODE} is not unpacked in ${dir}: \`sh scripts/image/node.sh\` unpacks it`;
      if (process.env.REQUIRE_IMAGE_NODE === '1') throw new Error(`REQUIRE_IMAGE_NODE=1 but ${why}`);
      console.warn(
        `Skipping the lock file check with the image's npm: ${why} (REQUIRE_IMAGE_NODE=1 makes this a failure)`,
      );
      ctx.skip(why);
    }
    const copy = mkdtempSync(join(tmpdir(), 'reservation-gateway-lock-'));
    try {
      for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, file), join(copy, file));
      const result = await run(
        join(dir, 'bin/node'),
        [npmCli, 'ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
        {
          cwd: copy,
          env: {
            ...process.env,
            PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
            npm_config_cache: join(copy, '.npm'),
          },
        },
      );
      expect(result.code, result.output.slice(-2000)).toBe(0);
      expect(result.output).toMatch(/added \d+ packages/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 120_000);
});
