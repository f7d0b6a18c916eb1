import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { describeConfiguration } from '../../src/config/check.ts';
import { loadConfig } from '../../src/config/environment.ts';
import { CLIENT_KEYS, LICENSEES_JSON, licenseesEnv, sha256 } from '../auth/licensees-fixture.ts';
import { GATEWAY_MAIN, ROOT } from '../helpers/built-gateway.ts';
import { run } from '../helpers/run.ts';

/**
 * `node dist/main.js --check` (docs/operating.md#checking-a-configuration), run as operators run
 * it: a process of the built gateway. A good configuration is described (licensees, clients and
 * their scopes, auth, documents, listeners, Redis) without any credential, exit 0; a bad one is
 * named a problem a line, exit 2, as a start refuses it. It never listens, connects (Redis, the
 * upstream) or starts the emulator: a preload refuses both, and the test holds the ports and counts
 * what reaches its own upstream and Redis stand-ins.
 */

/** Loaded before the gateway: any listen (the gateway's, the emulator's) or outbound connection ends the process, exit 99. */
const NOTHING_STARTED = `data:text/javascript,${encodeURIComponent(`
import net from 'node:net';
const refuse = (what) => function () { process.stderr.write('--check tried to ' + what + '\\n'); process.exit(99); };
net.Server.prototype.listen = refuse('listen');
net.Socket.prototype.connect = refuse('connect');
`)}`;

/** Runs `node --import <NOTHING_STARTED> dist/main.js --check` with `env` alone (and PATH). */
function check(env: Record<string, string>) {
  return run(process.execPath, ['--import', NOTHING_STARTED, GATEWAY_MAIN, '--check'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
  });
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server of the test's own on a free loopback port: its port, and how many connections reached it. */
async function held(server: Server = createServer()): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, connections: () => connections };
}

function tempFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'check-')), name);
  writeFileSync(path, content);
  return path;
}

const OPS_TOKEN = 'ops-token-never-printed-0123456789';
const REDIS_PASSWORD = 'redis-password-never-printed';
const UPSTREAM_PASSWORD = 'upstream-password-never-printed';

