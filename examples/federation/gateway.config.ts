import { defineConfig } from '@graphql-hive/gateway';
import { RESERVATIONS_SUBGRAPH } from './subgraph-names.ts';

/** The headers that carry a client's credential to this gateway (GATEWAY_AUTH api-key or jwt). */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key'];

/**
 * Hive Gateway's settings for the company graph: the client's identity reaches the reservations
 * subgraph, whose client authentication decides what the client may see. Only it: an API key is
 * long-lived and made for this gateway alone, and forwarded to every subgraph it would reach other
 * teams' services. A company graph whose subgraphs all check the client is better served by
 * JWTs with an audience per subgraph than by one key forwarded everywhere.
 */
export const gatewayConfig = defineConfig({
  ...routerResponseCache(),
  ...subscriptionsOverWebSocket(),
  propagateHeaders: {
    fromClientToSubgraphs: ({ request, subgraphName }) => {
      const forwarded: Record<string, string> = {};
      if (subgraphName !== RESERVATIONS_SUBGRAPH) return forwarded;
      for (const name of CREDENTIAL_HEADERS) {
        const value = request.headers.get(name);
        if (value) forwarded[name] = value;
      }
      return forwarded;
    },
  },
});

/**
 * With RESERVATIONS_ROUTER_RESPONSE_CACHE=on (off by default; startHiveGateway's `responseCache`):
 * Hive Gateway keeps whole answers itself, for as long as our `Cache-Control: max-age` says (it
 * reads `max-age` and `s-maxage` of each subgraph answer and keeps the answer for the smallest;
 * `no-store, max-age=0` keeps nothing). It ignores `private`, so its key must hold the client's
 * credential (`session`): without one, every client would share every answer, across licensees.
 */
function routerResponseCache() {
  if (process.env.RESERVATIONS_ROUTER_RESPONSE_CACHE !== 'on') return {};
  return {
    responseCaching: {
      session: (request: Request) => credentialOf(request),
    },
  };
}

/**
 * With RESERVATIONS_SUBSCRIPTIONS_WS=on (off by default; startHiveGateway's `subscriptionsOverWebSocket`):
 * subscriptions reach the reservations subgraph over graphql-ws (`@graphql-mesh/transport-ws`), the
 * client's Authorization header forwarded in the connection's init payload, where our WebSocket door
 * reads it; Hive Gateway opens one socket per distinct credential.
 */
function subscriptionsOverWebSocket() {
  if (process.env.RESERVATIONS_SUBSCRIPTIONS_WS !== 'on') return {};
  return {
    transportEntries: {
      [RESERVATIONS_SUBGRAPH]: {
        options: {
          subscriptions: {
            kind: 'ws',
            options: { connectionParams: { authorization: '{context.headers.authorization}' } },
          },
        },
      },
    },
  };
}

/** The client's credential as it reaches the reservations subgraph, or null for an anonymous client. */
function credentialOf(request: Request): string | null {
  const values = CREDENTIAL_HEADERS.map((name) => request.headers.get(name)).filter(Boolean);
  return values.length > 0 ? values.join('\n') : null;
}
