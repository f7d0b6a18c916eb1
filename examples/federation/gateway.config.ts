import { defineConfig, MemPubSub } from '@graphql-hive/gateway';
import { RESERVATIONS_SUBGRAPH } from './subgraph-names.ts';

/** The headers that carry a client's credential to this gateway (GATEWAY_AUTH api-key or jwt). */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key'];

/**
 * With RESERVATIONS_CALLBACK_PUBLIC_URL (this gateway's callback address as the reservations
 * subgraph reaches it, like http://127.0.0.1:4100/callback), the subgraph's subscriptions go
 * through Apollo's HTTP callback protocol (the http-callback transport) instead of a connection
 * held per client; RESERVATIONS_CALLBACK_HEARTBEAT_MS sets the heartbeat asked (default 5000).
 * The reservations gateway must list that address in SUBSCRIPTION_CALLBACK_URLS.
 */
const callbackPublicUrl = process.env.RESERVATIONS_CALLBACK_PUBLIC_URL;
const callbacks = callbackPublicUrl
  ? {
      webhooks: true,
      pubsub: new MemPubSub(),
      transportEntries: {
        [RESERVATIONS_SUBGRAPH]: {
          options: {
            subscriptions: {
              kind: 'http-callback',
              options: {
                public_url: callbackPublicUrl,
                path: new URL(callbackPublicUrl).pathname,
                heartbeat_interval: Number(process.env.RESERVATIONS_CALLBACK_HEARTBEAT_MS ?? 5_000),
              },
            },
          },
        },
      },
    }
  : {};

/**
 * Off unless set (the CLI reads this file in its own process; startHiveGateway passes them):
 * `DEMAND_CONTROL_MAX_COST` turns on Hive Gateway's demand control at that cost (docs/federating.md's
 * "Federating" says which value matches our QUERY_MAX_UPSTREAM_CALLS); `ROUTER_HMAC_SECRET` signs
 * every request to our subgraph, which then refuses any other (our setting of the same name).
 */
const maxCost = process.env.DEMAND_CONTROL_MAX_COST;
const hmacSecret = process.env.ROUTER_HMAC_SECRET;

/**
 * Hive Gateway's settings for the company graph: the client's identity reaches the reservations
 * subgraph, whose client authentication decides what the client may see. Only it: an API key is
 * long-lived and made for this gateway alone, and forwarded to every subgraph it would reach other
 * teams' services. A company graph whose subgraphs all check the client is better served by
 * JWTs with an audience per subgraph than by one key forwarded everywhere.
 */
export const gatewayConfig = defineConfig({
  ...callbacks,
  ...(maxCost ? { demandControl: { maxCost: Number(maxCost), includeExtensionMetadata: true } } : {}),
  ...(hmacSecret
    ? {
        hmacSignature: { secret: hmacSecret, shouldSign: ({ subgraphName }) => subgraphName === RESERVATIONS_SUBGRAPH },
      }
    : {}),
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
  if (callbackPublicUrl)
    throw new Error(
      'RESERVATIONS_SUBSCRIPTIONS_WS=on and RESERVATIONS_CALLBACK_PUBLIC_URL: subscriptions go one way, choose one',
    );
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
