import DataLoader from 'dataloader';
import type { UpstreamAccount } from '../upstream/account.ts';
import { stableKey } from '../upstream/cache.ts';
import type { CallOptions, UpstreamClient } from '../upstream/client.ts';
import type { EndpointName, ParamsOf, ResultOf } from '../upstream/endpoints.ts';
import { NotFoundError } from '../upstream/errors.ts';

type CallName = Exclude<EndpointName, 'authenticate'>;
/** A field's place in the answer, as GraphQL's resolve info holds it (linked from the field up to the root). */
export interface FieldPath {
  readonly prev: FieldPath | undefined;
  readonly key: string | number;
}

/**
 * A field's path, cut at the first list index: a field inside a list is named by the list, once,
 * so that a copy feeding a lookup of each of 1000 records makes one mark, not 1000.
 */
function pathAsArray(path: FieldPath): (string | number)[] {
  const keys: (string | number)[] = [];
  for (let at: FieldPath | undefined = path; at; at = at.prev) keys.push(at.key);
  keys.reverse();
  const index = keys.findIndex((key) => typeof key === 'number');
  return index < 0 ? keys : keys.slice(0, index);
}

/** A field of the answer whose data came from a kept copy the budget made the gateway serve instead of a fresh read. */
export interface StaleRead {
  /** The field's response path; `[]` when the read was made where no field could be named. */
  path: (string | number)[];
  /** Whole seconds since the copy was fetched (the oldest, when several copies fed the field). */
  ageSeconds: number;
}

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
  /** The same calls, reads answered from a kept copy recorded under the field at `path` (see `scoped`). */
  at(path: FieldPath): RequestCalls;
  /** The stale reads recorded since the last take, once each (an incremental answer reports each in the payload that first holds it). */
  takeStale(): StaleRead[];
  /** Whether any read of the operation was answered from a kept copy (the response cache keeps no such answer). */
  servedStale(): boolean;
}

export type ReadOptions = Pick<CallOptions, 'priority'>;

/** `onSent` is told of every request the operation's calls actually send (the audit line counts them). */
export function createRequestCalls(
  account: UpstreamAccount,
  upstream: UpstreamClient,
  onSent?: () => void,
): RequestCalls {
  const options = onSent ? { onSent } : {};
  const keyOf = (name: CallName, params: unknown) => `${name}|${stableKey(params)}`;
  // What follows is made on first use: an operation answered without a read (a response-cache hit,
  // a refusal) builds none of it.
  // Per read (endpoint and parameters), the age of the kept copy that answered it: every field
  // reading it, now or later in the operation (DataLoader's cache), got that copy.
  let staleAges: Map<string, number> | undefined;
  let reads: DataLoader<[CallName, unknown, ReadOptions | undefined], unknown, string> | undefined;
  const readsLoader = () =>
    (reads ??= new DataLoader<[CallName, unknown, ReadOptions | undefined], unknown, string>(
      (keys) =>
        Promise.all(
          keys.map(([name, params, read]) =>
            upstream
              .call(account, name, params as never, {
                ...options,
                ...read,
                onStale: (ageMs) => (staleAges ??= new Map()).set(keyOf(name, params), ageMs),
              })
              .catch((e: Error) => e),
          ),
        ),
      { cacheKeyFn: ([name, params]) => keyOf(name, params) },
    ));
  let loaders: Map<string, DataLoader<unknown, unknown, string>> | undefined;
  // Per field path (as text), the oldest copy's age; a field is reported once.
  let recorded: Map<string, { path: FieldPath | undefined; ageMs: number }> | undefined;
  let untaken: string[] = [];
  const record = (path: FieldPath | undefined, ageMs: number) => {
    const text = path ? pathAsArray(path).join('.') : '';
    recorded ??= new Map();
    const held = recorded.get(text);
    if (!held) untaken.push(text);
    if (!held || held.ageMs < ageMs) recorded.set(text, { path, ageMs });
  };
  const read = (name: CallName, params: unknown, path: FieldPath | undefined, options?: ReadOptions) =>
    readsLoader()
      .load([name, params, options])
      .then((value) => {
        if (staleAges !== undefined && staleAges.size > 0) {
          const ageMs = staleAges.get(keyOf(name, params));
          if (ageMs !== undefined) record(path, ageMs);
        }
        return value;
      });
  const view = (path: FieldPath | undefined): RequestCalls => ({
    read: (name, params, options) => read(name, params, path, options) as never,
    readAhead: (name, params) => void upstream.prefetch(account, name, params),
    send: (name, params) => upstream.call(account, name, params, options),
    loader: <K, V>(key: string, create: () => DataLoader<K, V, string>) => {
      loaders ??= new Map();
      let loader = loaders.get(key) as DataLoader<K, V, string> | undefined;
      if (!loader) loaders.set(key, (loader = create()) as DataLoader<unknown, unknown, string>);
      return loader;
    },
    at: (at) => view(at),
    takeStale: () => {
      const taken = untaken.map((text) => {
        const { path, ageMs } = recorded!.get(text)!;
        return { path: path ? pathAsArray(path) : [], ageSeconds: Math.floor(ageMs / 1000) };
      });
      untaken = [];
      return taken;
    },
    servedStale: () => staleAges !== undefined && staleAges.size > 0,
  });
  return view(undefined);
}

/**
 * The context for a resolver whose reads feed the field at `info.path`: a read the budget refused
 * and a kept copy answered is reported under that field (`extensions.stale`, gateway.ts).
 */
export function scoped<C extends { calls: RequestCalls }>(ctx: C, info: { path: FieldPath }): C {
  return { ...ctx, calls: ctx.calls.at(info.path) };
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
