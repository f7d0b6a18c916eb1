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
/**
 * Off unless set (the CLI reads this file in its own process; startHiveGateway passes them):
 * `DEMAND_CONTROL_MAX_COST` turns on Hive Gateway's demand control at that cost (the README's
 * "Federating" says which value matches our QUERY_MAX_UPSTREAM_CALLS); `ROUTER_HMAC_SECRET` signs
 * every request to our subgraph, which then refuses any other (our setting of the same name).
 */
const maxCost = process.env.DEMAND_CONTROL_MAX_COST;
const hmacSecret = process.env.ROUTER_HMAC_SECRET;

export const gatewayConfig = defineConfig({
  ...(maxCost ? { demandControl: { maxCost: Number(maxCost), includeExtensionMetadata: true } } : {}),
  ...(hmacSecret
    ? {
        hmacSignature: { secret: hmacSecret, shouldSign: ({ subgraphName }) => subgraphName === RESERVATIONS_SUBGRAPH },
      }
    : {}),
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
