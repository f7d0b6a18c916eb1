import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUILD_TIMEOUT_MS,
  buildImageOrSkip,
  deployedGateway,
  IMAGE,
  LIMITS,
  logsOf,
  podman,
  ROOT,
  readyUrl,
} from '../helpers/image.ts';
import { NEVER_IN_PRODUCTION } from '../helpers/production-tree.ts';
import { subscribeSse } from '../helpers/subscriptions.ts';

/**
 * The image, built from the Dockerfile unchanged (test/helpers/image.ts) and run as the manifests
 * run it: a read-only root file system, user 1000, HOST=0.0.0.0, over the embedded emulator. A
 * query, a subscription over SSE, its HEALTHCHECK, a clean exit on SIGTERM within the grace period,
 * and what the image holds. Without podman (or as a user other than root) a user's run skips this,
 * saying why; CI (REQUIRE_PODMAN=1, set by .ci/run) fails instead. image-memory.test.ts runs it in
 * a container of the manifest's memory request.
 */
/**
 * The image's size limit: 250 MB. The stand-in base is 224 MB (Node 24.21 with its npm on Debian
 * bookworm, as the official one); the runtime tree scripts/image/trace.mjs copies adds about 25
 * (GraphiQL's page alone 9).
 */
const MAX_IMAGE_BYTES = 250 * 1000 * 1000;
/** deploy/kubernetes/deployment.yaml's terminationGracePeriodSeconds. */
const GRACE_SECONDS = deployedGateway().terminationGracePeriodSeconds;
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};

let skipped: string | undefined;
let container: string | undefined;

beforeAll(async () => {
  skipped = await buildImageOrSkip('the image tests');
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  if (container) await podman('rm', '--force', container);
});

