import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEVER_IN_PRODUCTION, PRODUCTION_TREE } from '../helpers/production-tree.ts';
import { run } from '../helpers/run.ts';
import { subscribeSse } from '../helpers/subscriptions.ts';

/**
 * The production install, as the image makes it: the built tree alone (PRODUCTION_TREE, dist/ as
 * built for the run) in an empty folder, scripts/install-production.sh run there (a real `npm ci --omit=dev` from the
 * registry), then `node dist/main.js` over the embedded emulator: a query, a subscription over SSE,
 * and a clean exit on SIGTERM. Without the registry a user's run skips this, saying why; CI
 * (`CI` or REQUIRE_REGISTRY=1, set by .ci/run) fails instead.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

/** npm's words for a registry it cannot reach. */
const REGISTRY_DOWN = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b/;
const registryRequired = () => Boolean(process.env.CI) || process.env.REQUIRE_REGISTRY === '1';

let tree: string;
/** Why the tests cannot run here (the registry is unreachable outside CI); undefined when they can. */
let unreachable: string | undefined;

/** Folders above `dir` holding a node_modules: Node would find a missing dependency there and hide it. */
function nodeModulesAbove(dir: string): string[] {
  const found: string[] = [];
  for (let at = dirname(dir); ; at = dirname(at)) {
    if (existsSync(join(at, 'node_modules'))) found.push(at);
    if (dirname(at) === at) return found;
  }
}

/** Every package folder under node_modules (scoped and nested ones too), as the lock file names them. */
function installedPackages(base: string, under = 'node_modules'): string[] {
  const dir = join(base, under);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory() || entry.name.startsWith('.')) return [];
    if (entry.name.startsWith('@')) return installedPackages(base, join(under, entry.name));
    const path = join(under, entry.name);
    const isPackage = existsSync(join(base, path, 'package.json'));
    return [...(isPackage ? [path] : []), ...installedPackages(base, join(path, 'node_modules'))];
  });
}

/** How scripts/build.mjs begins each file of the bundle. */
const BUNDLE_BANNER = "import { createRequire as __bundleRequire } from 'node:module';";

/** The bare module specifiers the compiled files import, statically or on use. */
function importedPackages(dir: string): Set<string> {
  const names = new Set<string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    // The bundle (dist/main.js and its chunks) holds packages' code, code generators' text among it;
    // the modules it was made of are beside it, each as transpiled, and are read instead.
    if (text.startsWith(BUNDLE_BANNER)) continue;
    // `require(…)` too: what loads only on use is required through createRequire.
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)) {
      const specifier = m[1]!;
      if (!specifier.startsWith('.') && !specifier.startsWith('/')) names.add(specifier);
    }
  }
  return names;
}

const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const isBuiltin = (specifier: string) => specifier.startsWith('node:') || builtinModules.includes(specifier);

beforeAll(async () => {
  tree = mkdtempSync(join(tmpdir(), 'reservation-gateway-production-'));
  expect(nodeModulesAbove(tree)).toEqual([]);
  // dist/ as test/build/global-setup.ts built it for the run (scripts/build.mjs), with the rest.
  for (const path of PRODUCTION_TREE) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    cpSync(join(ROOT, path), join(tree, path), { recursive: true });
  }
  const env = { ...process.env };
  delete env.NODE_ENV; // vitest's "test"
  const install = await run('sh', ['scripts/install-production.sh'], { cwd: tree, env });
  if (install.code === 0) return;
  if (REGISTRY_DOWN.test(install.output) && !registryRequired()) {
    unreachable = `the npm registry is unreachable, so the production install cannot be tried here (CI, or REQUIRE_REGISTRY=1, makes this a failure):\n${install.output.slice(-500)}`;
    console.warn(`Skipping the production install tests: ${unreachable}`);
    return;
  }
  throw new Error(`scripts/install-production.sh failed with ${install.code}:\n${install.output}`);
}, 600_000); // a real `npm ci` from the registry: a minute, more on a busy machine

afterAll(() => {
  if (tree) rmSync(tree, { recursive: true, force: true });
});

