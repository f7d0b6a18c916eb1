import DataLoader from 'dataloader';
import type { UpstreamAccount } from '../upstream/account.ts';
import { stableKey } from '../upstream/cache.ts';
import type { CallOptions, UpstreamClient } from '../upstream/client.ts';
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
  /**
   * `priority` orders the call in the licensee's budget queue (deep pages behind first pages and
   * counts). Two reads of the same call in one operation are one: the first read's priority holds.
   */
  read<N extends CallName>(name: N, params: ParamsOf<N>, options?: ReadOptions): Promise<ResultOf<N>>;
  /**
   * Reads an answer ahead for a later operation (the next page of a walk), only with budget headroom
   * (UpstreamClient.prefetch). Not this operation's call: not counted by `onSent`, never awaited, never failing.
   */
  readAhead<N extends CallName>(name: N, params: ParamsOf<N>): void;
  /** A write: sent every time it is asked (two identical creates in one operation are two creates). */
  send<N extends CallName>(name: N, params: ParamsOf<N>): Promise<ResultOf<N>>;
  /** The operation's DataLoader named `key`, made by `create` on first use. */
  loader<K, V>(key: string, create: () => DataLoader<K, V, string>): DataLoader<K, V, string>;
}

export type ReadOptions = Pick<CallOptions, 'priority'>;

/** `onSent` is told of every request the operation's calls actually send (the audit line counts them). */
export function createRequestCalls(
  account: UpstreamAccount,
  upstream: UpstreamClient,
  onSent?: () => void,
): RequestCalls {
  const options = onSent ? { onSent } : {};
  const reads = new DataLoader<[CallName, unknown, ReadOptions | undefined], unknown, string>(
    (keys) =>
      Promise.all(
        keys.map(([name, params, read]) =>
          upstream.call(account, name, params as never, { ...options, ...read }).catch((e: Error) => e),
        ),
      ),
    { cacheKeyFn: ([name, params]) => `${name}|${stableKey(params)}` },
  );
  const loaders = new Map<string, DataLoader<unknown, unknown, string>>();
  return {
    read: (name, params, read) => reads.load([name, params, read]) as never,
    readAhead: (name, params) => void upstream.prefetch(account, name, params),
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
