import { createServer, type RequestListener, type Server } from 'node:http';
import type { HttpLimits } from '../config/environment.ts';

/**
 * How often Node looks for requests past their headers or request timeout: its default, 30 s,
 * would let a client that sends one header byte at a time hold a socket for 40 s of a 10 s timeout.
 */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * Node's HTTP server with bounds on what one client may hold: the time to send its headers and
 * its whole request (Node's own defaults are a minute and five), how long an idle keep-alive
 * connection is kept, and how many connections are open at once (beyond: closed as they arrive).
 * The request timeout covers receiving the request only: Node stops timing a connection once the
 * request is read, so an answer that streams for minutes (@stream, @defer, SSE) is not cut.
 */
export function createGatewayServer(handler: RequestListener, limits: HttpLimits): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  return server;
}
