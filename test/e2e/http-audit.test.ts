import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auditServer } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';

/**
 * The GraphQL-over-HTTP conformance audits of graphql-http, against a real port. With CSRF
 * prevention on, a GET or a non-JSON POST must carry a preflight header, as a real client (Apollo
 * Client's Apollo-Require-Preflight, say) sends it: the audits' requests carry GraphQL-Preflight.
 */
let emulator: Emulator;
let gateway: Gateway;
let server: Server;
let url: string;
/** The same over GATEWAY_AUTH=api-key with two licensees. */
let guarded: { gateway: Gateway; server: Server; url: string };

async function listen(gatewayOfTest: Gateway): Promise<{ server: Server; url: string }> {
  const httpServer = createServer(gatewayOfTest.yoga);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return { server: httpServer, url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/graphql` };
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  gateway = createGateway({ ...loadConfig({ LOG_LEVEL: 'silent' }), upstreamBaseUrl: emulator.url });
  ({ server, url } = await listen(gateway));
  const withKeys = createGateway({
    ...loadConfig({ LOG_LEVEL: 'silent', ...licenseesEnv(), GATEWAY_AUTH: 'api-key' }),
    upstreamBaseUrl: emulator.url,
  });
  guarded = { gateway: withKeys, ...(await listen(withKeys)) };
});

afterAll(async () => {
  for (const httpServer of [server, guarded.server]) {
    httpServer.closeAllConnections();
    await new Promise((resolve) => httpServer.close(resolve));
  }
  await gateway.close();
  await guarded.gateway.close();
  await emulator.close();
});

/** A fetch that adds headers to every request the audits make. */
const adding =
  (extra: Record<string, string>) =>
  (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    return fetch(input, { ...init, headers });
  };

describe('GraphQL over HTTP', () => {
  it('passes every graphql-http server audit when requests carry GraphQL-Preflight', async () => {
    const results = await auditServer({ url, fetchFn: adding({ 'graphql-preflight': '1' }) });
    const passed = results.filter((r) => r.status === 'ok');
    console.log(`graphql-http audits: ${passed.length}/${results.length} passed`);
    expect(
      results.filter((r) => r.status !== 'ok').map((r) => `${r.id} ${r.name}: ${'reason' in r ? r.reason : ''}`),
    ).toEqual([]);
    expect(results.length).toBe(61);
  });

  it('passes every audit with GATEWAY_AUTH=api-key when requests carry a valid client key', async () => {
    const results = await auditServer({
      url: guarded.url,
      fetchFn: adding({ 'graphql-preflight': '1', authorization: `Bearer ${CLIENT_KEYS['globex-web']}` }),
    });
    const passed = results.filter((r) => r.status === 'ok');
    console.log(`graphql-http audits with GATEWAY_AUTH=api-key: ${passed.length}/${results.length} passed`);
    expect(
      results.filter((r) => r.status !== 'ok').map((r) => `${r.id} ${r.name}: ${'reason' in r ? r.reason : ''}`),
    ).toEqual([]);
    expect(results.length).toBe(61);
  });

  it('refuses the audited requests without a key (401) and makes no upstream call', async () => {
    const before = emulator.state.log.length;
    const res = await fetch(guarded.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ event(eventId: 6001) { name } }' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(emulator.state.log.length).toBe(before);
  });

  it('refuses a GET without a preflight header with 403 and runs nothing (the audits would otherwise pass a forged request)', async () => {
    const res = await fetch(`${url}?query=${encodeURIComponent('{ event(eventId: 5001) { name } }')}`);
    expect(res.status).toBe(403);
    expect(emulator.state.log.filter((r) => r.endpoint === 'getevent')).toEqual([]);
  });
});
