import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { createGatewayServer } from '../../src/http/server.ts';
import { pause } from '../helpers/subscriptions.ts';

/**
 * Fault: Node's server defaults (60 s to send the headers, 300 s for the request, no connection
 * cap) let slow clients hold sockets for minutes, and any number of them. The gateway's server
 * takes its bounds from the settings; the request timeout covers receiving a request only, so a
 * long answer (@stream, SSE) is not cut.
 */
const FAST = {
  headersTimeoutMs: 1000,
  requestTimeoutMs: 1500,
  keepAliveTimeoutMs: 1000,
  maxConnections: 2,
  maxRequestBytes: 1024,
};

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

async function serve(handler: Parameters<typeof createGatewayServer>[0], limits = FAST): Promise<number> {
  server = createGatewayServer(handler, limits);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw connection: what the server sent, and when it closed it. */
function open(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  socket.on('error', () => {});
  return { socket, received: () => received, closed: new Promise((resolve) => socket.once('close', () => resolve())) };
}

describe('the gateway’s HTTP server', () => {
  it('takes its timeouts and connection cap from the settings, seconds by default', () => {
    const defaults = createGatewayServer(() => {}, loadConfig({}).http);
    expect([
      defaults.headersTimeout,
      defaults.requestTimeout,
      defaults.keepAliveTimeout,
      defaults.maxConnections,
    ]).toEqual([10_000, 30_000, 5_000, 1024]);
    const set = createGatewayServer(
      () => {},
      loadConfig({
        HTTP_HEADERS_TIMEOUT_MS: '2000',
        HTTP_REQUEST_TIMEOUT_MS: '3000',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '4000',
        MAX_CONNECTIONS: '7',
      }).http,
    );
    expect([set.headersTimeout, set.requestTimeout, set.keepAliveTimeout, set.maxConnections]).toEqual([
      2000, 3000, 4000, 7,
    ]);
  });

  it('answers 408 and closes a connection whose headers do not arrive in time', async () => {
    const port = await serve((_req, res) => res.end('ok'));
    const slow = open(port);
    slow.socket.write('GET /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers 408 to a body trickling in past the request timeout', async () => {
    const port = await serve((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const slow = open(port);
    slow.socket.write('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n');
    const trickle = setInterval(() => slow.socket.writable && slow.socket.write('x'), 200);
    await slow.closed;
    clearInterval(trickle);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('does not cut an answer that streams for longer than the request timeout', async () => {
    const port = await serve(async (req, res) => {
      for await (const _chunk of req); // the request, read whole: from here on no request timeout applies
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 8; i++) {
        res.write(`data: ${i}\n\n`);
        await pause(400);
      }
      res.end('event: complete\n\n');
    });
    const stream = open(port);
    const body = '{"query":"subscription { reservationChanged(eventId: 5001) { kind } }"}';
    stream.socket.write(
      `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await stream.closed;
    // 3.2 s of answer, more than twice the 1.5 s request timeout.
    expect(stream.received()).toContain('data: 7\n\n');
    expect(stream.received()).toContain('event: complete');
  });

  it('closes connections beyond MAX_CONNECTIONS as they arrive', async () => {
    const port = await serve((_req, res) => res.end('ok'), {
      ...FAST,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      keepAliveTimeoutMs: 10_000,
    });
    const held = [open(port), open(port)];
    await Promise.all(held.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
    await pause(100);
    const third = open(port);
    await third.closed;
    expect(third.received()).toBe('');
    // The two held are still served.
    held[0]!.socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await expect.poll(() => held[0]!.received()).toMatch(/^HTTP\/1\.1 200 /);
  });
});
