import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GATEWAY_MAIN, ROOT } from '../helpers/built-gateway.ts';
import { rawRequest } from '../helpers/raw-sockets.ts';
import { type Replica, startReplica } from '../helpers/replicas.ts';

/**
 * The gateway (`dist/main.js`) with the operators' pages on their own listener (OPS_PORT, OPS_HOST). Fault: they
 * were served on the clients' port and, without OPS_TOKEN, to any connection from 127.0.0.1,
 * which behind a proxy on the same machine or a mesh sidecar is every client. Off loopback the
 * token is required: the gateway refuses to start without it, as it refuses other bad settings.
 */
const OPS_TOKEN = 'ops-token-for-the-operators-port-0123456789';

/** Runs the built gateway with `env` until it exits (a refused setting exits before listening). */
function run(env: Record<string, string>) {
  return spawnSync(process.execPath, [GATEWAY_MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: '0', OPS_PORT: '0', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('settings the gateway refuses to start with', () => {
  it('OPS_HOST=0.0.0.0 without OPS_TOKEN: exit status 2, and a message naming OPS_TOKEN and OPS_HOST', () => {
    const refused = run({ OPS_HOST: '0.0.0.0' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('OPS_TOKEN: is required when OPS_HOST is not a loopback address');
    expect(refused.stderr).toContain('OPS_HOST=0.0.0.0');
    expect(refused.stdout).not.toContain('ready');
  });

  it('OPS_PORT equal to PORT: exit status 2, and a message naming both', () => {
    const refused = run({ PORT: '4817', OPS_PORT: '4817' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('OPS_PORT: must differ from PORT (both are 4817)');
    expect(refused.stdout).not.toContain('ready');
  });
});

describe('a gateway process with OPS_TOKEN', () => {
  let replica: Replica;
  beforeAll(async () => {
    replica = await startReplica({ OPS_TOKEN, LOG_LEVEL: 'info' });
  }, 60_000);
  afterAll(async () => {
    await replica?.stop();
  });

  it('prints where the operators’ port listens, beside the ready line and in the ready log line', async () => {
    expect(replica.opsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(replica.opsUrl).port).not.toBe(new URL(replica.url).port);
    // pino writes asynchronously: its line may follow the console's.
    await vi.waitFor(() => expect(replica.output()).toContain(`"ops":"${replica.opsUrl}"`));
    expect(replica.output()).not.toContain(OPS_TOKEN);
  });

  it('serves /metrics on the operators’ port with the token only, and 404 on the clients’ port', async () => {
    const authorization = `Bearer ${OPS_TOKEN}`;
    const scraped = await rawRequest(`${replica.opsUrl}/metrics`, { headers: { authorization } });
    expect(scraped.status).toBe(200);
    expect(scraped.body).toContain('gateway_upstream_budget_limit');
    expect((await rawRequest(`${replica.opsUrl}/metrics`)).status).toBe(401);
    const clients = replica.url.replace(/\/graphql$/, '');
    for (const path of ['/metrics', '/status', '/status.json']) {
      expect((await rawRequest(`${clients}${path}`, { headers: { authorization } })).status, path).toBe(404);
      expect((await rawRequest(`${clients}${path}`)).status, path).toBe(404);
    }
  });

  it('closes the operators’ listener too when it stops on SIGTERM, and exits cleanly', async () => {
    const opsUrl = replica.opsUrl;
    // A keep-alive connection to the operators' port (as Prometheus holds one) must not hold the exit up.
    expect((await rawRequest(`${opsUrl}/health`, { headers: { connection: 'keep-alive' } })).status).toBe(200);
    await replica.stop();
    expect(replica.output()).toContain('Reservation gateway stopped cleanly');
    await expect(rawRequest(`${opsUrl}/health`)).rejects.toThrow(/ECONNREFUSED/);
  });
});
