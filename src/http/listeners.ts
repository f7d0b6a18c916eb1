import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpLimits } from '../config/environment.ts';
import { createGatewayServer } from './server.ts';
import type { WebSocketTransport } from './websocket.ts';

/** What the two listeners serve: the clients' door, the operators' door, and graphql-ws on the clients' server. */
export interface Doors {
  clients: RequestListener;
  operators: RequestListener;
  acceptWebSockets(server: Server): WebSocketTransport;
}

/** Where each listener is, as the servers report it once listening (port 0 resolved). */
export interface Listening {
  /** The clients' GraphQL endpoint, like `http://127.0.0.1:4000/graphql`. */
  url: string;
  /** The operators' port's origin, like `http://127.0.0.1:9464` (its pages at /metrics, /status). */
  opsUrl: string;
  clients: Server;
  operators: Server;
  /**
   * Stops accepting on both, lets requests in flight finish, drops idle keep-alive connections and
   * ends the WebSocket transport; resolves once both servers closed.
   */
  stop(): Promise<void>;
}

/**
 * The clients' listener on PORT/HOST and the operators' on OPS_PORT/OPS_HOST (docs/settings.md):
 * the operators' pages never share a port with clients, so a proxy or mesh sidecar that makes
 * every client's connection a loopback one cannot reach them.
 */
export async function listen(
  doors: Doors,
  where: { port: number; host: string; opsPort: number; opsHost: string; http: HttpLimits },
): Promise<Listening> {
  const clients = createGatewayServer(doors.clients, where.http);
  const operators = createGatewayServer(doors.operators, where.http);
  const webSockets = doors.acceptWebSockets(clients);
  try {
    await listenOn(operators, where.opsPort, where.opsHost);
    await listenOn(clients, where.port, where.host);
  } catch (error) {
    // One listener up and the other not is no gateway: release the one that listens.
    await webSockets.close();
    await Promise.all([clients, operators].map(closeServer));
    throw error;
  }
  return {
    url: `${origin(clients)}/graphql`,
    opsUrl: origin(operators),
    clients,
    operators,
    async stop() {
      const closed = Promise.all([clients, operators].map(closeServer));
      await webSockets.close();
      await closed;
    },
  };
}

function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Stops accepting, lets requests in flight finish, and drops idle keep-alive connections now, and
 * each further one as it turns idle: a connection whose answer (a subscription stream the shutdown
 * ends, a request in flight) finishes after the close would otherwise be held until
 * HTTP_KEEP_ALIVE_TIMEOUT_MS lapses (a stop with one SSE subscriber took 4 s, now 0.06).
 */
function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const closed = new Promise<void>((resolve) =>
    server.close(() => {
      clearInterval(sweep);
      resolve();
    }),
  );
  server.closeIdleConnections();
  return closed;
}

function origin(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}
