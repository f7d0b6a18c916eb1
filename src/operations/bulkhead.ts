import { availableParallelism } from 'node:os';
import { type DocumentNode, Kind, type ValueNode, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * A window of more records than this makes an operation large: its result is megabytes of objects
 * (1000 reservations with contact, rooms and guests are about 5 MB on the heap before they are
 * serialized).
 */
const LARGE_WINDOW = 200;

/**
 * Large operations run a few at a time (twice the cores), the rest wait their turn: they are bound
 * by CPU, so running fifty at once finishes none sooner, and holds fifty results in memory at once
 * (850 MiB peak at 50 connections on 1000-record pages: docs/benchmarks.md). Small
 * operations, which mostly wait on the service, are never held back.
 */
export function useLargeResultBulkhead(permits = 2 * availableParallelism()): Plugin {
  const gate = new Gate(permits);
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (largestWindow(args.document, (args.variableValues ?? {}) as Record<string, unknown>) <= LARGE_WINDOW) return;
      setExecuteFn(async (executionArgs) => {
        const release = await gate.enter();
        try {
          const result = await executeFn(executionArgs);
          if (!isAsyncIterable(result)) {
            release();
            return result;
          }
          // A streamed result holds its permit until the last part is sent or the client leaves.
          return releasingAtEnd(result, release);
        } catch (error) {
          release();
          throw error;
        }
      });
    },
  };
}

/** The largest `first` or `last` the document asks for, its variables read. */
export function largestWindow(document: DocumentNode, variables: Record<string, unknown>): number {
  let largest = 0;
  const valueOf = (node: ValueNode): unknown =>
    node.kind === Kind.VARIABLE ? variables[node.name.value] : node.kind === Kind.INT ? Number(node.value) : undefined;
  visit(document, {
    Argument(node) {
      if (node.name.value !== 'first' && node.name.value !== 'last') return;
      const value = valueOf(node.value);
      if (typeof value === 'number' && value > largest) largest = value;
    },
  });
  return largest;
}

/** A counting semaphore, first come first served. */
class Gate {
  private readonly waiting: (() => void)[] = [];

  constructor(private free: number) {}

  async enter(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

async function* releasingAtEnd<T>(source: AsyncIterable<T>, release: () => void): AsyncGenerator<T> {
  try {
    yield* source;
  } finally {
    release();
  }
}
