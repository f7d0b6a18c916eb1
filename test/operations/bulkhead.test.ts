import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import {
  type Admission,
  BYTES_PER_RECORD,
  largestWindow,
  useLargeResultBulkhead,
  windowsOf,
} from '../../src/operations/bulkhead.ts';

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
    const yoga = createYoga({ schema, plugins: [useLargeResultBulkhead({ permits: 2 })], logging: false });
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

  it('lets go of a large operation’s reads once its result is built, and of no small one’s', async () => {
    const schema = createSchema({
      typeDefs: 'type Query { list(first: Int): Int }',
      resolvers: { Query: { list: () => 1 } },
    });
    const letGo: number[] = [];
    const yoga = createYoga({
      // The schema reads nothing of the context this test adds.
      schema: schema as never,
      plugins: [useLargeResultBulkhead({ permits: 2 })],
      context: ({ request }) => ({
        calls: { letGo: () => void letGo.push(Number(new URL(request.url).searchParams.get('first'))) },
      }),
      logging: false,
    });
    for (const first of [1000, 10]) {
      const res = await yoga.fetch(`http://yoga/graphql?first=${first}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ list(first: ${first}) }` }),
      });
      expect(await res.json()).toEqual({ data: { list: 1 } });
    }
    expect(letGo).toEqual([1000]);
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
    const yoga = createYoga({
      schema,
      plugins: [useLargeResultBulkhead({ permits: 1 })],
      logging: false,
      maskedErrors: false,
    });
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

const post = (
  yoga: { fetch: (url: string, init: RequestInit) => Response | Promise<Response> },
  query: string,
  headers: Record<string, string> = {},
) =>
  yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });

describe('large operations are admitted by the bytes they hold', () => {
  it('sums the windows of a document', () => {
    expect(windowsOf(parse('{ a: list(first: 1000) { x } b: list(last: 300) { x } c: list { x } }'), {})).toEqual({
      largest: 1000,
      total: 1300,
    });
  });

  // The process must not die of its own admission: flooded past the bound, operations wait their
  // turn, then are refused with a retry time; every one is answered and the bytes are given back.
  it('refuses with OVERLOADED and retryAfterSeconds when flooded past a small bound, and never crashes', async () => {
    let running = 0;
    let most = 0;
    const schema = createSchema({
      typeDefs: 'type Query { list(first: Int): [Int!]! }',
      resolvers: {
        Query: {
          list: async (_: unknown, { first }: { first: number }) => {
            most = Math.max(most, ++running);
            const records = Array.from({ length: first }, (_, i) => i);
            await new Promise((resolve) => setTimeout(resolve, 15));
            running--;
            return records;
          },
        },
      },
    });
    let admission: Admission | undefined;
    // Room for three 1000-record operations by bytes, though eight permits would let more run.
    const bulkhead = useLargeResultBulkhead(
      { permits: 8, maxBytes: 3 * 1000 * BYTES_PER_RECORD, maxWaitMs: 40 },
      (created) => (admission = created),
    );
    const yoga = createYoga({ schema, plugins: [bulkhead], logging: false });
    const responses = await Promise.all(Array.from({ length: 60 }, () => post(yoga, '{ list(first: 1000) }')));
    const bodies = (await Promise.all(responses.map((res) => res.json()))) as {
      data?: { list: number[] } | null;
      errors?: { message: string; extensions: { code: string; retryAfterSeconds: number } }[];
    }[];
    expect(responses.map((res) => res.status)).toEqual(responses.map(() => 200));
    const served = bodies.filter((body) => body.data?.list.length === 1000);
    const refused = bodies.filter((body) => body.errors);
    expect(served.length + refused.length).toBe(60);
    expect(served.length).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThan(0);
    for (const body of refused) {
      expect(body.errors).toHaveLength(1);
      expect(body.errors![0]!.extensions.code).toBe('OVERLOADED');
      expect(body.errors![0]!.message).toMatch(/retry after \d+ s/);
      expect(Number.isInteger(body.errors![0]!.extensions.retryAfterSeconds)).toBe(true);
      expect(body.errors![0]!.extensions.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    expect(most).toBeLessThanOrEqual(3);
    // Everything given back: nothing held, nobody waiting, and the next one runs at once.
    expect(admission!.state).toEqual({ running: 0, bytes: 0, waiting: 0 });
    expect(await (await post(yoga, '{ list(first: 1000) }')).json()).toMatchObject({
      data: { list: { length: 1000 } },
    });
  });

  it('runs an operation larger than the whole bound alone rather than never', async () => {
    const schema = createSchema({
      typeDefs: 'type Query { list(first: Int): Int }',
      resolvers: { Query: { list: () => 1 } },
    });
    const yoga = createYoga({
      schema,
      plugins: [useLargeResultBulkhead({ permits: 4, maxBytes: 100 * BYTES_PER_RECORD, maxWaitMs: 1000 })],
      logging: false,
    });
    expect(await (await post(yoga, '{ a: list(first: 1000) b: list(first: 1000) }')).json()).toEqual({
      data: { a: 1, b: 1 },
    });
  });

  it('keeps a streamed answer’s bytes reserved until its last part is read, and gives them back when the client leaves', async () => {
    let admission: Admission | undefined;
    const schema = createSchema({
      typeDefs: 'type Query { list(first: Int): [Int!]! }',
      resolvers: {
        Query: {
          list: async function* (_: unknown, { first }: { first: number }) {
            for (let i = 0; i < first; i += 100) {
              await new Promise((resolve) => setTimeout(resolve, 1));
              yield i;
            }
          },
        },
      },
    });
    const yoga = createYoga({
      schema,
      plugins: [useDeferStream(), useLargeResultBulkhead({ permits: 2 }, (created) => (admission = created))],
      logging: false,
    });
    const query = '{ list(first: 1000) @stream(initialCount: 1) }';
    const read = await post(yoga, query, { accept: 'multipart/mixed' });
    const reader = read.body!.getReader();
    await reader.read();
    expect(admission!.state).toMatchObject({ running: 1, bytes: 1000 * BYTES_PER_RECORD });
    while (!(await reader.read()).done);
    expect(admission!.state).toEqual({ running: 0, bytes: 0, waiting: 0 });

    const left = await post(yoga, query, { accept: 'multipart/mixed' });
    const leaving = left.body!.getReader();
    await leaving.read();
    expect(admission!.state.running).toBe(1);
    await leaving.cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(admission!.state).toEqual({ running: 0, bytes: 0, waiting: 0 });
  });
});
