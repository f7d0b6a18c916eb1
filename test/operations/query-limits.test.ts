import { type DocumentNode, getIntrospectionQuery, print } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLE_QUERY } from '../../src/http/graphiql.ts';
import * as operations from '../documents/generated.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { HOSTILE_DOCUMENTS } from '../helpers/hostile-documents.ts';

/**
 * Fault: the depth, alias, token and directive limits the architecture promises were missing
 * (20,000 aliases were accepted), and documents about 2500 levels deep overflowed graphql-js's
 * recursive parser, validation or field collection into INTERNAL_SERVER_ERROR.
 */

let t: TestGateway;
beforeAll(async () => {
  // Some documents here are longer than QUERY_MAX_BYTES, which by default refuses them before they
  // are parsed (its own tests: test/http/input-bounds.test.ts): here the limits after it are tested.
  t = await startGateway({ rateLimit: false }, { QUERY_MAX_BYTES: String(1024 * 1024) });
});
afterAll(() => t.close());
beforeEach(() => t.clearLog());

const refusedBy = async (query: string, setting: string) => {
  const res = await t.exec(query);
  expect(res.status).toBeLessThan(500);
  expect(res.errors).toHaveLength(1);
  expect(res.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: setting });
  expect(res.errors![0]!.message).toContain(setting);
  expect(t.calls({ withAuthenticate: true })).toEqual([]);
  return res.errors![0]!.message;
};

describe('limits pass what clients send', () => {
  const documents = Object.entries(operations).filter((entry): entry is [string, DocumentNode] =>
    entry[0].endsWith('Document'),
  );

  it.each(documents)('%s', async (_name, document) => {
    // Without variables most operations stop at their required variables; none may stop at a limit.
    const res = await t.exec(print(document));
    expect(res.errors?.filter((e) => e.extensions?.limit) ?? []).toEqual([]);
  });

  it('GraphiQL’s introspection and its opening query', async () => {
    const introspection = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
    });
    const schema = await t.exec<{ __schema: { types: unknown[] } }, never>(introspection);
    expect(schema.errors).toBeUndefined();
    expect(schema.data!.__schema.types.length).toBeGreaterThan(10);
    const example = await t.exec(EXAMPLE_QUERY);
    expect(example.errors).toBeUndefined();
  });
});

describe('each limit refuses, naming itself and its setting, before any upstream call', () => {
  it('depth (QUERY_MAX_DEPTH, 12 by default)', async () => {
    const query =
      '{ event(eventId: 5001) { reservations { edges { node { attendee { reservations(eventId: 5001) { edges { node { event { reservations { edges { node { eventId } } } } } } } } } } } } }';
    expect(await refusedBy(query, 'QUERY_MAX_DEPTH')).toMatch(/depth limit of 12 exceeded, found 13/);
  });

  it('aliases (QUERY_MAX_ALIASES, 30 by default)', async () => {
    const query = `{ ${Array.from({ length: 31 }, (_, i) => `e${i}: event(eventId: 5001) { name }`).join(' ')} }`;
    expect(await refusedBy(query, 'QUERY_MAX_ALIASES')).toMatch(/Aliases limit of 30 exceeded, found 31/);
  });

  it('directives (QUERY_MAX_DIRECTIVES, 50 by default)', async () => {
    const query = `{ event(eventId: 5001) { ${'name @include(if: true) '.repeat(51)} } }`;
    expect(await refusedBy(query, 'QUERY_MAX_DIRECTIVES')).toMatch(/Directives limit of 50 exceeded, found 51/);
  });

  it('tokens (QUERY_MAX_TOKENS, 1000 by default), 20,000 aliases among them', async () => {
    const aliases = `{ ${Array.from({ length: 20_000 }, (_, i) => `e${i}: event(eventId: 5001) { name }`).join(' ')} }`;
    expect(await refusedBy(aliases, 'QUERY_MAX_TOKENS')).toMatch(/Token limit of 1000 exceeded/);
  });

  it('follows its settings', async () => {
    const strict = await startGateway({ rateLimit: false }, { QUERY_MAX_DEPTH: '2', QUERY_MAX_ALIASES: '1' });
    try {
      const deep = await strict.exec('{ event(eventId: 5001) { hotels { name } } }');
      expect(deep.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'QUERY_MAX_DEPTH' });
      const aliased = await strict.exec('{ a: event(eventId: 5001) { name } b: event(eventId: 5002) { name } }');
      expect(aliased.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'QUERY_MAX_ALIASES' });
      expect(strict.calls({ withAuthenticate: true })).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});

describe('the hostile documents of the hardening issue are refused before any upstream call', () => {
  // Deep documents overflowed graphql-js's parser, validation or field collection: only the token
  // limit, enforced inside parse, stops them first. How fast each is refused: `npm run bench -- hostile`.
  it.each(HOSTILE_DOCUMENTS.map((d) => [d.name, d] as const))('%s', async (_name, hostile) => {
    const res = await t.exec(hostile.query, hostile.variables);
    expect(res.status).toBeLessThan(500);
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0]!.extensions?.code).toBe(hostile.code);
    if (hostile.code === 'BAD_USER_INPUT') expect(res.errors![0]!.extensions?.limit).toBe('QUERY_MAX_TOKENS');
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });
});
