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
  /**
   * Lets go of what the operation's reads answered (its DataLoaders' caches) once its result is
   * built: the answer may wait to be written for a while, its context with it, and a page of 1000
   * records read by the operation is megabytes decoded. A read after this is made again.
   */
  letGo(): void;
  /** Whether any read of the operation was answered from a kept copy (the response cache keeps no such answer). */
  servedStale(): boolean;
}

export type ReadOptions = Pick<CallOptions, 'priority'>;

/** `onSent` is told of every request the operation's calls actually send (the audit line counts them). */
export function createRequestCalls(
  account: UpstreamAccount,
  upstream: UpstreamClient,
  onSent?: () => void,
  fresh = false,
): RequestCalls {
  return new CallsView(
    new OperationCalls(account, upstream, { ...(onSent ? { onSent } : {}), ...(fresh ? { fresh } : {}) }),
    undefined,
  );
}

type ReadKey = [CallName, unknown, ReadOptions | undefined];
const keyOf = (name: CallName, params: unknown) => `${name}|${stableKey(params)}`;

/**
 * One operation's calls. Classes rather than closures: a subscription keeps its context as long as
 * its client stays, and the fourteen closures this was made of cost every subscriber ~1 KiB.
 * What the fields below hold is made on first use: an operation answered without a read (a
 * response-cache hit, a refusal, a subscription waiting for its first change) builds none of it.
 */
class OperationCalls {
  /**
   * Per read (endpoint and parameters), the age of the kept copy that answered it: every field
   * reading it, now or later in the operation (DataLoader's cache), got that copy.
   */
  staleAges: Map<string, number> | undefined;
  private reads: DataLoader<ReadKey, unknown, string> | undefined;
  loaders: Map<string, DataLoader<unknown, unknown, string>> | undefined;
  /** Per field path (as text), the oldest copy's age; a field is reported once. */
  recorded: Map<string, { path: FieldPath | undefined; ageMs: number }> | undefined;
  untaken: string[] = [];

  constructor(
    readonly account: UpstreamAccount,
    readonly upstream: UpstreamClient,
    readonly options: { onSent?: () => void; fresh?: boolean },
  ) {}

  private readsLoader(): DataLoader<ReadKey, unknown, string> {
    this.reads ??= new DataLoader<ReadKey, unknown, string>(
      (keys) =>
        Promise.all(
          keys.map(([name, params, read]) =>
            this.upstream
              .call(this.account, name, params as never, {
                ...this.options,
                ...read,
                onStale: (ageMs) => (this.staleAges ??= new Map()).set(keyOf(name, params), ageMs),
              })
              .catch((e: Error) => e),
          ),
        ),
      { cacheKeyFn: ([name, params]) => keyOf(name, params) },
    );
    return this.reads;
  }

  letGo(): void {
    this.reads = undefined;
    this.loaders = undefined;
  }

  private record(path: FieldPath | undefined, ageMs: number): void {
    const text = path ? pathAsArray(path).join('.') : '';
    this.recorded ??= new Map();
    const held = this.recorded.get(text);
    if (!held) this.untaken.push(text);
    if (!held || held.ageMs < ageMs) this.recorded.set(text, { path, ageMs });
  }

  async read(name: CallName, params: unknown, path: FieldPath | undefined, options?: ReadOptions): Promise<unknown> {
    const value = await this.readsLoader().load([name, params, options]);
    if (this.staleAges !== undefined && this.staleAges.size > 0) {
      const ageMs = this.staleAges.get(keyOf(name, params));
      if (ageMs !== undefined) this.record(path, ageMs);
    }
    return value;
  }
}

/** The operation's calls as seen from one field (`at`): its reads' kept copies are recorded under that field. */
class CallsView implements RequestCalls {
  constructor(
    private readonly operation: OperationCalls,
    private readonly path: FieldPath | undefined,
  ) {}

  read<N extends CallName>(name: N, params: ParamsOf<N>, options?: ReadOptions): Promise<ResultOf<N>> {
    return this.operation.read(name, params, this.path, options) as Promise<ResultOf<N>>;
  }

  readAhead<N extends CallName>(name: N, params: ParamsOf<N>): void {
    void this.operation.upstream.prefetch(this.operation.account, name, params);
  }

  send<N extends CallName>(name: N, params: ParamsOf<N>): Promise<ResultOf<N>> {
    return this.operation.upstream.call(this.operation.account, name, params, this.operation.options);
  }

  loader<K, V>(key: string, create: () => DataLoader<K, V, string>): DataLoader<K, V, string> {
    const loaders = (this.operation.loaders ??= new Map());
    let loader = loaders.get(key) as DataLoader<K, V, string> | undefined;
    if (!loader) loaders.set(key, (loader = create()) as DataLoader<unknown, unknown, string>);
    return loader;
  }

  at(path: FieldPath): RequestCalls {
    return new CallsView(this.operation, path);
  }

  takeStale(): StaleRead[] {
    const { recorded } = this.operation;
    const taken = this.operation.untaken.map((text) => {
      const { path, ageMs } = recorded!.get(text)!;
      return { path: path ? pathAsArray(path) : [], ageSeconds: Math.floor(ageMs / 1000) };
    });
    this.operation.untaken = [];
    return taken;
  }

  servedStale(): boolean {
    return this.operation.staleAges !== undefined && this.operation.staleAges.size > 0;
  }

  letGo(): void {
    this.operation.letGo();
  }
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
