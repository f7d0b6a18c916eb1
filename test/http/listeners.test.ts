import { Agent, request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { listen, PortUnavailableError } from '../../src/http/listeners.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { pause } from '../helpers/subscriptions.ts';

/**
 * Stopping the listeners as main.ts does on SIGTERM. Fault: a connection whose answer ended after
 * the stop began (a subscription stream the shutdown closes) turned idle too late to be dropped,
 * and the server waited for its keep-alive to lapse: every shutdown with a subscriber took
 * HTTP_KEEP_ALIVE_TIMEOUT_MS longer than it had to.
 */
let t: TestGateway;

beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '60000' });
});

afterAll(async () => {
  await t?.close();
});

describe('stopping the listeners', () => {
  it('drops a keep-alive connection once its subscription stream ends, instead of waiting out the keep-alive', async () => {
    // The longest keep-alive allowed: the stop cannot end by its lapse within this test.
    const http = { ...loadConfig({}).http, keepAliveTimeoutMs: 120_000 };
    const listening = await listen(
      { clients: t.gateway.yoga, operators: t.gateway.operators, acceptWebSockets: t.gateway.acceptWebSockets },
      { port: 0, host: '127.0.0.1', opsPort: 0, opsHost: '127.0.0.1', http },
    );
    // A client that keeps its idle connection open for as long as the server does (fetch's own
    // pool closes it after 4 s, which would hide the wait).
    const agent = new Agent({ keepAlive: true });
    const body = JSON.stringify({ query: 'subscription { reservationChanged(eventId: 5002) { kind } }' });
    const streamEnded = new Promise<{ status?: number; connection?: string }>((resolve, reject) => {
      const req = request(
        listening.url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'text/event-stream' } },
        (res) => {
          res.resume();
          res.once('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
        },
      );
      req.once('error', reject);
      req.end(body);
    });
    // Subscribed once the event's feed read its page: the stream is open.
    await expect.poll(() => t.count('getreservation'), { timeout: 10_000 }).toBeGreaterThan(0);

    // As main.ts: the streams end, then the listeners stop.
    t.gateway.changeFeeds.close();
    const stopped = listening.stop().then(() => 'stopped' as const);
    expect(await streamEnded).toEqual({ status: 200, connection: 'keep-alive' });
    expect(await Promise.race([stopped, pause(30_000).then(() => 'still waiting for the keep-alive' as const)])).toBe(
      'stopped',
    );
    agent.destroy();
  }, 60_000);
});

describe('a port the listeners cannot take', () => {
  const doors = () => ({
    clients: t.gateway.yoga,
    operators: t.gateway.operators,
    acceptWebSockets: t.gateway.acceptWebSockets,
  });
  const http = () => loadConfig({}).http;
  /** A listener on 127.0.0.1 port 0 (a port another program holds, or one just freed). */
  const held = async (): Promise<Server> => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  };
  const portOf = (server: Server) => (server.address() as { port: number }).port;
  const closed = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

  it('PORT taken: a PortUnavailableError naming PORT and the address, and the operators’ listener released', async () => {
    const taken = await held();
    const freed = await held();
    const opsPort = portOf(freed);
    await closed(freed);
    const failed = listen(doors(), {
      port: portOf(taken),
      host: '127.0.0.1',
      opsPort,
      opsHost: '127.0.0.1',
      http: http(),
    });
    await expect(failed).rejects.toThrow(PortUnavailableError);
    await expect(failed).rejects.toThrow(
      `PORT: cannot listen on 127.0.0.1:${portOf(taken)}: the address is already in use`,
    );
    // The operators' port, up before PORT failed, is free again.
    const again = createServer();
    await new Promise<void>((resolve, reject) => again.once('error', reject).listen(opsPort, '127.0.0.1', resolve));
    await closed(again);
    await closed(taken);
  });

  it('OPS_HOST not this machine’s: a PortUnavailableError naming OPS_PORT, the address and OPS_HOST', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): no interface has it.
    const failed = listen(doors(), { port: 0, host: '127.0.0.1', opsPort: 49_152, opsHost: '192.0.2.1', http: http() });
    await expect(failed).rejects.toThrow(
      'OPS_PORT: cannot listen on 192.0.2.1:49152: no interface of this machine has that address; set OPS_HOST to one that has',
    );
  });
});
