import { defineConfig } from '@graphql-hive/gateway';

/**
 * Hive Gateway's settings for the company graph: the client's identity passes through. Whatever
 * Authorization (or X-Api-Key) header a client sends reaches every subgraph, so each one (this reservation
 * gateway's client authentication among them) decides for itself what the client may see.
 */
export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => {
      const forwarded: Record<string, string> = {};
      for (const name of ['authorization', 'x-api-key']) {
        const value = request.headers.get(name);
        if (value) forwarded[name] = value;
      }
      return forwarded;
    },
  },
});
