import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { defersOrStreams } from '../../src/operations/incremental.ts';
import { expandedFields } from '../../src/operations/jit.ts';

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
