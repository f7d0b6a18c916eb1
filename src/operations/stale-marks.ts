import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestCalls, StaleRead } from '../resolvers/request-calls.ts';

type Payload = ExecutionResult & { extensions?: Record<string, unknown> };

/**
 * `extensions.stale`: the fields whose data came from a kept copy because the licensee's budget
 * could not serve their reads in time (upstream/stale-copies.ts), each with the copy's age. Every
 * door runs operations through this one execution, so HTTP, SSE and graphql-ws answers all carry
 * it; an incremental answer (`@defer`, `@stream`) or a subscription's event names each field in
 * the payload that first holds it.
 */
export function useStaleMarks(): Plugin {
  const markerOf = (context: unknown) => {
    const calls = (context as { calls?: RequestCalls } | undefined)?.calls;
    if (!calls) return undefined;
    return ({ result, setResult }: { result: unknown; setResult: (result: never) => void }) => {
      const marked = markedStale(result as Payload, calls);
      if (marked !== result) setResult(marked as never);
    };
  };
  // One answer is marked when done; a stream of them, payload by payload.
  const onResult =
    (mark: NonNullable<ReturnType<typeof markerOf>>) =>
    ({ result, setResult }: { result: unknown; setResult: (result: never) => void }) => {
      if (isAsyncIterable(result)) return { onNext: mark };
      mark({ result, setResult });
      return undefined;
    };
  return {
    onExecute({ args }) {
      const mark = markerOf(args.contextValue);
      return mark && { onExecuteDone: onResult(mark) };
    },
    onSubscribe({ args }) {
      const mark = markerOf(args.contextValue);
      return mark && { onSubscribeResult: onResult(mark) };
    },
  };
}

/**
 * `result` marked with the stale reads `calls` made since they were last taken (a new object), or
 * `result` itself when there were none. A shared subscription marks its payloads with its own
 * execution's reads (shared-subscriptions.ts).
 */
export function markedStale<T extends Payload>(result: T, calls: RequestCalls): T {
  const stale = calls.takeStale();
  return stale.length > 0 ? (withStale(result, stale) as T) : result;
}

function withStale(result: Payload, stale: StaleRead[]): Payload {
  const earlier = result.extensions?.stale;
  return {
    ...result,
    extensions: { ...result.extensions, stale: Array.isArray(earlier) ? [...earlier, ...stale] : stale },
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
