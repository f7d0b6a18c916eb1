import { type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ResponseCache } from './plugin.ts';

/**
 * The `Cache-Control` header of every GraphQL answer over HTTP (docs/federating.md), so that a
 * federation router's response or entity cache, or a CDN, may keep what we answer as long as we
 * would ourselves, and nothing we would not:
 *
 * - `private, max-age=<s>`: the lifetime our response cache gives the answer (the shortest of the
 *   types it holds, RESPONSE_CACHE_TTLS), or what remains of it when served from there. `private`
 *   because every answer is one licensee's data, as one client's scopes let it see it.
 * - `no-store, max-age=0` for everything the response cache does not keep: mutations, subscriptions,
 *   answers with errors, stale answers (`extensions.stale`), `@defer`/`@stream`, large answers,
 *   introspection, a type whose lifetime is 0, refusals. `max-age=0` beside `no-store` because
 *   Hive Gateway's response cache reads only `max-age` and `s-maxage` (without it, it would keep
 *   such an answer for its own default lifetime).
 *
 * A batch (a JSON array of operations) is kept as long as its shortest-lived operation, and not at
 * all when one of them may not be kept. The lifetime is the response cache's own measure
 * (`keptFor`), with RESPONSE_CACHE on or off (off: measured, not kept).
 */
export function useCacheControl(cache: ResponseCache): Plugin {
  /** Per request: each of its operations' lifetime in ms, 0 when it may not be kept. */
  const lifetimes = new WeakMap<Request, number[]>();
  /** Operations (their contexts) that are not a query: never kept whatever their result. */
  const notQueries = new WeakSet<object>();
  /** Each request's path, from the URL Yoga parsed (a request refused before this plugin has none). */
  const paths = new WeakMap<Request, string>();
  return {
    onRequest({ request, url }) {
      paths.set(request, url.pathname);
    },
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'query')
        notQueries.add(args.contextValue as object);
    },
    onSubscribe({ args }) {
      notQueries.add(args.contextValue as object);
    },
    // Once per operation (each of a batch), with its result as the client receives it.
    onExecutionResult({ request, context, result }) {
      const lifetime = storable(result) && !notQueries.has(context) ? (cache.keptFor(context) ?? 0) : 0;
      let list = lifetimes.get(request);
      if (!list) lifetimes.set(request, (list = []));
      list.push(lifetime);
    },
    onResponse({ request, response }) {
      // Replaces Yoga's `no-cache` of event streams: `no-store` says more, and holds for a proxy too.
      if (!isGraphqlAnswer(request, response, paths.get(request))) return;
      const list = lifetimes.get(request) ?? [];
      const seconds = response.status === 200 && list.length > 0 ? Math.floor(Math.min(...list) / 1000) : 0;
      response.headers.set('cache-control', seconds > 0 ? `private, max-age=${seconds}` : 'no-store, max-age=0');
    },
  };
}

/** One complete answer without errors nor stale data (a stream of payloads is never kept). */
function storable(result: unknown): boolean {
  if (typeof result !== 'object' || result === null || Symbol.asyncIterator in result) return false;
  const one = result as ExecutionResult;
  return !one.errors?.length && one.extensions?.stale === undefined;
}

/** The answers of /graphql (JSON, GraphQL over HTTP's media type, a stream), not GraphiQL's page. */
function isGraphqlAnswer(request: Request, response: Response, path: string | undefined): boolean {
  const type = response.headers.get('content-type') ?? '';
  return /json|event-stream|multipart\/mixed/.test(type) && (path ?? new URL(request.url).pathname) === GRAPHQL_PATH;
}

const GRAPHQL_PATH = '/graphql';
