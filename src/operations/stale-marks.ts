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
      const stale = calls.takeStale();
      if (stale.length > 0) setResult(withStale(result as Payload, stale) as never);
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
