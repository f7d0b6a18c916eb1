import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auditServer } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startEmulator, type Emulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/server.ts';

/**
 * The GraphQL-over-HTTP conformance audits of graphql-http, against a real port. With CSRF
 * prevention on, a GET or a non-JSON POST must carry a preflight header, as a real client (Apollo
 * Client's Apollo-Require-Preflight, say) sends it: the audits' requests carry GraphQL-Preflight.
 */
let emulator: Emulator;
let gateway: Gateway;
let server: Server;
let url: string;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  gateway = createGateway({ ...loadConfig({ LOG_LEVEL: 'silent' }), upstreamBaseUrl: emulator.url });
  server = createServer(gateway.yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await gateway.close();
  await emulator.close();
});

describe('GraphQL over HTTP', () => {
  it('passes every graphql-http server audit when requests carry GraphQL-Preflight', async () => {
    const withPreflight = (input: RequestInfo | URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('graphql-preflight', '1');
      return fetch(input, { ...init, headers });
    };
    const results = await auditServer({ url, fetchFn: withPreflight });
    const passed = results.filter((r) => r.status === 'ok');
    console.log(`graphql-http audits: ${passed.length}/${results.length} passed`);
    expect(results.filter((r) => r.status !== 'ok').map((r) => `${r.id} ${r.name}: ${'reason' in r ? r.reason : ''}`)).toEqual([]);
    expect(results.length).toBe(61);
  });

  it('refuses a GET without a preflight header with 403 and runs nothing (the audits would otherwise pass a forged request)', async () => {
    const res = await fetch(`${url}?query=${encodeURIComponent('{ event(eventId: 5001) { name } }')}`);
    expect(res.status).toBe(403);
    expect(emulator.state.log.filter((r) => r.endpoint === 'getevent')).toEqual([]);
  });
});
