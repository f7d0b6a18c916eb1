import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { parse } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { defersOrStreams } from '../../src/operations/incremental.ts';
import { expandedFields, useCompiledExecution } from '../../src/operations/jit.ts';

describe('which documents graphql-jit compiles', () => {
  it('counts fields with fragments expanded in place', () => {
    expect(expandedFields(parse('{ event(eventId: 1) { name hotels { name city } } }'))).toBe(5);
    expect(
      expandedFields(
        parse(
          '{ a: event(eventId: 1) { ...E } b: event(eventId: 2) { ...E } } fragment E on Event { name hotels { name } }',
        ),
      ),
    ).toBe(8);
  });

  // Fault: a document spreading fragments twice per level took minutes to compile (2^n fields),
  // though graphql-js answers it at once; such documents are left to graphql-js.
  it('caps the count of a document whose fragments double per level, without expanding it', () => {
    const levels = Array.from({ length: 60 }, (_, i) => `fragment F${i} on Event { ...F${i + 1} ...F${i + 1} }`).join(
      '\n',
    );
    const document = parse(`{ event(eventId: 1) { ...F0 } }\n${levels}\nfragment F60 on Event { name }`);
    expect(expandedFields(document)).toBe(5_001);
  });

  it('leaves documents with @defer or @stream to the executor that knows them', () => {
    expect(
      defersOrStreams(
        parse('{ event(eventId: 1) { reservations(first: 5) { edges @stream(initialCount: 0) { cursor } } } }'),
      ),
    ).toBe(true);
    expect(defersOrStreams(parse('{ event(eventId: 1) { name ... @defer { hotels { name } } } }'))).toBe(true);
    expect(defersOrStreams(parse('{ event(eventId: 1) { name } }'))).toBe(false);
  });

  it('GRAPHQL_JIT is on by default, off on request, and refuses anything else', () => {
    expect(loadConfig({}).graphqlJit).toBe(true);
    expect(loadConfig({ GRAPHQL_JIT: 'off' }).graphqlJit).toBe(false);
    expect(() => loadConfig({ GRAPHQL_JIT: 'yes' })).toThrow(/GRAPHQL_JIT: must be on or off/);
  });
});

describe('graphql-jit, loaded by the first operation to compile', () => {
  const results: { data?: unknown; stringify?: unknown }[] = [];
  const capture: Plugin = { onExecute: () => ({ onExecuteDone: ({ result }) => void results.push(result as never) }) };
  const yoga = createYoga({
    schema: createSchema({ typeDefs: 'type Query { hello: String }', resolvers: { Query: { hello: () => 'world' } } }),
    plugins: [...useCompiledExecution(), useDeferStream(), capture],
    logging: false,
  });
  const run = async (query: string) => {
    await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, multipart/mixed' },
      body: JSON.stringify({ query }),
    });
    return results.pop()!;
  };

  it('compiles a query (its result carries graphql-jit’s serializer), and leaves @defer to graphql-js', async () => {
    const compiled = await run('{ hello }');
    expect(compiled.data).toEqual({ hello: 'world' });
    expect(typeof compiled.stringify).toBe('function');
    expect(typeof (await run('{ hello }')).stringify).toBe('function');
    expect((await run('{ ... @defer { hello } }')).stringify).toBeUndefined();
  });
});
