import DataLoader from 'dataloader';
import { stableKey } from '../upstream/cache.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { EndpointName, ParamsOf, ResultOf } from '../upstream/endpoints.ts';
import { NotFoundError } from '../upstream/errors.ts';
import type { Licensee } from '../upstream/licensee.ts';

type CallName = Exclude<EndpointName, 'authenticate'>;

/**
 * The request's loaders: every upstream call of one operation goes through `call`, a DataLoader
 * keyed by endpoint and parameters, so one operation never makes the same call twice however many
 * fields ask for it. (The service has no batch endpoints: a loader here dedupes, it cannot batch.)
 */
export interface Loaders {
  call<N extends CallName>(name: N, params: ParamsOf<N>): Promise<ResultOf<N>>;
  /** A write: sent every time it is asked (two identical creates in one operation are two creates). */
  send<N extends CallName>(name: N, params: ParamsOf<N>): Promise<ResultOf<N>>;
}

/** `onSent` is told of every request the operation's calls actually send (the audit line counts them). */
export function createLoaders(licensee: Licensee, upstream: UpstreamClient, onSent?: () => void): Loaders {
  const options = onSent ? { onSent } : {};
  const loader = new DataLoader<[CallName, unknown], unknown, string>(
    (keys) => Promise.all(keys.map(([name, params]) => upstream.call(licensee, name, params as never, options).catch((e: Error) => e))),
    { cacheKeyFn: ([name, params]) => `${name}|${stableKey(params)}` },
  );
  return {
    call: (name, params) => loader.load([name, params]) as never,
    send: (name, params) => upstream.call(licensee, name, params, options),
  };
}

/** A lookup of one missing thing is null, not an error (GraphQL contract). */
export async function orNull<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}
