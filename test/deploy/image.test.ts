import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { HEAP_FLAGS } from '../../src/config/heap.ts';
import { PRODUCTION_TREE } from '../helpers/production-tree.ts';

/**
 * The Dockerfile, read rather than built (test/e2e/image.test.ts builds and runs it with podman):
 * its runtime stage is the tree scripts/image/trace.mjs copies (test/e2e/production-install.test.ts
 * runs such a tree), run as a non-root user, and its health check works against a real server.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined and comments left out, split into stages. */
function stages(text: string): Instruction[][] {
  const joined = text.replace(/\\\n/g, ' ');
  const instructions = joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line)!;
      return { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' ').trim() };
    });
  const result: Instruction[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

const dockerfile = stages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const [build = [], runtime = []] = dockerfile;
const all = (stage: Instruction[], keyword: string) => stage.filter((i) => i.keyword === keyword).map((i) => i.args);
const one = (stage: Instruction[], keyword: string) => all(stage, keyword).at(-1) ?? '';

describe('the Dockerfile', () => {
  it('builds in a stage with every dependency, and runs on a slim Node 24 base', () => {
    expect(dockerfile).toHaveLength(2);
    expect(one(build, 'FROM')).toMatch(/^node:24(\.[\d.]+)?-(bookworm-)?slim AS build$/);
    expect(one(runtime, 'FROM')).toMatch(/^node:24(\.[\d.]+)?-(bookworm-)?slim$/);
    expect(all(build, 'RUN')).toEqual(
      expect.arrayContaining([expect.stringMatching(/(^|; )npm ci\b/), 'npm run build']),
    );
    expect(all(build, 'RUN').some((run) => run.includes('--omit=dev'))).toBe(false);
  });

  it('gives `npm ci` the registry settings as build secrets, never as a layer, and installs once', () => {
    const installs = [...all(build, 'RUN'), ...all(runtime, 'RUN')].filter((run) =>
      /npm ci|npm install|install-production/.test(run),
    );
    expect(installs).toHaveLength(1);
    expect(installs[0]).toContain('--mount=type=secret,id=npmrc,target=/root/.npmrc');
    expect(installs[0]).toContain('--mount=type=secret,id=ca,target=/run/secrets/ca');
    const copied = [...all(build, 'COPY'), ...all(runtime, 'COPY')].join(' ');
    expect(copied).not.toMatch(/npmrc|\.pem|\.crt/);
  });

  it('copies into the runtime stage only the tree scripts/image/trace.mjs traced from the built one, and runs nothing there', () => {
    expect(all(build, 'RUN').at(-1)).toBe('node scripts/image/trace.mjs /app /runtime');
    expect(all(runtime, 'COPY')).toEqual(['--from=build /runtime ./']);
    expect(all(runtime, 'RUN')).toEqual([]);
    // What the trace copies besides what Node loads: the production tree but what installs it.
    const trace = readFileSync(join(ROOT, 'scripts/image/trace.mjs'), 'utf8');
    const installs = ['dist', 'scripts/install-production.sh', 'package-lock.json'];
    for (const path of PRODUCTION_TREE.filter((p) => !installs.includes(p))) {
      expect(trace).toContain(`'${path}'`);
    }
  });

  it('runs as a non-root user given by number, with NODE_ENV=production and HOST=0.0.0.0', () => {
    const env = Object.fromEntries(
      all(runtime, 'ENV').flatMap((args) => [...args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])),
    );
    expect(env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' });
    const user = one(runtime, 'USER');
    // A number, so that Kubernetes' runAsNonRoot can check it; the manifests run as the same one.
    expect(user).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
    const manifest = readFileSync(join(ROOT, 'deploy/kubernetes/deployment.yaml'), 'utf8');
    expect(manifest).toContain(`runAsUser: ${user.split(':')[0]}`);
  });

  it('starts node dist/main.js in exec form, so that SIGTERM reaches Node, with the heap sized from the container', () => {
    expect(JSON.parse(one(runtime, 'CMD'))).toEqual(['node', ...HEAP_FLAGS, 'dist/main.js']);
  });

  it('lets only what the build stage copies into the build context', () => {
    const sources = all(build, 'COPY').flatMap((args) => args.split(' ').slice(0, -1));
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    expect(ignore[0]).toBe('*');
    expect(
      ignore
        .slice(1)
        .map((line) => line.replace(/^!/, ''))
        .sort(),
    ).toEqual([...new Set(sources)].sort());
  });
});

describe('the image’s HEALTHCHECK', () => {
  const healthcheck = one(runtime, 'HEALTHCHECK');
  const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** Runs the check as Docker would, against a server on PORT answering /health with `status`. */
  async function check(status: number | undefined): Promise<{ code: number | null; paths: string[] }> {
    const paths: string[] = [];
    let port = 1; // nothing listens there
    if (status !== undefined) {
      server = createServer((req, res) => {
        paths.push(req.url ?? '');
        res.writeHead(status).end();
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    }
    const [program, ...args] = command;
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(program === 'node' ? process.execPath : program!, args, {
        env: { PORT: String(port) },
        stdio: 'ignore',
      });
      child.once('exit', resolve);
    });
    return { code, paths };
  }

  it('asks /health with Node’s own fetch (slim images have no curl), on the image’s PORT', async () => {
    expect(healthcheck).toMatch(/^--interval=\S+ --timeout=\S+ --start-period=\S+ --retries=\d+ CMD \[/);
    expect(command[0]).toBe('node');
    expect(await check(200)).toEqual({ code: 0, paths: ['/health'] });
  });

  it('fails on an answer other than 2xx, and when nothing answers', async () => {
    expect((await check(503)).code).toBe(1);
    expect((await check(undefined)).code).toBe(1);
  });
});