describe('the image', () => {
  it('keeps its HEALTHCHECK, runs as user 1000 and stays within its size', async (ctx) => {
    if (skipped) ctx.skip(skipped);
    const inspect = await podman('image', 'inspect', IMAGE);
    expect(inspect.code, inspect.stderr).toBe(0);
    const [image] = JSON.parse(inspect.stdout) as {
      Size: number;
      Config: { User: string };
      // Kept by --format docker only: the OCI format has no health check.
      Healthcheck?: { Test: string[] };
    }[];
    expect(image!.Config.User).toBe('1000:1000');
    expect(image!.Healthcheck?.Test.slice(0, 2)).toEqual(['CMD', 'node']);
    expect(image!.Size).toBeLessThanOrEqual(MAX_IMAGE_BYTES);
  });

  it('holds no dev dependency, no npm cache or log, no source map and no test', async (ctx) => {
    if (skipped) ctx.skip(skipped);
    // Read inside the image as root, so that root's home (npm's cache and logs) is readable too.
    const script = `
      const fs = require('node:fs'), path = require('node:path');
      const files = (dir) => fs.readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
      const packages = (base, under = 'node_modules') => fs.readdirSync(path.join(base, under), { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
        .flatMap((e) => {
          const p = path.join(under, e.name);
          if (e.name.startsWith('@')) return packages(base, p);
          const nested = fs.existsSync(path.join(base, p, 'node_modules')) ? packages(base, path.join(p, 'node_modules')) : [];
          return [...(fs.existsSync(path.join(base, p, 'package.json')) ? [p] : []), ...nested];
        });
      const all = files('/app');
      console.log(JSON.stringify({
        packages: packages('/app'),
        npmHome: fs.existsSync('/root/.npm') ? files('/root/.npm') : [],
        maps: all.filter((f) => f.endsWith('.map')),
        tests: all.filter((f) => /\\.(test|spec)\\.[cm]?[jt]s$/.test(f) && f.startsWith('/app/dist')),
        declarations: all.filter((f) => /\\.d\\.[cm]?ts$/.test(f)),
      }));`;
    const listed = await podman('run', '--rm', ...LIMITS, '--user', '0', '--entrypoint', 'node', IMAGE, '-e', script);
    expect(listed.code, listed.stderr).toBe(0);
    const found = JSON.parse(listed.stdout) as Record<
      'packages' | 'npmHome' | 'maps' | 'tests' | 'declarations',
      string[]
    >;
    expect(found.packages.length).toBeGreaterThan(20);
    expect(found.packages.filter((p) => !lock.packages[p])).toEqual([]);
    expect(found.packages.filter((p) => lock.packages[p]?.dev)).toEqual([]);
    for (const name of NEVER_IN_PRODUCTION) expect(found.packages).not.toContain(`node_modules/${name}`);
    expect(found.npmHome).toEqual([]);
    expect(found.maps).toEqual([]);
    expect(found.tests).toEqual([]);
    expect(found.declarations).toEqual([]);
  }, 60_000);

  it('runs read-only as user 1000 with HOST=0.0.0.0: a query, a subscription over SSE, its HEALTHCHECK, then exit 0 on SIGTERM', async (ctx) => {
    if (skipped) ctx.skip(skipped);
    const started = await podman(
      'run',
      '--detach',
      '--read-only',
      '--user',
      '1000:1000',
      ...LIMITS,
      '--publish',
      '127.0.0.1::4000',
      // The manifests' settings that matter here (HOST=0.0.0.0 is the image's own), and docs/deploying.md's
      // `docker run` example: the embedded emulator, no client authentication.
      '--env',
      'HOST=0.0.0.0',
      '--env',
      'ALLOWED_HOSTS=localhost,127.0.0.1',
      '--env',
      'GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes',
      '--env',
      'CHANGES_POLL_INTERVAL_MS=500',
      IMAGE,
    );
    expect(started.code, started.stderr).toBe(0);
    container = started.stdout.trim();
    const logs = () => logsOf(container!);
    const url = await readyUrl(container);

    const query = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ event(eventId: 5001) { eventId name } }' }),
    });
    expect(query.status).toBe(200);
    expect(((await query.json()) as { data?: { event?: { eventId: number } } }).data?.event?.eventId).toBe(5001);

    // The embedded emulator listens on the container's loopback: asked from inside it.
    const emulatorUrl = (await logs())
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; url?: string })
      .find((entry) => entry.msg?.includes('embedded emulator'))?.url;
    expect(emulatorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const inside = async (path: string, init?: RequestInit): Promise<unknown> => {
      const script = `fetch(${JSON.stringify(`${emulatorUrl}${path}`)}, ${JSON.stringify(init ?? {})}).then((r) => r.text()).then((t) => process.stdout.write(t))`;
      const result = await podman('exec', container!, 'node', '-e', script);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout);
    };
    // The feed reads every record first (its baseline: event 5002's one page of 1000), then polls
    // for what changed since: a booking after the first such poll is a change.
    const polls = async () =>
      (
        (await inside('/_emulator/requests')) as { requests: { endpoint: string; params: Record<string, unknown> }[] }
      ).requests.filter((r) => r.endpoint === 'getreservation' && r.params.modifiedAfterDate !== undefined).length;
    const subscription = await subscribeSse(fetch, url, { eventId: 5002 });
    expect(subscription.response.status).toBe(200);
    await expect.poll(polls, { timeout: 30_000, interval: 500 }).toBeGreaterThan(0);
    const { reservationNumber } = (await inside('/_emulator/bookings', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ eventId: 5002 }),
    })) as { reservationNumber: number };
    const [change] = await subscription.take(1);
    expect(change?.errors).toBeUndefined();
    expect(change?.data?.reservationChanged).toMatchObject({
      kind: 'CREATED',
      reservation: { reservationNumber, eventId: 5002 },
    });

    const health = await podman('healthcheck', 'run', container);
    expect(health.code, health.stdout + health.stderr).toBe(0);

    // podman stop sends SIGTERM, then SIGKILL after the grace period: a kill would exit 137.
    const stopped = await podman('stop', '--time', String(GRACE_SECONDS), container);
    expect(stopped.code, stopped.stderr).toBe(0);
    const exit = await podman('inspect', '--format', '{{.State.ExitCode}}', container);
    expect(exit.stdout.trim(), await logs()).toBe('0');
    expect(await logs()).toContain('Reservation gateway stopped cleanly');
    await subscription.completed;
  }, 180_000);
});
