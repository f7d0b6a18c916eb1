import type { Plugin } from 'graphql-yoga';
import type { Licensee } from '../config/licensees.ts';
import type { RedisConnection } from '../redis/connection.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { SharedStores } from '../upstream/stores/redis-stores.ts';

/**
 * `/ready`: answered from the upstream layer's state within a second (token held, last success,
 * breaker) for every licensee at once, listed by id; 503 unless all are ready. With REDIS_URL it
 * also names Redis: whether it is reached and whether the budget is shared or this replica's
 * fallback share. A lost Redis does not make the gateway unready: it keeps serving on its share.
 */
export function useReadiness(upstream: UpstreamClient, licensees: readonly Licensee[], shared?: { redis: RedisConnection; stores: SharedStores }): Plugin {
  return {
    async onRequest({ url, endResponse, fetchAPI }) {
      if (url.pathname !== '/ready') return;
      const each = await Promise.all(licensees.map(async (licensee) => ({ id: licensee.id, ready: await upstream.ready(licensee.account) })));
      const ready = each.every((licensee) => licensee.ready);
      const redis = shared ? { redis: { connected: shared.redis.connected(), budget: shared.stores.budget.isShared() ? 'shared' : 'local share' } } : {};
      endResponse(new fetchAPI.Response(JSON.stringify({ ready, licensees: each, ...redis }), { status: ready ? 200 : 503, headers: { 'content-type': 'application/json' } }));
    },
  };
}
