import type { ExecutionResult } from 'graphql';

/** The response cache's `extensions.responseCache` (hit, didCache, ttl, invalidatedEntities) removed. */
export function withoutCacheMetadata<R extends ExecutionResult>(result: R): R {
  if (!result.extensions || !('responseCache' in result.extensions)) return result;
  const { responseCache: _hidden, ...rest } = result.extensions;
  return { ...result, extensions: Object.keys(rest).length > 0 ? rest : undefined };
}
