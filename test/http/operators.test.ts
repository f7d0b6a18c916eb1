import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { createGateway } from '../../src/gateway.ts';
import { isLoopbackAddress } from '../../src/http/operators.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { rawRequest } from '../helpers/raw-sockets.ts';
import { listen } from '../helpers/subscriptions.ts';

/**
 * Fault: /metrics, /status and /status.json needed no credential and showed every licensee's ids,
 * budget use and the operation names clients chose. Now they want OPS_TOKEN (as a bearer token,
 * Prometheus' `authorization: {credentials: …}`, or a browser's Basic password), or, without it,
 * a client on the gateway's own machine by the connection's address.
 */
const OPS_TOKEN = 'ops-0123456789abcdef0123456789abcdef';
const PAGES = ['/metrics', '/status', '/status.json'];

let withToken: TestGateway;
let withoutToken: TestGateway;
beforeAll(async () => {
  withToken = await startGateway({ rateLimit: false }, { OPS_TOKEN });
  withoutToken = await startGateway({ rateLimit: false });
});
afterAll(async () => {
  await withToken?.close();
  await withoutToken?.close();
});

/** A request as from a connection whose peer is `remoteAddress` (what Node's server hands Yoga). */
const from = (gateway: TestGateway, path: string, remoteAddress?: string, headers: Record<string, string> = {}) =>
  gateway.gateway.yoga.fetch(
    `http://yoga${path}`,
    { headers },
    remoteAddress ? { req: { socket: { remoteAddress } } } : {},
  );

describe('with OPS_TOKEN', () => {
  it('refuses each page without it, or with another, with 401 and a challenge, even from this machine', async () => {
    for (const path of PAGES) {
      for (const authorization of [
        undefined,
        'Bearer not-the-token',
        `Bearer ${OPS_TOKEN}x`,
        `Basic ${btoa('ops:wrong')}`,
        OPS_TOKEN,
      ]) {
        const res = await from(withToken, path, '127.0.0.1', authorization ? { authorization } : {});
        expect(res.status, `${path} ${authorization}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe(
          'Basic realm="gateway operators", Bearer realm="gateway operators"',
        );
        const body = await res.text();
        expect(body).toContain('OPS_TOKEN');
        expect(body).not.toContain('not-the-token');
        expect(body).not.toContain(OPS_TOKEN);
      }
    }
  });

  it('serves each page with it, as a bearer token or as a Basic password (what a browser prompts for)', async () => {
    for (const path of PAGES) {
      const bearer = await from(withToken, path, '203.0.113.7', { authorization: `Bearer ${OPS_TOKEN}` });
      expect(bearer.status, path).toBe(200);
      const basic = await from(withToken, path, '203.0.113.7', {
        authorization: `Basic ${btoa(`anyone:${OPS_TOKEN}`)}`,
      });
      expect(basic.status, path).toBe(200);
    }
    const metrics = await from(withToken, '/metrics', undefined, { authorization: `bearer ${OPS_TOKEN}` });
    expect(await metrics.text()).toContain('gateway_upstream_budget_limit');
  });

  it('leaves GraphQL alone: clients never need it', async () => {
    expect((await withToken.exec('{ __typename }')).status).toBe(200);
  });

  it('never writes the token to the log', async () => {
    let out = '';
    const logger = createLogger(
      'trace',
      new Writable({ write: (chunk, _encoding, done) => ((out += chunk.toString()), done()) }),
    );
    const config = loadConfig({ OPS_TOKEN });
    const gateway = createGateway({ ...config, upstreamBaseUrl: withToken.emulator.url }, logger);
    try {
      await gateway.yoga.fetch('http://yoga/metrics', { headers: { authorization: `Bearer ${OPS_TOKEN}` } });
      await gateway.yoga.fetch('http://yoga/status.json', { headers: { authorization: `Bearer ${OPS_TOKEN}x` } });
      expect(out).not.toContain(OPS_TOKEN);
    } finally {
      await gateway.close();
    }
  });
});

describe('without OPS_TOKEN', () => {
  it('serves each page to a connection from this machine only, by its address (IPv4, IPv6, IPv4-mapped)', async () => {
    for (const path of PAGES) {
      for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
        expect((await from(withoutToken, path, address)).status, `${path} ${address}`).toBe(200);
      for (const address of ['203.0.113.7', '::ffff:10.0.0.2', '2001:db8::1']) {
        const res = await from(withoutToken, path, address);
        expect(res.status, `${path} ${address}`).toBe(403);
        expect(await res.text()).toContain('set OPS_TOKEN');
      }
      // A header claiming to be local is not a connection from this machine; nor is a request through no socket.
      expect(
        (await from(withoutToken, path, '203.0.113.7', { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' }))
          .status,
      ).toBe(403);
      expect((await from(withoutToken, path)).status).toBe(403);
    }
  });

  it('serves /metrics over a real loopback connection', async () => {
    const server = await listen(withoutToken);
    try {
      const res = await rawRequest(server.url.replace('/graphql', '/metrics'));
      expect(res.status).toBe(200);
      expect(res.body).toContain('gateway_upstream_requests_total');
    } finally {
      await server.close();
    }
  });

  it('tells loopback addresses from others', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'].map(isLoopbackAddress)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['128.0.0.1', '::2', '::ffff:10.0.0.1', '1127.0.0.1', undefined].map(isLoopbackAddress)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