describe('node dist/main.js --check', () => {
  it('describes a good configuration, exit 0, without a key, digest, token or password, and starts nothing', async () => {
    let upstreamRequests = 0;
    const upstream = await held(
      createHttpServer((_request, response) => {
        upstreamRequests++;
        response.end('{}');
      }),
    );
    const redis = await held();
    // The ports it would serve on, held here: a listen would fail (and the preload refuses it anyway).
    const port = await held();
    const opsPort = await held();
    const licensees = licenseesEnv();
    const checked = await check({
      ...licensees,
      UPSTREAM_BASE_URL: `http://gateway:${UPSTREAM_PASSWORD}@127.0.0.1:${upstream.port}`,
      REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${redis.port}/0`,
      HOST: '0.0.0.0',
      ALLOWED_HOSTS: 'api.example.com',
      PORT: String(port.port),
      OPS_HOST: '0.0.0.0',
      OPS_PORT: String(opsPort.port),
      OPS_TOKEN,
    });
    expect(checked.code, checked.output).toBe(0);
    expect(checked.stderr).toBe('');
    const out = checked.stdout;
    expect(out).toContain('the configuration is valid');
    expect(out).toContain(`http://0.0.0.0:${port.port}/graphql`);
    expect(out).toContain(`http://0.0.0.0:${opsPort.port}/status`);
    expect(out).toContain('OPS_TOKEN required');
    expect(out).toContain('allowed hosts:  api.example.com');
    expect(out).toContain(`upstream:       http://127.0.0.1:${upstream.port}\n`);
    expect(out).toContain(`redis:          on, redis://127.0.0.1:${redis.port}/0`);
    expect(out).toContain('auth:           api-key');
    expect(out).toContain('automatic persisted queries');
    expect(out).toContain('licensees (2):');
    expect(out).toContain('acme: systemIdentifier 1001, time zone UTC');
    expect(out).toContain('globex: systemIdentifier 2002, time zone America/New_York');
    expect(out).toContain('client acme-web: read\n');
    expect(out).toContain('client acme-ops: read, write\n');
    expect(out).toContain('client globex-web: read\n');
    expect(out).toContain('client globex-ops: read, write\n');
    const secrets = [
      ...Object.values(CLIENT_KEYS),
      ...Object.values(CLIENT_KEYS).map(sha256),
      licensees.ACME_UPSTREAM_KEY!,
      licensees.GLOBEX_UPSTREAM_KEY!,
      OPS_TOKEN,
      REDIS_PASSWORD,
      UPSTREAM_PASSWORD,
    ];
    for (const secret of secrets) expect(checked.output).not.toContain(secret);
    expect(checked.output).not.toMatch(/apiKeySha256|[0-9a-f]{64}/);
    expect(upstreamRequests).toBe(0);
    expect(upstream.connections()).toBe(0);
    expect(redis.connections()).toBe(0);
  }, 30_000);

  it('over the embedded emulator: describes the demo licensee and starts no emulator', async () => {
    const checked = await check({ PORT: '4000' });
    expect(checked.code, checked.output).toBe(0);
    expect(checked.stdout).toContain(
      'the embedded emulator and its demo data (no UPSTREAM_BASE_URL; not started by --check)',
    );
    expect(checked.stdout).toContain('auth:           none (GATEWAY_AUTH): every request acts for licensee 1001');
    expect(checked.stdout).toContain('redis:          off');
    expect(checked.output).not.toContain('demo-key-1001');
    expect(checked.output).not.toMatch(/emulator.*listening|serving over the embedded emulator/);
  }, 30_000);

  it('counts the trusted documents of TRUSTED_DOCUMENTS_FILE', async () => {
    const document = 'query EventName { event(eventId: 5001) { name } }';
    const manifest = tempFile('persisted-documents.json', JSON.stringify({ [`sha256:${sha256(document)}`]: document }));
    const checked = await check({ TRUSTED_DOCUMENTS_FILE: manifest });
    expect(checked.code, checked.output).toBe(0);
    expect(checked.stdout).toContain('documents:      1 trusted document (TRUSTED_DOCUMENTS_FILE): only these run');
  }, 30_000);

  const badJson = () => ({ ...licenseesEnv('{"licensees": [ {"id": "acme",'), GATEWAY_AUTH: 'api-key' });
  const badEntry = () =>
    licenseesEnv({
      licensees: [
        { ...LICENSEES_JSON.licensees[0], clients: [{ name: 'acme-web', apiKeySha256: 'abc', scopes: ['admin'] }] },
      ],
    });
  it.each([
    [
      'an unknown setting value',
      () => ({ GATEWAY_AUTH: 'bogus' }),
      ['GATEWAY_AUTH: must be none, api-key or jwt (got "bogus")'],
    ],
    [
      'a missing file',
      () => ({ LICENSEES_FILE: '/nonexistent' }),
      ['LICENSEES_FILE cannot read /nonexistent (ENOENT)'],
    ],
    ['a licensees file that is not JSON', badJson, [/^LICENSEES_FILE \/.*licensees\.json is not valid JSON$/]],
    [
      'a licensees file with bad entries',
      badEntry,
      [
        /^LICENSEES_FILE licensees\[0\] \("acme"\)\.clients\[0\]\.apiKeySha256: must be the lowercase hex SHA-256/,
        /^LICENSEES_FILE licensees\[0\] \("acme"\)\.clients\[0\]\.scopes\[0\]: must be "read", "write" or "webhooks:manage"$/,
      ],
    ],
    [
      'OPS_HOST off loopback without OPS_TOKEN',
      () => ({ OPS_HOST: '0.0.0.0' }),
      [/^OPS_TOKEN: is required when OPS_HOST is not a loopback address \(OPS_HOST=0\.0\.0\.0\)/],
    ],
    [
      'a bad trusted documents file',
      () => ({ TRUSTED_DOCUMENTS_FILE: tempFile('documents.json', '{"sha256:0000": "query { x }"}') }),
      [/^TRUSTED_DOCUMENTS_FILE "sha256:0000": the key must be/],
    ],
  ] as const)(
    'refuses %s: exit 2, a line naming it, nothing on stdout',
    async (_kind, env, expected) => {
      const checked = await check(env());
      expect(checked.code, checked.output).toBe(2);
      expect(checked.stdout).toBe('');
      const lines = checked.stderr.trimEnd().split('\n');
      expect(lines[0]).toBe('invalid settings:');
      const problems = lines.slice(1).map((line) => line.trim());
      expect(problems).toHaveLength(expected.length);
      expected.forEach((want, index) =>
        typeof want === 'string' ? expect(problems[index]).toBe(want) : expect(problems[index]).toMatch(want),
      );
      expect(checked.output).not.toMatch(/\n\s+at |--check tried to/);
    },
    30_000,
  );

  it('names every problem at once, one line each, and never a secret value', async () => {
    const checked = await check({
      GATEWAY_AUTH: 'bogus',
      LICENSEES_FILE: '/nonexistent',
      OPS_HOST: '0.0.0.0',
      JWT_SECRET: 'short-jwt-secret-never-printed',
      PORT: 'eighty',
    });
    expect(checked.code, checked.output).toBe(2);
    const problems = checked.stderr.trimEnd().split('\n').slice(1);
    expect(problems.map((line) => line.trim().split(/[: ]/)[0]).sort()).toEqual([
      'GATEWAY_AUTH',
      'JWT_SECRET',
      'LICENSEES_FILE',
      'OPS_TOKEN',
      'PORT',
    ]);
    expect(checked.output).not.toContain('short-jwt-secret-never-printed');
  }, 30_000);
});

describe('npm run check:config', () => {
  it('runs the same check on the built entry (building it first when stale), with its exit status', async () => {
    const npm = (env: Record<string, string>) =>
      run('npm', ['run', '--silent', 'check:config'], { cwd: ROOT, env: { PATH: process.env.PATH, ...env } });
    const good = await npm({ PORT: '0', OPS_PORT: '0' });
    expect(good.code, good.output).toBe(0);
    expect(good.stdout).toContain('the configuration is valid');
    const bad = await npm({ GATEWAY_AUTH: 'bogus' });
    expect(bad.code, bad.output).toBe(2);
    expect(bad.stderr).toContain('GATEWAY_AUTH: must be none, api-key or jwt (got "bogus")');
  }, 60_000);
});

describe('deploy/ci/check-config.yml', () => {
  it('passes the check it runs in the image, on deploy/kubernetes/licensees.json, without printing a stand-in secret', async () => {
    const workflow = parse(readFileSync(join(ROOT, 'deploy/ci/check-config.yml'), 'utf8')) as {
      jobs: Record<string, { steps: { env?: Record<string, string>; run?: string }[] }>;
    };
    const step = Object.values(workflow.jobs)
      .flatMap((job) => job.steps)
      .find((candidate) => candidate.run?.includes('--check'));
    const command = step!.run!.replace(/\\\n\s*/g, ' ').trim();
    expect(command).toMatch(/ node dist\/main\.js --check$/);
    // The container's environment: `-e NAME` from the step's env, `-e NAME=value` as written, and
    // the mounted files at their place in this repository.
    const mounts = new Map(
      [...command.matchAll(/-v "?\$PWD\/([^:"]+):([^:"]+)(?::ro)?"?/g)].map((m) => [m[2]!, join(ROOT, m[1]!)]),
    );
    const env: Record<string, string> = {};
    for (const [, name, value] of command.matchAll(/-e ([A-Z0-9_]+)(?:=(\S+))?/g)) {
      const given = value ?? String(step!.env![name!]);
      env[name!] = mounts.get(given) ?? given;
    }
    expect(Object.keys(env)).toContain('LICENSEES_FILE');
    const checked = await check(env);
    expect(checked.code, checked.output).toBe(0);
    expect(checked.stdout).toContain('licensee-1001: systemIdentifier 1001, time zone America/New_York');
    expect(checked.stdout).toContain('licensee-2002: systemIdentifier 2002, time zone Europe/Berlin');
    expect(checked.stdout).toContain('auth:           jwt (GATEWAY_AUTH), HS256 with JWT_SECRET');
    for (const name of ['LICENSEE_1001_KEY', 'LICENSEE_2002_KEY', 'JWT_SECRET', 'OPS_TOKEN'])
      expect(checked.output).not.toContain(env[name]);
  }, 30_000);
});

describe('describeConfiguration', () => {
  it('names the JWT settings but not the secret', () => {
    const secret = 'a-jwt-secret-of-at-least-32-bytes-0123456789';
    const text = describeConfiguration(
      loadConfig({
        ...licenseesEnv(),
        GATEWAY_AUTH: 'jwt',
        JWT_SECRET: secret,
        JWT_ISSUER: 'https://id.example.com/',
        JWT_AUDIENCE: 'reservations',
      }),
    );
    expect(text).toContain(
      'auth:           jwt (GATEWAY_AUTH), HS256 with JWT_SECRET, issuer https://id.example.com/, audience reservations, licensee claim licensee',
    );
    expect(text).not.toContain(secret);
  });

  it('prints the warnings a start would log', () => {
    const text = describeConfiguration(
      loadConfig({
        ...licenseesEnv({
          licensees: [{ id: 'local', systemIdentifier: '1001', key: 'inline-upstream-key-never-printed' }],
        }),
        GATEWAY_AUTH: 'none',
      }),
    );
    expect(text).toContain('warnings (1):\n    licensee "local" has its upstream key written in LICENSEES_FILE');
    expect(text).not.toContain('inline-upstream-key-never-printed');
  });
});
