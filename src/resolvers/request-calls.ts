import DataLoader from 'dataloader';
import type { UpstreamAccount } from '../upstream/account.ts';
import { stableKey } from '../upstream/cache.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { EndpointName, ParamsOf, ResultOf } from '../upstream/endpoints.ts';
import { NotFoundError } from '../upstream/errors.ts';

type CallName = Exclude<EndpointName, 'authenticate'>;

/**
 * The upstream calls of one operation. Every read goes through `read`, a DataLoader keyed by
 * endpoint and parameters, so one operation never makes the same call twice however many fields
 * ask for it (the service has no batch endpoints: this dedupes, it cannot batch). Writes go through
 * `send`. Lookups that gather keys before they call (federation references) keep their DataLoader
 * here too, so it lives and dies with the operation.
 */
export interface RequestCalls {
  read<N extends CallName>(name: N, params: ParamsOf<N>): Promise<ResultOf<N>>;
  /** A write: sent every time it is asked (two identical creates in one operation are two creates). */
  send<N extends CallName>(name: N, params: ParamsOf<N>): Promise<ResultOf<N>>;
  /** The operation's DataLoader named `key`, made by `create` on first use. */
  loader<K, V>(key: string, create: () => DataLoader<K, V, string>): DataLoader<K, V, string>;
}

/** `onSent` is told of every request the operation's calls actually send (the audit line counts them). */
export function createRequestCalls(
  account: UpstreamAccount,
  upstream: UpstreamClient,
  onSent?: () => void,
): RequestCalls {
  const options = onSent ? { onSent } : {};
  const reads = new DataLoader<[CallName, unknown], unknown, string>(
    (keys) =>
      Promise.all(
        keys.map(([name, params]) => upstream.call(account, name, params as never, options).catch((e: Error) => e)),
      ),
    { cacheKeyFn: ([name, params]) => `${name}|${stableKey(params)}` },
  );
  const loaders = new Map<string, DataLoader<unknown, unknown, string>>();
  return {
    read: (name, params) => reads.load([name, params]) as never,
    send: (name, params) => upstream.call(account, name, params, options),
    loader: <K, V>(key: string, create: () => DataLoader<K, V, string>) => {
      let loader = loaders.get(key) as DataLoader<K, V, string> | undefined;
      if (!loader) loaders.set(key, (loader = create()) as DataLoader<unknown, unknown, string>);
      return loader;
    },
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
