import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { createGateway } from '../../src/gateway.ts';
import type { Listening } from '../../src/http/listeners.ts';
import { isLoopbackAddress } from '../../src/http/operators.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { serve, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { rawRequest } from '../helpers/raw-sockets.ts';

/**
 * Fault: /metrics, /status and /status.json needed no credential and showed every licensee's ids,
 * budget use and the operation names clients chose. Then they wanted OPS_TOKEN, or without it a
 * connection from 127.0.0.1: but behind a reverse proxy on the same machine or a mesh sidecar
 * (Istio, Linkerd) every client's connection comes from loopback. Now they are served on a port of
 * their own (OPS_PORT, on OPS_HOST, 127.0.0.1 by default) and the clients' port answers 404 there,
 * whoever asks. On the operators' port they want OPS_TOKEN (as a bearer token, Prometheus'
 * `authorization: {credentials: …}`, or a browser's Basic password); without it (loopback
 * OPS_HOST only) a connection from this machine is served.
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

/** A request to the operators' port as from a connection whose peer is `remoteAddress` (what Node's server hands Yoga). */
const from = (gateway: TestGateway, path: string, remoteAddress?: string, headers: Record<string, string> = {}) =>
  gateway.gateway.operators.fetch(
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
      await gateway.operators.fetch('http://yoga/metrics', { headers: { authorization: `Bearer ${OPS_TOKEN}` } });
      await gateway.operators.fetch('http://yoga/status.json', { headers: { authorization: `Bearer ${OPS_TOKEN}x` } });
      await gateway.yoga.fetch('http://yoga/metrics', { headers: { authorization: `Bearer ${OPS_TOKEN}` } });
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

  it('serves /metrics over a real loopback connection to the operators’ port', async () => {
    const server = await serve(withoutToken);
    try {
      const res = await rawRequest(`${server.opsUrl}/metrics`);
      expect(res.status).toBe(200);
      expect(res.body).toContain('gateway_upstream_requests_total');
    } finally {
      await server.stop();
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

describe('on real sockets, the clients’ port and the operators’ port (127.0.0.1, port 0 each)', () => {
  let tokenServer: Listening;
  let openServer: Listening;
  beforeAll(async () => {
    tokenServer = await serve(withToken);
    openServer = await serve(withoutToken);
  });
  afterAll(async () => {
    await tokenServer?.stop();
    await openServer?.stop();
  });
  const clientsOrigin = (server: Listening) => server.url.replace(/\/graphql$/, '');

  it('listen on two different ports, both found from the started servers', () => {
    for (const server of [tokenServer, openServer]) {
      expect(server.opsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(new URL(server.opsUrl).port).not.toBe(new URL(server.url).port);
    }
  });

  it('the clients’ port answers 404 on each operators’ page from 127.0.0.1, with the token or without, set or not', async () => {
    for (const server of [tokenServer, openServer]) {
      for (const path of PAGES) {
        for (const headers of <Record<string, string>[]>[
          {},
          { authorization: `Bearer ${OPS_TOKEN}` },
          { authorization: `Basic ${btoa(`operator:${OPS_TOKEN}`)}` },
          { 'x-forwarded-for': '127.0.0.1' },
        ]) {
          const res = await rawRequest(`${clientsOrigin(server)}${path}`, { headers });
          expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(404);
          expect(res.body).not.toContain('gateway_upstream');
          expect(res.body).not.toContain(OPS_TOKEN);
          expect(res.body).not.toContain('<html');
        }
      }
    }
  });

  it('the operators’ port serves each page with OPS_TOKEN as a bearer token, and refuses it without the token (401)', async () => {
    for (const path of PAGES) {
      const served = await rawRequest(`${tokenServer.opsUrl}${path}`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      });
      expect(served.status, path).toBe(200);
      const refused = await rawRequest(`${tokenServer.opsUrl}${path}`);
      expect(refused.status, path).toBe(401);
      expect(refused.headers['www-authenticate']).toContain('Bearer');
      expect(refused.body).not.toContain('gateway_upstream');
      const wrong = await rawRequest(`${tokenServer.opsUrl}${path}`, { headers: { authorization: 'Bearer not-it' } });
      expect(wrong.status, path).toBe(401);
    }
    const metrics = await rawRequest(`${tokenServer.opsUrl}/metrics`, {
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
    });
    expect(metrics.body).toContain('gateway_upstream_budget_limit');
    expect(metrics.headers['content-type']).toContain('text/plain');
  });

  it('the operators’ port on loopback without OPS_TOKEN serves each page to this machine', async () => {
    for (const path of PAGES) expect((await rawRequest(`${openServer.opsUrl}${path}`)).status, path).toBe(200);
    expect((await rawRequest(`${openServer.opsUrl}/metrics`)).body).toContain('gateway_upstream_requests_total');
  });

  it('the operators’ port without OPS_TOKEN answers only this machine’s names in Host (a rebound page of another site reads nothing), and no page of another origin by CORS', async () => {
    const rebound = await rawRequest(`${openServer.opsUrl}/metrics`, { headers: { host: 'rebound.attacker.example' } });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain('gateway_upstream');
    const port = new URL(openServer.opsUrl).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`])
      expect((await rawRequest(`${openServer.opsUrl}/metrics`, { headers: { host } })).status, host).toBe(200);
    const crossOrigin = await rawRequest(`${openServer.opsUrl}/status.json`, {
      headers: { origin: 'https://attacker.example' },
    });
    expect(crossOrigin.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('/health and /ready answer on both ports, without any credential', async () => {
    for (const server of [tokenServer, openServer]) {
      for (const origin of [clientsOrigin(server), server.opsUrl]) {
        const health = await rawRequest(`${origin}/health`);
        expect(health.status, `${origin}/health`).toBe(200);
        const ready = await rawRequest(`${origin}/ready`);
        expect(ready.status, `${origin}/ready`).toBe(200);
        expect(JSON.parse(ready.body)).toMatchObject({ ready: true, licensees: [{ id: '1001', ready: true }] });
      }
    }
  });

  it('the operators’ port serves no GraphQL and nothing else, even with the token', async () => {
    for (const path of ['/graphql?query=%7B__typename%7D', '/', '/nowhere']) {
      const res = await rawRequest(`${tokenServer.opsUrl}${path}`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}`, 'graphql-preflight': '1' },
      });
      expect(res.status, path).toBe(404);
      expect(res.body).not.toContain('__typename');
    }
    // And GraphQL still answers on the clients' port.
    const graphql = await rawRequest(`${clientsOrigin(tokenServer)}/graphql?query=%7B__typename%7D`, {
      headers: { 'graphql-preflight': '1', accept: 'application/json' },
    });
    expect(graphql.status).toBe(200);
  });
});
