import { buildSchema, type DocumentNode } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.ts';
import { useScopes } from '../../src/auth/scopes.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { LICENSEES_JSON, licenseesEnv, sha256 } from './licensees-fixture.ts';

/*
 * The scope each root field declares (src/schema/scopes.ts), enforced by @envelop/generic-auth
 * (src/auth/scopes.ts): each client below holds one set of scopes, and what it may select is what
 * its fields declare, refused before any upstream call. Every door: test/e2e/every-door.test.ts
 * and test/webhooks/gateway.test.ts.
 */

const KEYS = {
  reader: 'scopes-reader-key-1a2b3c4d5e6f7a8b9c0d',
  writer: 'scopes-writer-key-2b3c4d5e6f7a8b9c0d1e',
  hooks: 'scopes-hooks-key-3c4d5e6f7a8b9c0d1e2f',
  'reader-hooks': 'scopes-reader-hooks-key-4d5e6f7a8b9c0d1e',
} as const;
type Client = keyof typeof KEYS;
const SCOPES: Record<Client, string[]> = {
  reader: ['read'],
  writer: ['write'],
  hooks: ['webhooks:manage'],
  'reader-hooks': ['read', 'webhooks:manage'],
};
const as = (client: Client) => ({ authorization: `Bearer ${KEYS[client]}` });

const LICENSEES = {
  licensees: LICENSEES_JSON.licensees.map((licensee) =>
    licensee.id === 'acme'
      ? {
          ...licensee,
          clients: Object.entries(KEYS).map(([name, key]) => ({
            name,
            apiKeySha256: sha256(key),
            scopes: SCOPES[name as Client],
          })),
        }
      : licensee,
  ),
};

const EVENT = '{ event(eventId: 5001) { eventId } }';
const UPSERT =
  'mutation { upsertAttendee(input: { attendeeId: "A-7", registrationEventId: "R-7", email: "ada@example.com" }) { created attendee { attendeeId } } }';
const ENDPOINTS = '{ webhookEndpoints { totalCount } }';
const ENTITY = '{ _entities(representations: [{ __typename: "Event", eventId: 5001 }]) { ... on Event { eventId } } }';
const SERVICE = '{ _service { sdl } }';

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { ...licenseesEnv(LICENSEES), GATEWAY_AUTH: 'api-key' });
});
afterAll(() => t.close());
beforeEach(() => t.clearLog());

/** What the client got: its data, or the codes and messages of its errors. */
async function asked(query: string, client: Client) {
  const answer = await t.exec(query, undefined, as(client));
  return answer.errors
    ? { status: answer.status, refused: answer.errors.map((error) => [error.extensions?.code, error.message]) }
    : { status: answer.status, data: answer.data };
}

const lacks = (scope: string, what: string) => [
  'FORBIDDEN',
  `This client may not ${what}: it lacks the "${scope}" scope.`,
];