describe('scripts/install-production.sh in an empty folder with the built tree alone', () => {
  it('installs the production dependencies and no development one', (ctx) => {
    if (unreachable) ctx.skip(unreachable);
    const installed = installedPackages(tree);
    expect(installed.length).toBeGreaterThan(20);
    // Each installed package as the lock file knows it: none extraneous, none a dev dependency.
    expect(installed.filter((path) => !lock.packages[path])).toEqual([]);
    expect(installed.filter((path) => lock.packages[path]?.dev)).toEqual([]);
    for (const name of NEVER_IN_PRODUCTION) expect(existsSync(join(tree, 'node_modules', name)), name).toBe(false);
    for (const name of Object.keys(manifest.dependencies))
      expect(existsSync(join(tree, 'node_modules', name, 'package.json')), name).toBe(true);
  });

  it('every module dist/ imports, the emulator and what loads only on use included, is a production dependency that resolves there', async (ctx) => {
    if (unreachable) ctx.skip(unreachable);
    const imported = [...importedPackages(join(tree, 'dist'))].filter((specifier) => !isBuiltin(specifier));
    expect(imported).toEqual(
      expect.arrayContaining([
        'graphql-yoga',
        '@faker-js/faker/locale/en',
        '@opentelemetry/exporter-trace-otlp-http',
        'i18n-iso-countries',
        // Federation's printer, loaded with the first _service { sdl }.
        '@apollo/federation-internals',
      ]),
    );
    expect(imported.filter((specifier) => !(packageOf(specifier) in manifest.dependencies))).toEqual([]);
    // Resolved from the tree's own node_modules, exports maps and all, as dist/ imports them.
    const script =
      'const missing = []; for (const s of process.argv.slice(1)) { try { import.meta.resolve(s); } catch { missing.push(s); } } console.log(JSON.stringify(missing));';
    const resolved = await run(process.execPath, ['--input-type=module', '-e', script, ...imported], {
      cwd: join(tree, 'dist'),
    });
    expect(resolved.code, resolved.output).toBe(0);
    expect(JSON.parse(resolved.output)).toEqual([]);
  });

  it('runs node dist/main.js over the embedded emulator: a query, a subscription over SSE, then a clean exit on SIGTERM', async (ctx) => {
    if (unreachable) ctx.skip(unreachable);
    const gateway = await start(process.execPath, ['dist/main.js']);
    try {
      const query = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ event(eventId: 5001) { eventId name hotels { hotelId } } }' }),
      });
      const answer = (await query.json()) as {
        data?: { event: { eventId: number; name: string; hotels: unknown[] } };
        errors?: unknown;
      };
      expect(query.status).toBe(200);
      expect(answer.errors).toBeUndefined();
      expect(answer.data?.event.eventId).toBe(5001);
      expect(answer.data?.event.hotels.length).toBeGreaterThan(0);

      const emulatorUrl = await gateway.emulatorUrl();
      expect(emulatorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // The feed first reads every record (its baseline: event 5002's one page of 1000), then polls
      // for what changed since; a booking after the first such poll is a change.
      const polls = async () => {
        const log = (await (await fetch(`${emulatorUrl}/_emulator/requests`)).json()) as {
          requests: { endpoint: string; params: Record<string, unknown> }[];
        };
        return log.requests.filter(
          (request) => request.endpoint === 'getreservation' && request.params.modifiedAfterDate !== undefined,
        ).length;
      };
      const subscription = await subscribeSse(fetch, gateway.url, { eventId: 5002 });
      expect(subscription.response.status).toBe(200);
      await expect.poll(polls, { timeout: 30_000, interval: 200 }).toBeGreaterThan(0);
      const booking = await fetch(`${emulatorUrl}/_emulator/bookings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ eventId: 5002 }),
      });
      expect(booking.status).toBe(200);
      const { reservationNumber } = (await booking.json()) as { reservationNumber: number };
      const [change] = await subscription.take(1);
      expect(change?.errors).toBeUndefined();
      expect(change?.data?.reservationChanged).toMatchObject({
        kind: 'CREATED',
        reservation: { reservationNumber, eventId: 5002 },
      });

      // The open stream ends with the process; nothing holds the exit back.
      const code = await gateway.stop('SIGTERM');
      expect(code, gateway.output()).toBe(0);
      await subscription.completed;
      expect(gateway.output()).toContain('Reservation gateway stopped cleanly');
    } finally {
      await gateway.stop('SIGKILL');
    }
  }, 120_000);

  it('runs npm start there too, without building: dist/ is fresh when no source is there to be newer', async (ctx) => {
    if (unreachable) ctx.skip(unreachable);
    const gateway = await start('npm', ['start']);
    try {
      expect((await fetch(gateway.url.replace(/\/graphql$/, '/health'))).status).toBe(200);
      expect(gateway.output()).not.toMatch(/built \d+ files/);
    } finally {
      await gateway.stop('SIGTERM');
    }
  }, 120_000);

  it('scripts/image/trace.mjs copies what runs (the image’s runtime tree): a query with tracing on and GraphiQL answer from the copy alone', async (ctx) => {
    if (unreachable) ctx.skip(unreachable);
    const traced = mkdtempSync(join(tmpdir(), 'reservation-gateway-traced-'));
    try {
      const trace = await run(process.execPath, [join(ROOT, 'scripts/image/trace.mjs'), tree, traced], { cwd: ROOT });
      expect(trace.code, trace.output).toBe(0);
      const packages = installedPackages(traced);
      expect(packages.filter((path) => !lock.packages[path] || lock.packages[path]?.dev)).toEqual([]);
      // Less than the install it was traced from: no second module format, types, manuals.
      expect(packages.length).toBeGreaterThan(20);
      expect(existsSync(join(traced, 'node_modules/@graphql-yoga/render-graphiql/cjs'))).toBe(false);
      expect(existsSync(join(traced, 'src'))).toBe(false);

      // OTEL_EXPORTER_OTLP_ENDPOINT loads OpenTelemetry's exporter on first use, as CommonJS: the
      // trace must have kept those files. Nothing listens there; spans are dropped, answers go on.
      const gateway = await start(process.execPath, ['dist/main.js'], {
        cwd: traced,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
      });
      try {
        const query = await fetch(gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ event(eventId: 5001) { eventId name } }' }),
        });
        expect(await query.json()).toMatchObject({ data: { event: { eventId: 5001 } } });
        const page = await fetch(gateway.url, { headers: { accept: 'text/html' } });
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('YogaGraphiQL');
      } finally {
        expect(await gateway.stop('SIGTERM'), gateway.output()).toBe(0);
      }
    } finally {
      rmSync(traced, { recursive: true, force: true });
    }
  }, 120_000);
});

/** The gateway started in the tree (or `cwd`) with the image's settings, PORT=0, and the URLs it reports. */
async function start(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  // As the Dockerfile sets them, on loopback; the change feeds poll every half second so a change arrives soon.
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: '0',
    OPS_PORT: '0',
    LOG_LEVEL: 'info',
    CHANGES_POLL_INTERVAL_MS: '500',
    ...options.env,
  };
  // Its own process group: `npm start` runs node under a shell, and a signal must reach them all.
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd ?? tree,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${command} ${args.join(' ')} was not ready within 60 s:\n${output}`)),
      60_000,
    );
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /ready at (http:\/\/\S+\/graphql)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    void exited.then((code) =>
      reject(
        new Error(
          `${command} ${args.join(' ')} exited with ${code} in ${relative(ROOT, options.cwd ?? tree)}:\n${output}`,
        ),
      ),
    );
  });
  // main.ts logs the embedded emulator's address (pino, one JSON object a line, written
  // asynchronously: it may follow the ready line).
  const emulatorUrl = async (): Promise<string> => {
    const find = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; url?: string })
        .find((entry) => entry.msg?.includes('embedded emulator'))?.url;
    for (let waited = 0; !find() && waited < 5_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    return find() ?? '(not logged)';
  };
  return {
    url,
    emulatorUrl,
    output: () => output,
    async stop(signal: NodeJS.Signals): Promise<number | null> {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, signal);
      return exited;
    },
  };
}
