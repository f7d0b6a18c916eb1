import type { Server } from 'node:http';
import type { ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { RequestPrincipals } from '../auth/plugin.ts';
import type { Principal } from '../auth/principal.ts';
import type { Authenticator } from '../auth/verdict.ts';
import type { Gateway } from '../gateway.ts';
import { hostNameOf, isAllowedHost } from './hosts.ts';

export interface WebSocketTransport {
  close(): Promise<void>;
}

interface Envelope {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/**
 * GraphQL over WebSocket (the graphql-ws protocol, as Apollo Client and urql speak it) at the same
 * path as HTTP, `/graphql`, through the same Yoga plugins (scopes, limits, masking). The client
 * proves who it is as on HTTP: an `Authorization` in the connection's init payload, or else in the
 * upgrade request's headers. A refused client is closed with 4403 before any operation runs.
 *
 * Before that, the upgrade itself is refused (no socket opens) for a `Host` not in ALLOWED_HOSTS
 * (421) and a page of an origin not allowed (403); and no message longer than MAX_REQUEST_BYTES is
 * read, `connection_init` included (ws closes the socket with 1009 on the frame's announced length).
 */
export function serveWebSockets(
  server: Server,
  gateway: Pick<Gateway, 'yoga'>,
  auth: { authenticate: Authenticator; principals: RequestPrincipals; corsOrigins: readonly string[]; allowedHosts: readonly string[] },
  limits: { maxMessageBytes: number; logger?: Logger },
): WebSocketTransport {
  const sockets = new WebSocketServer({
    server,
    path: gateway.yoga.graphqlEndpoint,
    maxPayload: limits.maxMessageBytes,
    verifyClient: ({ req }, done) => {
      if (!isAllowedHost(req.headers.host, auth.allowedHosts)) return done(false, 421, 'This gateway does not answer for this host name (ALLOWED_HOSTS).');
      if (!allowedOrigin(req.headers.origin, auth.corsOrigins, auth.allowedHosts)) return done(false, 403, 'Pages of this origin may not open a socket (CORS_ORIGINS).');
      done(true);
    },
  });
  const principals = new WeakMap<object, Principal>();
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Envelope).execute(args) as never,
      subscribe: (args) => (args.rootValue as Envelope).subscribe(args) as never,
      async onConnect(ctx) {
        const verdict = await auth.authenticate(requestOf(ctx.extra.request.headers, ctx.connectionParams));
        if (!('principal' in verdict)) return false;
        principals.set(ctx.extra, verdict.principal);
        return true;
      },
      async onSubscribe(ctx, _id, payload) {
        const principal = principals.get(ctx.extra);
        if (!principal) return [];
        // Each operation gets a request of its own, as on HTTP: the context reads its principal from it.
        const request = requestOf(ctx.extra.request.headers, ctx.connectionParams);
        auth.principals.set(request, principal);
        const { schema, execute, subscribe, contextFactory, parse, validate } = gateway.yoga.getEnveloped({ request, params: payload });
        const args: ExecutionArgs = {
          schema,
          operationName: payload.operationName ?? null,
          document: parse(payload.query),
          variableValues: payload.variables ?? null,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe } satisfies Envelope,
        };
        const errors = validate(args.schema, args.document);
        return errors.length > 0 ? errors : args;
      },
    },
    sockets,
  );
  // After graphql-ws's own listener: a socket's error (a message over the bound, which ws has
  // already answered with 1009, or a connection reset) goes to the logger, not to stderr as
  // graphql-ws prints it. ws closes the socket on every such error itself.
  sockets.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') limits.logger?.info(`a WebSocket message over MAX_REQUEST_BYTES (${limits.maxMessageBytes}): closed with 1009`);
      else limits.logger?.warn({ err: error }, 'WebSocket error: socket closed');
    });
  });
  return {
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

/** A Request carrying the upgrade's headers, the init payload's `Authorization` taking precedence. */
function requestOf(headers: Record<string, string | string[] | undefined>, connectionParams: Readonly<Record<string, unknown>> | undefined): Request {
  const merged = new Headers();
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') merged.set(name, value);
  const offered = connectionParams?.Authorization ?? connectionParams?.authorization;
  if (typeof offered === 'string') merged.set('authorization', offered);
  return new Request('http://gateway/graphql', { method: 'POST', headers: merged });
}

/**
 * A browser page may open a socket to any address, with no CORS preflight: only pages of
 * CORS_ORIGINS, or of the gateway's own names (ALLOWED_HOSTS, any port: GraphiQL), may. Never
 * compared with the request's `Host`: under DNS rebinding the attacker's page names both.
 * Clients that are not browsers send no Origin.
 */
function allowedOrigin(origin: string | undefined, corsOrigins: readonly string[], allowedHosts: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (corsOrigins.includes(origin)) return true;
  try {
    const url = new URL(origin);
    const name = hostNameOf(url.host);
    return (url.protocol === 'http:' || url.protocol === 'https:') && name !== undefined && allowedHosts.includes(name);
  } catch {
    return false;
  }
}
