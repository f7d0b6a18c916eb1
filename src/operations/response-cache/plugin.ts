import { createHash } from 'node:crypto';
import { type Cache, useResponseCache } from '@envelop/response-cache';
import { type DocumentNode, getOperationAST, print } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { audienceOf } from '../../auth/principal.ts';
import { type CachedType, FALLBACK_TTL } from '../../config/response-cache-ttls.ts';
import type { GatewayContext } from '../../resolvers/context.ts';
import { rootFields } from '../../schema/selection.ts';
import { isLarge } from '../bulkhead.ts';
import { defersOrStreams } from '../incremental.ts';
import { writtenFromKeptJson } from '../kept-json.ts';
import { stableJson } from '../stable-json.ts';
import { DEFAULT_STORE_LIMITS, ResponseStore, type StoreLimits } from './store.ts';
import { CHANGED_BY_MUTATION } from './writes.ts';

/**
 * The response cache (docs/architecture.md, "Response cache"): whole answers kept per licensee and
 * client scopes, for the lifetime of the shortest-lived type they hold (config/response-cache-ttls.ts), dropped by our
 * own mutations (writes.ts). A kept answer is written from the JSON of its data serialised when it
 * was first written (kept-json.ts): a hit executes and serialises nothing of it.
 *
 * Built on @envelop/response-cache rather than Yoga's wrapper of it: the wrapper serves a hit
 * while reading the request's parameters, before the document is validated (query limits), the
 * cost is estimated and the client's scopes are checked, and answers If-None-Match with a 304
 * before any of them. Envelop's plugin looks up in `onExecute`: placed after those plugins, a hit
 * is served only to a request that passed them all.
 *
 * Not cached: large answers (a window of more than 200 records, as the bulkhead counts them): the
 * plugin copies every object of an answer to strip its metadata and walks every entity, which for
 * 1000 reservations cost more than executing them again from the kept page, and such answers would
 * crowd everything else out of the store's 10,000 entities (docs/benchmarks.md, S4b). Answers with errors, answers holding data of a kept copy served because the budget
 * was spent (`extensions.stale`: the next request should get fresh data once it can), `@defer`/`@stream` answers (incremental, and a stream exists to
 * not hold the whole list), subscriptions (envelop's plugin does not see them), introspection
 * (`__schema`, `__type`: it costs no upstream call and would only take room).
 */
export interface ResponseCacheSettings {
  ttls: Record<CachedType, number>;
  /**
   * false (RESPONSE_CACHE=off): nothing is kept, but every answer is still measured as if it were,
   * so `keptFor` says how long it could be kept (the Cache-Control header's lifetime, cache-control.ts).
   */
  keep?: boolean;
  limits?: StoreLimits;
  /**
   * Told of what our own mutation changed, after dropping it here; awaited before the mutation's
   * answer goes out (replicas pass it on to each other's caches: server.ts).
   */
  onInvalidated?: (licensee: string, types: CachedType[]) => Promise<void>;
  /**
   * Whether every drop of the licensee's answers announced so far has reached this cache (replicas:
   * replica-drops.ts); a kept answer is served only then, else the operation runs again.
   */
  heardEveryDrop?: (licensee: string) => Promise<boolean>;
}

export interface ResponseCache {
  plugins: Plugin[];
  /** Forgets every answer of every licensee (tests that count upstream calls start from here). */
  clear(): void;
  /** Drops a licensee's answers holding these types (another replica's mutation). */
  invalidate(licensee: string, types: readonly CachedType[]): void;
  /**
   * How long the answer of this operation (its context) is kept from now, in ms: its lifetime when
   * it was just kept (or, with `keep: false`, would have been), what remains of it when it was
   * served from here; undefined when the cache would not keep it (errors, stale data, `@defer`, a
   * large answer, a lifetime of 0, a mutation, a subscription).
   */
  keptFor(context: object): number | undefined;
}

