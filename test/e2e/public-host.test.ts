import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREE_PORTS, GATEWAY_MAIN, ROOT } from '../helpers/built-gateway.ts';
import { rawRequest } from '../helpers/raw-sockets.ts';
import { type Replica, startReplica } from '../helpers/replicas.ts';

/**
 * The gateway (`dist/main.js`) on a public HOST. Fault: GATEWAY_AUTH=none there only warned, so anyone who
 * reached the address acted for the licensee. Now it refuses to start (exit status 2, naming the
 * settings) unless GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes says it is meant (a proxy in front
 * authenticates); the server it then runs has the settings' timeouts and the Host check.
 */

describe('GATEWAY_AUTH=none on HOST=0.0.0.0', () => {
  it('refuses to start, with exit status 2 and a message naming the settings', () => {
    const run = spawnSync(process.execPath, [GATEWAY_MAIN], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOST: '0.0.0.0', ...FREE_PORTS, ALLOWED_HOSTS: 'gateway.example.com' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('GATEWAY_AUTH: none on HOST=0.0.0.0 (not a loopback address)');
    expect(run.stderr).toContain('GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes');
    expect(run.stdout).not.toContain('ready');
  });
});

describe('with GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes', () => {
  let replica: Replica;
  let base: string;
  beforeAll(async () => {
    replica = await startReplica({
      HOST: '0.0.0.0',
      ALLOWED_HOSTS: '127.0.0.1',
      GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: 'yes',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '1000',
    });
    base = `http://127.0.0.1:${new URL(replica.url).port}`;
  }, 60_000);
  afterAll(async () => {
    await replica?.stop();
  });

  it('starts, with the warning logged, and serves its allowed names only', async () => {
    expect(replica.output()).toContain('GATEWAY_AUTH=none on HOST 0.0.0.0 (GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes)');
    const body = JSON.stringify({ query: '{ __typename }' });
    const served = await rawRequest(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(served.status).toBe(200);
    const rebound = await rawRequest(`${base}/graphql`, {
      method: 'POST',
      headers: { host: 'rebound.attacker.example', 'content-type': 'application/json' },
      body,
    });
    expect(rebound.status).toBe(421);
    // GraphiQL is off by default on a public HOST.
    expect((await rawRequest(`${base}/graphql`, { headers: { accept: 'text/html' } })).status).toBe(404);
  });

  it('runs its server with the settings’ header timeout', async () => {
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  });
});
