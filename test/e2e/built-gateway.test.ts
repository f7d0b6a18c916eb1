import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { DIST, GATEWAY_MAIN, ROOT } from '../helpers/built-gateway.ts';

/**
 * What `npm start` runs: the gateway compiled by scripts/build.mjs (dist/, built for the run by
 * test/build/global-setup.ts), started with plain node (no tsx), over an emulator given by
 * UPSTREAM_BASE_URL.
 */
let emulator: Emulator;
let gateway: ChildProcess;
let url: string;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  gateway = spawn(process.execPath, [GATEWAY_MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      OPS_PORT: '0',
      LOG_LEVEL: 'warn',
      UPSTREAM_BASE_URL: emulator.url,
      UPSTREAM_KEY: 'demo-key-1001',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /ready at (http:\/\/\S+\/graphql)/.exec(output);
      if (ready) resolve(ready[1]!);
    };
    gateway.stdout!.on('data', read);
    gateway.stderr!.on('data', read);
    gateway.once('exit', (code) => reject(new Error(`dist/main.js exited with ${code}:\n${output}`)));
  });
}, 60_000); // a start: seconds, but a minute on a machine shared by several test runs

afterAll(async () => {
  if (gateway?.exitCode === null) {
    const exited = new Promise((resolve) => gateway.once('exit', resolve));
    gateway.kill('SIGTERM');
    await exited;
  }
  await emulator?.close();
});

describe('the built gateway (dist/main.js)', () => {
  it('answers GraphQL over the service UPSTREAM_BASE_URL names', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ event(eventId: 5001) { eventId name } }' }),
    });
    const body = (await res.json()) as { data?: { event: { eventId: number; name: string } } };
    expect(res.status).toBe(200);
    expect(body.data?.event.eventId).toBe(5001);
    expect(emulator.state.log.some((call) => call.endpoint === 'getevent')).toBe(true);
  });

  it('is one bundle: dist/main.js loads only its chunks, never the transpiled modules beside it (each would be a second copy in memory)', () => {
    const bundle = readdirSync(DIST).filter((name) => name === 'main.js' || /^chunk-\w+\.js$/.test(name));
    expect(bundle.length).toBeGreaterThan(1);
    const relative = bundle.flatMap((name) =>
      [...readFileSync(join(DIST, name), 'utf8').matchAll(/\b(?:from|import)\s*\(?\s*"(\.[^"]*)"/g)].map((m) => m[1]),
    );
    expect(relative.length).toBeGreaterThan(0);
    expect(relative.filter((specifier) => !/^\.\/chunk-\w+\.js$/.test(specifier!))).toEqual([]);
  });

  it('answers the router’s `_service { sdl }` with federation’s printer, which the bundle now imports with the schema instead of requiring it on use', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ _service { sdl } }' }),
    });
    const body = (await res.json()) as { data?: { _service: { sdl: string } } };
    expect(body.data?._service.sdl).toContain('@link(url: "https://specs.apollo.dev/federation/v2.9"');
    expect(body.data?._service.sdl).toContain('type Reservation');
  });

  it('serves GraphiQL with the example query, a file that is not TypeScript copied into dist', async () => {
    const res = await fetch(url, { headers: { accept: 'text/html' } });
    const page = await res.text();
    expect(res.status).toBe(200);
    expect(page).toContain('Reservation gateway');
    expect(page).toContain('reservations(first:');
  });
});
