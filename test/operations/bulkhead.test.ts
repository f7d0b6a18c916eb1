import { parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { largestWindow, useLargeResultBulkhead } from '../../src/operations/bulkhead.ts';

describe('large operations run a few at a time', () => {
  it('reads the largest first or last of a document, variables included', () => {
    const document = parse(
      'query ($n: Int) { a: list(first: 5) { x } b: list(first: $n) { x } c: list(last: 300) { x } }',
    );
    expect(largestWindow(document, { n: 1000 })).toBe(1000);
    expect(largestWindow(document, {})).toBe(300);
    expect(largestWindow(parse('{ list { x } }'), {})).toBe(0);
  });

  // Fault (docs/benchmarks.md): fifty 1000-record operations at once all held their results in memory at
  // once (850 MiB peak) and none finished sooner for it, the work being CPU-bound.
  it('holds large operations beyond the permits until one finishes, and never holds small ones', async () => {
    let running = 0;
    let most = 0;
    const schema = createSchema({
      typeDefs: 'type Query { list(first: Int): Int }',
      resolvers: {
        Query: {
          list: async () => {
            most = Math.max(most, ++running);
            await new Promise((resolve) => setTimeout(resolve, 20));
            running--;
            return 1;
          },
        },
      },
    });
    const yoga = createYoga({ schema, plugins: [useLargeResultBulkhead(2)], logging: false });
    const run = async (first: number) => {
      const res = await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ list(first: ${first}) }` }),
      });
      return res.json();
    };
    const large = await Promise.all(Array.from({ length: 8 }, () => run(1000)));
    expect(large).toEqual(Array.from({ length: 8 }, () => ({ data: { list: 1 } })));
    expect(most).toBe(2);
    most = 0;
    await Promise.all(Array.from({ length: 8 }, () => run(10)));
    expect(most).toBe(8);
  });

  it('gives the permit back when the operation ends in errors', async () => {
    const schema = createSchema({
      typeDefs: 'type Query { list(first: Int): Int }',
      resolvers: {
        Query: {
          list: () => {
            throw new Error('boom');
          },
        },
      },
    });
    const yoga = createYoga({ schema, plugins: [useLargeResultBulkhead(1)], logging: false, maskedErrors: false });
    for (let i = 0; i < 3; i++) {
      const res = await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ list(first: 1000) }' }),
      });
      expect(((await res.json()) as { errors: unknown[] }).errors).toHaveLength(1);
    }
  });
});
