import type { Plugin } from 'graphql-yoga';
import type { Licensee } from '../config/licensees.ts';
import type { UpstreamClient } from '../upstream/client.ts';

/** With REDIS_URL: whether Redis is reached, and whether the budget is shared or this replica's own share. */
export type RedisReadiness = () => { connected: boolean; budget: 'shared' | 'local share' };

/**
 * `/ready`: answered from the upstream layer's state within a second (token held, last success,
 * breaker) for every licensee at once, listed by id; 503 unless all are ready. With REDIS_URL it
 * also names Redis: whether it is reached and whether the budget is shared or this replica's
 * fallback share. A lost Redis does not make the gateway unready: it keeps serving on its share.
 */
export function useReadiness(upstream: UpstreamClient, licensees: readonly Licensee[], redis?: RedisReadiness): Plugin {
  return {
    // Not async: a hook that returns a promise makes every request wait a turn for it.
    onRequest({ url, endResponse, fetchAPI }) {
      if (url.pathname !== '/ready') return;
      return answer(endResponse, fetchAPI);
    },
  };

  async function answer(
    endResponse: (response: Response) => void,
    fetchAPI: { Response: typeof Response },
  ): Promise<void> {
    const each = await Promise.all(
      licensees.map(async (licensee) => ({ id: licensee.id, ready: await upstream.ready(licensee.account) })),
    );
    const ready = each.every((licensee) => licensee.ready);
    endResponse(
      new fetchAPI.Response(JSON.stringify({ ready, licensees: each, ...(redis ? { redis: redis() } : {}) }), {
        status: ready ? 200 : 503,
        headers: { 'content-type': 'application/json' },
      }),
    );
  }
}