describe('scopes declared on the root fields', () => {
  it('lets read run queries and _entities, and refuses it mutations and webhook management, before any call', async () => {
    expect(await asked(EVENT, 'reader')).toEqual({ status: 200, data: { event: { eventId: 5001 } } });
    expect(await asked(ENTITY, 'reader')).toEqual({ status: 200, data: { _entities: [{ eventId: 5001 }] } });
    t.clearLog();
    expect(await asked(UPSERT, 'reader')).toEqual({ status: 403, refused: [lacks('write', 'run mutations')] });
    expect(await asked(ENDPOINTS, 'reader')).toEqual({
      status: 403,
      refused: [lacks('webhooks:manage', 'manage webhooks')],
    });
    expect(t.calls()).toEqual([]);
  });

  it('lets write run a mutation and read its payload, and refuses it queries', async () => {
    expect(await asked(UPSERT, 'writer')).toEqual({
      status: 200,
      data: { upsertAttendee: { created: expect.any(Boolean), attendee: { attendeeId: 'A-7' } } },
    });
    t.clearLog();
    expect(await asked(EVENT, 'writer')).toEqual({
      status: 403,
      refused: [lacks('read', 'run queries or subscriptions')],
    });
    expect(t.calls()).toEqual([]);
  });

  it('lets webhooks:manage alone manage webhooks and nothing else: no query, mutation, entity or subscription', async () => {
    expect(await asked(ENDPOINTS, 'hooks')).toEqual({ status: 200, data: { webhookEndpoints: { totalCount: 0 } } });
    expect(await asked(EVENT, 'hooks')).toMatchObject({ refused: [lacks('read', 'run queries or subscriptions')] });
    expect(await asked(ENTITY, 'hooks')).toMatchObject({ refused: [lacks('read', 'run queries or subscriptions')] });
    expect(await asked(UPSERT, 'hooks')).toMatchObject({ refused: [lacks('write', 'run mutations')] });
    const subscription = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...as('hooks') },
      body: JSON.stringify({ query: 'subscription { reservationChanged(eventId: 5001) { kind } }' }),
    });
    expect(await subscription.text()).toContain('it lacks the \\"read\\" scope.');
    expect(t.calls()).toEqual([]);
  });

  it('refuses a mixed operation whole: with read but not webhooks:manage, neither part runs', async () => {
    expect(await asked(`{ event(eventId: 5001) { eventId } webhookEndpoints { totalCount } }`, 'reader')).toEqual({
      status: 403,
      refused: [lacks('webhooks:manage', 'manage webhooks')],
    });
    expect(t.calls()).toEqual([]);
    expect(await asked(`{ event(eventId: 5001) { eventId } webhookEndpoints { totalCount } }`, 'reader-hooks')).toEqual(
      { status: 200, data: { event: { eventId: 5001 }, webhookEndpoints: { totalCount: 0 } } },
    );
  });

  it('lets an operation through again without its check only for the same scopes, and checks @skip/@include per variables', async () => {
    // The same document (one parsed object, Yoga's cache) for a client with the scope, then without it.
    expect(await asked(ENDPOINTS, 'reader-hooks')).toMatchObject({ status: 200 });
    expect(await asked(ENDPOINTS, 'reader-hooks')).toMatchObject({ status: 200 });
    expect(await asked(ENDPOINTS, 'reader')).toEqual({
      status: 403,
      refused: [lacks('webhooks:manage', 'manage webhooks')],
    });
    const conditional =
      'query C($hooks: Boolean!) { event(eventId: 5001) { eventId } webhookEndpoints @include(if: $hooks) { totalCount } }';
    expect((await t.exec(conditional, { hooks: false }, as('reader'))).errors).toBeUndefined();
    t.clearLog();
    const refused = await t.exec(conditional, { hooks: true }, as('reader'));
    expect(refused.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(t.calls()).toEqual([]);
  });

  it('answers one error per scope lacking, at every field that needs it', async () => {
    const answer = await t.exec(
      '{ a: event(eventId: 5001) { eventId } b: events(eventIds: [5002]) { eventId } webhookEndpoints { totalCount } }',
      undefined,
      as('writer'),
    );
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: 'This client may not run queries or subscriptions: it lacks the "read" scope.',
        locations: [
          { line: 1, column: 3 },
          { line: 1, column: 39 },
        ],
      }),
      expect.objectContaining({
        message: 'This client may not manage webhooks: it lacks the "webhooks:manage" scope.',
      }),
    ]);
  });

  it('checks the operation that runs, not the other operations of its document', async () => {
    const document = `query Read ${EVENT} ${UPSERT.replace('mutation', 'mutation Write')}`;
    const read = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as('reader') },
      body: JSON.stringify({ query: document, operationName: 'Read' }),
    });
    expect(await read.json()).toEqual({ data: { event: { eventId: 5001 } } });
    const write = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as('reader') },
      body: JSON.stringify({ query: document, operationName: 'Write' }),
    });
    expect(write.status).toBe(403);
  });

  it('serves _service, the published schema, to any credential, and __typename', async () => {
    expect(await asked(SERVICE, 'hooks')).toMatchObject({
      status: 200,
      data: { _service: { sdl: expect.any(String) } },
    });
    expect(await asked('{ __typename }', 'writer')).toEqual({ status: 200, data: { __typename: 'Query' } });
  });
});

describe('useScopes', () => {
  const schema = buildSchema(`
    directive @requiresScopes(scopes: [[String!]!]!) on FIELD_DEFINITION
    type Query { open: Int, guarded: Int @requiresScopes(scopes: [["read"]]) }
  `);
  for (const [name, value] of Object.entries({ open: 1, guarded: 2 }))
    schema.getQueryType()!.getFields()[name]!.resolve = () => value;

  it('hands the plugins after it the parsed document itself, whose identity keys their caches', async () => {
    const parsed: DocumentNode[] = [];
    const executed: DocumentNode[] = [];
    const seen: Plugin = {
      onParse:
        () =>
        ({ result }) =>
          void parsed.push(result as DocumentNode),
      onExecute: ({ args }) => void executed.push(args.document),
    };
    const principal: Principal = { client: 'c', licenseeId: 'l', scopes: new Set(['read']) };
    const yoga = createYoga({
      schema,
      context: { principal },
      plugins: [useScopes((context) => (context as { principal: Principal }).principal), seen],
    });
    const response = await yoga.fetch('http://yoga/graphql?query=query+A{guarded}+query+B{open}&operationName=A');
    expect(await response.json()).toEqual({ data: { guarded: 2 } });
    expect(executed).toHaveLength(1);
    expect(executed[0]).toBe(parsed[0]);
  });
});
