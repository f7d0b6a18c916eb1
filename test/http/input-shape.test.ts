import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/environment.ts';
import { inputBoundsProblem, jsonTextProblem } from '../../src/http/input-bounds.ts';

/** The measure of MAX_INPUT_DEPTH and MAX_INPUT_NODES itself (the doors: test/http/input-bounds.test.ts). */
const BOUNDS = { depth: 64, nodes: 50_000 };

/** `[[[…1…]]]`, `levels` arrays deep, built without recursion. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe('the measure of a request’s JSON', () => {
  it('counts the variables object as level 1: 64 levels pass, 65 do not', () => {
    expect(inputBoundsProblem({ variables: { v: nested(63) } }, BOUNDS)).toBeUndefined();
    expect(inputBoundsProblem({ variables: { v: nested(64) } }, BOUNDS)).toMatchObject({
      summary: 'variables nest deeper than 64 levels (MAX_INPUT_DEPTH)',
      extensions: { limit: 'MAX_INPUT_DEPTH', maxDepth: 64 },
    });
    expect(inputBoundsProblem({ extensions: { x: nested(64) } }, BOUNDS)?.summary).toBe(
      'extensions nest deeper than 64 levels (MAX_INPUT_DEPTH)',
    );
  });

  it('names the request body for any other parameter, a batch and a body that is no object', () => {
    expect(inputBoundsProblem({ query: '{ __typename }', other: nested(100) }, BOUNDS)?.summary).toBe(
      'request body nests deeper than 64 levels (MAX_INPUT_DEPTH)',
    );
    expect(inputBoundsProblem([{ query: '{ __typename }' }, { variables: nested(100) }], BOUNDS)?.summary).toMatch(
      /^variables nest/,
    );
    expect(inputBoundsProblem(nested(100), BOUNDS)?.summary).toMatch(/^request body nests/);
    expect(inputBoundsProblem(null, BOUNDS)).toBeUndefined();
    expect(inputBoundsProblem({ query: '{ __typename }' }, BOUNDS)).toBeUndefined();
  });

  it('walks without the call stack: a million levels, and objects as deep as arrays', () => {
    expect(
      inputBoundsProblem({ variables: { v: nested(1_000_000) } }, { depth: 1000, nodes: 2_000_000 }),
    ).toMatchObject({ extensions: { limit: 'MAX_INPUT_DEPTH' } });
    let object: unknown = 1;
    for (let i = 0; i < 100_000; i++) object = { a: object };
    expect(inputBoundsProblem({ variables: object }, BOUNDS)?.extensions.limit).toBe('MAX_INPUT_DEPTH');
  });

  it('counts every member and element over the whole request: 50,000 values pass, 50,001 do not', () => {
    // The variables object and its `v` are two values: 49,998 elements make 50,000.
    const wide = (n: number) => ({ variables: { v: new Array(n).fill(0) } });
    expect(inputBoundsProblem(wide(49_998), BOUNDS)).toBeUndefined();
    expect(inputBoundsProblem(wide(49_999), BOUNDS)).toMatchObject({
      summary: 'variables hold more than 50000 values (MAX_INPUT_NODES)',
      extensions: { limit: 'MAX_INPUT_NODES', maxNodes: 50_000 },
    });
    const keys = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    expect(inputBoundsProblem({ extensions: keys }, BOUNDS)?.summary).toMatch(/^extensions hold more than 50000/);
    // Spread over variables and extensions, the request holds too many together.
    const half = new Array(30_000).fill(0);
    expect(inputBoundsProblem({ variables: { v: half }, extensions: { x: half } }, BOUNDS)?.extensions.limit).toBe(
      'MAX_INPUT_NODES',
    );
  });

  it('passes the largest inputs of the schema: a year of nights, 50 options, a router’s 5000 references', () => {
    const nights = Array.from({ length: 366 }, (_, i) => ({ date: `2027-01-01+${i}`, rooms: i }));
    const options = Array.from({ length: 50 }, (_, i) => ({ value: `v${i}`, label: `Option ${i}` }));
    const representations = Array.from({ length: 5000 }, (_, i) => ({
      __typename: 'Reservation',
      eventId: 5001,
      reservationNumber: i,
    }));
    for (const variables of [
      { input: { eventId: 5001, hotelId: 201, nights } },
      { input: { eventId: 5001, question: 'Dietary needs?', type: 'SELECT_BOX', enabled: true, options } },
      { representations },
    ])
      expect(inputBoundsProblem({ query: '…', variables }, BOUNDS)).toBeUndefined();
  });
});

describe('the same measure on a large body’s text, before it is parsed', () => {
  const request = fc.record(
    { query: fc.string(), variables: fc.jsonValue(), extensions: fc.jsonValue(), other: fc.jsonValue() },
    { requiredKeys: [] },
  );
  const unbounded = Number.MAX_SAFE_INTEGER;

  it('refuses exactly what the measure of the parsed value refuses, naming the same part and bound', () => {
    fc.assert(
      fc.property(
        fc.oneof(request, fc.array(request, { maxLength: 4 })),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 80 }),
        (body, depth, nodes) => {
          const text = JSON.stringify(body);
          // Each bound alone: the text and the value agree on it and on the part they name.
          for (const bounds of [
            { depth, nodes: unbounded },
            { depth: unbounded, nodes },
          ])
            expect(jsonTextProblem(text, bounds)).toEqual(inputBoundsProblem(body, bounds));
          // Both: refused by both or by neither.
          expect(jsonTextProblem(text, { depth, nodes }) === undefined).toBe(
            inputBoundsProblem(body, { depth, nodes }) === undefined,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('skips strings whole: brackets, commas and escaped quotes inside them count nothing', () => {
    const body = { query: '{ a, b [ { "x" } ] }', variables: { v: 'a\\"[[[[,,,,' } };
    // query, variables and v: three values, one level.
    expect(jsonTextProblem(JSON.stringify(body), { depth: 1, nodes: 3 })).toBeUndefined();
    expect(jsonTextProblem(JSON.stringify(body), { depth: 1, nodes: 2 })?.summary).toBe(
      'variables hold more than 2 values (MAX_INPUT_NODES)',
    );
  });
});

describe('the settings', () => {
  it('default to 64 levels and 50,000 values, read MAX_INPUT_DEPTH and MAX_INPUT_NODES, and refuse what would reach the stack', () => {
    expect(loadConfig({}).inputBounds).toEqual({ depth: 64, nodes: 50_000 });
    expect(loadConfig({ MAX_INPUT_DEPTH: '8', MAX_INPUT_NODES: '1000' }).inputBounds).toEqual({
      depth: 8,
      nodes: 1000,
    });
    expect(() => loadConfig({ MAX_INPUT_DEPTH: '1001', MAX_INPUT_NODES: '0' })).toThrow(ConfigError);
    try {
      loadConfig({ MAX_INPUT_DEPTH: '1001', MAX_INPUT_NODES: '0' });
    } catch (error) {
      expect((error as Error).message).toContain('MAX_INPUT_DEPTH: must be at most 1000');
      expect((error as Error).message).toContain('MAX_INPUT_NODES: must be at least 100');
    }
  });
});