export function useGatewayResponseCache(settings: ResponseCacheSettings): ResponseCache {
  const keep = settings.keep ?? true;
  const stores = new Map<string, ResponseStore>();
  const storeOf = (context: GatewayContext) => {
    const licensee = context.principal.licenseeId;
    let store = stores.get(licensee);
    if (!store) stores.set(licensee, (store = new ResponseStore(settings.limits ?? DEFAULT_STORE_LIMITS)));
    return store;
  };
  const invalidate = (licensee: string, types: readonly CachedType[]) =>
    stores.get(licensee)?.invalidate(types.map((typename) => ({ typename })));
  /** Per operation: how long its answer is kept (keptFor). */
  const lifetimes = new WeakMap<object, number>();
  // The store as one operation sees it: what it keeps or finds is noted as the operation's lifetime.
  const measuring = new ResponseStore(settings.limits ?? DEFAULT_STORE_LIMITS);
  const hit = (store: ResponseStore, id: string, context: GatewayContext, answer = store.get(id)) => {
    const remaining = answer && store.remainingTtl(id);
    if (remaining !== undefined) lifetimes.set(context, remaining);
    return answer;
  };
  const cacheOf = (context: GatewayContext): Cache => {
    const store = keep ? storeOf(context) : undefined;
    return {
      get: (id) => {
        const kept = store?.get(id);
        if (!store || !kept) return undefined;
        if (!settings.heardEveryDrop) return hit(store, id, context, kept);
        // Read again once the check is answered: a drop heard meanwhile has removed it.
        return settings
          .heardEveryDrop(context.principal.licenseeId)
          .then((heard) => (heard ? hit(store, id, context) : undefined));
      },
      set: (id, answer, entities, ttl) => {
        const entityList = [...entities];
        // Written from the JSON of its data serialised once, when this answer is first written: every hit is its bytes.
        const kept = store
          ? store.keep(id, writtenFromKeptJson(answer), entityList, ttl)
          : measuring.accepts(entityList, ttl);
        if (kept) lifetimes.set(context, ttl);
      },
      invalidate: (entities) => store?.invalidate(entities),
    };
  };
  const uncached = new WeakSet<object>();
  const plugins: Plugin[] = [
    {
      // Marks the operations the cache must leave alone, before it looks them up.
      onExecute({ args }) {
        const variables = (args.variableValues ?? {}) as Record<string, unknown>;
        if (defersOrStreams(args.document) || isLarge(args.document, variables))
          uncached.add(args.contextValue as object);
      },
    },
    // Envelop's plugin is typed by the context it reads; Yoga's list holds plugins of its initial context.
    useResponseCache<GatewayContext>({
      cache: (context) => cacheOf(context as GatewayContext),
      // A client's answers are its licensee's data as its scopes let it see them: two licensees never
      // share an answer, nor two clients of one licensee with different scopes.
      session: (context) => audienceOf(context.principal),
      // Nor an operation whose client asked that its reads reach the service.
      enabled: (context) => !uncached.has(context) && context.freshReads !== true,
      ttl: FALLBACK_TTL,
      // Webhook endpoints and deliveries are the gateway's own state, changed by mutations the cache does not see.
      ttlPerSchemaCoordinate: {
        ...settings.ttls,
        'Query.__schema': 0,
        'Query.__type': 0,
        'Query.webhookEndpoints': 0,
        'Query.webhookEndpoint': 0,
      },
      shouldCacheResult: ({ result }) => !result.errors?.length,
      onTtl: ({ ttl, context }) => (context.calls.servedStale() ? 0 : ttl),
      // The document stands in the key by its hash, taken once per parsed document (Yoga's parse
      // cache hands the same document for the same text): a hit hashes nothing. Envelop's default
      // key is a SHA-256 by WebCrypto, asynchronous: a hit then waited on a thread-pool job and its
      // promise, about a tenth of a hit's CPU under load.
      getDocumentString: (args) => documentHash(args.document, (args.contextValue as RequestParams).params?.query),
      buildResponseCacheKey: ({ documentString, operationName, variableValues, sessionId }) => {
        // Each part after the hash is JSON or a GraphQL name: none can run into the next.
        const key = `${documentString}|${operationName ?? ''}|${sessionId ?? ''}|${stableJson(variableValues ?? {})}`;
        return key.length <= LONGEST_PLAIN_KEY ? key : createHash('sha256').update(key).digest('base64');
      },
      // Shown only with X-Show-Cost: 1 (audit.ts removes it otherwise, with metadata.ts).
      includeExtensionMetadata: keep,
      // Entities' ids serve only to drop what a mutation changes: measuring alone selects none
      // (each would be one more field read per record), and reads the lifetime from the types.
      ...(keep ? {} : { idFields: [] }),
    }) as Plugin,
  ];
  if (keep)
    plugins.push({
      // After a mutation ran (whatever its outcome: a failure may still have changed something),
      // every answer holding a type it may have changed is dropped.
      onExecute({ args }) {
        const operation = getOperationAST(args.document, args.operationName);
        if (operation?.operation !== 'mutation') return;
        // Wherever a mutation field is written: `mutation { ... on Mutation { createCustomField … } }` changes as much.
        const changed = new Set<CachedType>(
          rootFields(args.document, operation).flatMap((field) => CHANGED_BY_MUTATION[field.name.value] ?? []),
        );
        const licensee = (args.contextValue as unknown as GatewayContext).principal.licenseeId;
        return {
          onExecuteDone: async () => {
            await invalidate(licensee, [...changed]);
            await settings.onInvalidated?.(licensee, [...changed]);
          },
        };
      },
    });
  return {
    plugins,
    clear: () => stores.clear(),
    invalidate: (licensee, types) => void invalidate(licensee, types),
    keptFor: (context) => lifetimes.get(context),
  };
}

interface RequestParams {
  params?: { query?: string };
}

/** Keys longer than this (large variables) are kept as their hash: a key is held as long as its answer. */
const LONGEST_PLAIN_KEY = 256;

const documentHashes = new WeakMap<DocumentNode, string>();

/** The SHA-256 of the document as the client sent it when there is one (no printing), else printed once. */
function documentHash(document: DocumentNode, text: string | undefined): string {
  let hash = documentHashes.get(document);
  if (hash === undefined) {
    hash = createHash('sha256')
      .update(text ?? print(document))
      .digest('base64');
    documentHashes.set(document, hash);
  }
  return hash;
}
