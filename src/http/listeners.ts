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
  try {
    await listenOn(operators, where.opsPort, where.opsHost, 'OPS_PORT');
    await listenOn(clients, where.port, where.host, 'PORT');
  } catch (error) {
    // One listener up and the other not is no gateway: release the one that listens.
    await Promise.all([clients, operators].map(closeServer));
    throw error;
  }
  // Once listening (before any connection is read): ws re-emits its server's listen error as its
  // own, and graphql-ws prints that with a stack, beside the one line a taken PORT must be.
  const webSockets = doors.acceptWebSockets(clients);
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

/**
 * A port the gateway cannot take: a setting to fix, like a bad value (main.ts prints the message
 * and exits 2), not a crash with a stack. The message names the setting and the address.
 */
export class PortUnavailableError extends Error {
  override name = 'PortUnavailableError';
}

/** What a listen's failure means, and what to do, for the failures a setting (or what else runs here) causes. */
const UNAVAILABLE: Record<string, (setting: string, hostSetting: string) => string> = {
  // A second copy on one host, or the default OPS_PORT (9464) held by another Prometheus exporter.
  EADDRINUSE: (setting) =>
    `the address is already in use (another program, or another copy of the gateway, listens there); stop it, or set another ${setting}`,
  EACCES: (setting) => `permission denied (a port below 1024 needs privileges); set ${setting} to 1024 or above`,
  EADDRNOTAVAIL: (_, hostSetting) =>
    `no interface of this machine has that address; set ${hostSetting} to one that has`,
};

function listenOn(server: Server, port: number, host: string, setting: 'PORT' | 'OPS_PORT'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const why = UNAVAILABLE[error.code ?? ''];
      if (!why) return reject(error);
      const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      const hostSetting = setting === 'PORT' ? 'HOST' : 'OPS_HOST';
      reject(new PortUnavailableError(`${setting}: cannot listen on ${address}: ${why(setting, hostSetting)}`));
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
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
