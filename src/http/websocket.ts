import type { Server } from 'node:http';
import type { ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { RequestPrincipals } from '../auth/plugin.ts';
import type { Principal } from '../auth/principal.ts';
import type { Authenticator } from '../auth/verdict.ts';
import type { Gateway } from '../gateway.ts';

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
 */
export function serveWebSockets(
  server: Server,
  gateway: Pick<Gateway, 'yoga'>,
  auth: { authenticate: Authenticator; principals: RequestPrincipals; corsOrigins: readonly string[] },
): WebSocketTransport {
  const sockets = new WebSocketServer({ server, path: gateway.yoga.graphqlEndpoint });
  const principals = new WeakMap<object, Principal>();
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Envelope).execute(args) as never,
      subscribe: (args) => (args.rootValue as Envelope).subscribe(args) as never,
      async onConnect(ctx) {
        if (!allowedOrigin(ctx.extra.request.headers, auth.corsOrigins)) return false;
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
 * A browser page may open a socket to any address, with no CORS preflight: only pages of the
 * gateway's own origin, or of CORS_ORIGINS, may. Clients that are not browsers send no Origin.
 */
function allowedOrigin(headers: Record<string, string | string[] | undefined>, corsOrigins: readonly string[]): boolean {
  const origin = headers.origin;
  if (typeof origin !== 'string') return true;
  if (corsOrigins.includes(origin)) return true;
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}
