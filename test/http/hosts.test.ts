import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostNameOf } from '../../src/http/hosts.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { closed, nextMessage, openSocket, rawRequest } from '../helpers/raw-sockets.ts';
import { listen } from '../helpers/subscriptions.ts';

/**
 * Fault (DNS rebinding): with GATEWAY_AUTH=none, the default on loopback, a request whose Host and
 * Origin were an attacker's name was served over HTTP and WebSocket (the socket's origin check
 * compared Origin with Host), so a page of another site could reach a developer's local gateway
 * through the browser. Now only the names of ALLOWED_HOSTS are answered (the loopback names by
 * default on a loopback HOST); probes answer any name.
 */
let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
let port: string;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { CORS_ORIGINS: 'https://app.example.com' });
  server = await listen(t);
  port = new URL(server.url).port;
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const QUERY = JSON.stringify({ query: '{ __typename }' });
const post = (host: string) =>
  rawRequest(server.url, { method: 'POST', headers: { host, 'content-type': 'application/json' }, body: QUERY });

describe('the Host of a request', () => {
  it('is answered when it is a loopback name, with any port', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`]) {
      const res = await post(host);
      expect(res.status, host).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ data: { __typename: 'Query' } });
    }
  });

  it('is refused with 421 and a message naming ALLOWED_HOSTS when it is another name, on every path but the probes', async () => {
    const res = await post(`rebound.attacker.example:${port}`);
    expect(res.status).toBe(421);
    expect(JSON.parse(res.body)).toEqual({
      errors: [
        {
          message: expect.stringContaining('does not answer for the host name "rebound.attacker.example:'),
          extensions: { code: 'MISDIRECTED_REQUEST' },
        },
      ],
    });
    expect(res.body).toContain('ALLOWED_HOSTS');
    for (const path of ['/graphql?query=%7B__typename%7D', '/metrics', '/status']) {
      expect(
        (
          await rawRequest(server.url.replace('/graphql', path), {
            headers: { host: 'rebound.attacker.example', 'graphql-preflight': '1' },
          })
        ).status,
        path,
      ).toBe(421);
    }
    // A browser's GraphiQL page too: the page would then talk to the gateway as the attacker's origin.
    expect(
      (await rawRequest(server.url, { headers: { host: 'rebound.attacker.example', accept: 'text/html' } })).status,
    ).toBe(421);
    // A name with a trailing dot is another name; so is one that merely ends like an allowed one.
    expect((await post('localhost.')).status).toBe(421);
    expect((await post('evil-localhost')).status).toBe(421);
  });

  it('does not matter to /health and /ready (orchestrators call the instance by its address)', async () => {
    for (const path of ['/health', '/ready']) {
      const res = await rawRequest(server.url.replace('/graphql', path), { headers: { host: '10.1.2.3:4000' } });
      expect(res.status, path).toBe(200);
    }
  });

  it('follows ALLOWED_HOSTS', async () => {
    const named = await startGateway({ rateLimit: false }, { ALLOWED_HOSTS: 'gateway.example.com' });
    try {
      const ask = (host: string) =>
        named.gateway.yoga.fetch('http://yoga/graphql', {
          method: 'POST',
          headers: { host, 'content-type': 'application/json' },
          body: QUERY,
        });
      expect((await ask('gateway.example.com')).status).toBe(200);
      expect((await ask('gateway.example.com:8443')).status).toBe(200);
      // The loopback names are no longer the default once the names are set.
      expect((await ask('localhost:4000')).status).toBe(421);
    } finally {
      await named.close();
    }
  });

  it('reads a Host header as browsers send it', () => {
    expect(hostNameOf('Gateway.Example.com:443')).toBe('gateway.example.com');
    expect(hostNameOf('[::1]:4000')).toBe('[::1]');
    expect(hostNameOf('[::1]')).toBe('[::1]');
    expect(hostNameOf('a:b:c')).toBeUndefined();
  });
});

describe('the WebSocket upgrade', () => {
  it('is refused with 421 for a rebinding Host (its Origin naming the same attacker), before any socket opens', async () => {
    const upgrade = await openSocket(server.wsUrl, {
      host: `rebound.attacker.example:${port}`,
      origin: `http://rebound.attacker.example:${port}`,
    });
    expect(upgrade).toEqual({ status: 421, body: expect.stringContaining('ALLOWED_HOSTS') });
  });

  it('takes pages of CORS_ORIGINS and of the gateway’s own names, and refuses other origins with 403', async () => {
    const accepted: Record<string, string>[] = [
      { host: `127.0.0.1:${port}`, origin: 'https://app.example.com' },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` },
      // The page's name need not be the one the socket was opened with: both are the gateway's.
      { host: `127.0.0.1:${port}`, origin: 'http://localhost:5173' },
      // Clients that are not browsers send no Origin.
      { host: `127.0.0.1:${port}` },
    ];
    for (const headers of accepted) {
      const upgrade = await openSocket(server.wsUrl, headers);
      if (!('socket' in upgrade)) throw new Error(`${JSON.stringify(headers)} refused: ${upgrade.status}`);
      upgrade.socket.send(JSON.stringify({ type: 'connection_init' }));
      expect((await nextMessage(upgrade.socket)).type).toBe('connection_ack');
      upgrade.socket.close();
      await closed(upgrade.socket);
    }
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1.evil.example:${port}`]) {
      const upgrade = await openSocket(server.wsUrl, { host: `127.0.0.1:${port}`, origin });
      expect(upgrade, origin).toEqual({ status: 403, body: expect.stringContaining('CORS_ORIGINS') });
    }
  });

  it('reads the gateway’s own names from ALLOWED_HOSTS as set: localhost is not one once it names 127.0.0.1 only', async () => {
    const named = await startGateway({ rateLimit: false }, { ALLOWED_HOSTS: '127.0.0.1' });
    const namedServer = await listen(named);
    try {
      const namedPort = new URL(namedServer.url).port;
      const upgrade = await openSocket(namedServer.wsUrl, {
        host: `127.0.0.1:${namedPort}`,
        origin: `http://localhost:${namedPort}`,
      });
      expect(upgrade).toMatchObject({ status: 403 });
    } finally {
      await namedServer.close();
      await named.close();
    }
  });
});
