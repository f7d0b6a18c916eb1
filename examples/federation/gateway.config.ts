import { defineConfig } from '@graphql-hive/gateway';

/**
 * Hive Gateway's settings for the company graph: the client's identity passes through. Whatever
 * Authorization header a client sends reaches every subgraph, so each one (this reservation
 * gateway's client authentication among them) decides for itself what the client may see.
 */
export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }),
  },
});
