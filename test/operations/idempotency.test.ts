import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore, parsedKey, useIdempotency } from '../../src/operations/idempotency.ts';
import { OperationRecords } from '../../src/operations/operation-record.ts';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { listen, wsClient } from '../helpers/subscriptions.ts';

/*
 * Idempotency-Key on mutations (operations/idempotency.ts): a create sent again with its key is
 * answered what the first got, with no second upstream call (the emulator's log counts them) and
 * no second record; the same key with another operation is refused before any call.
 */

const CREATE_FIELD = /* GraphQL */ `
  mutation CreateField($input: CreateCustomFieldInput!) {
    createCustomField(input: $input) { customField { customFieldId name } }
  }
`;
const CREATE_ENDPOINT = /* GraphQL */ `
  mutation CreateEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) { endpoint { id url } secret userErrors { message } }
  }
`;

type Field = { createCustomField: { customField: { customFieldId: number; name: string } } };
type Endpoint = { createWebhookEndpoint: { endpoint: { id: string; url: string } | null; secret: string | null } };

let t: TestGateway;
let sequence = 0;
/** A key no other test sent. */
const freshKey = () => `test-key-${Date.now().toString(36)}-${++sequence}`;
const createField = (name: string, headers: Record<string, string> = {}) =>
  t.exec<Field, { input: { name: string; eventId: number } }>(
    CREATE_FIELD,
    { input: { name, eventId: 5001 } },
    headers,
  );

beforeAll(async () => {
  // Webhook endpoints on this machine: a name outside it would have to resolve.
  t = await startGateway({ rateLimit: false }, { WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

describe('Idempotency-Key on createCustomField', () => {
  it('sent twice with one key, the field is created once and both answers name it', async () => {
    const key = freshKey();
    const first = await createField('Badge type', { 'idempotency-key': key });
    const again = await createField('Badge type', { 'idempotency-key': key });
    expect(first.errors).toBeUndefined();
    expect(t.count('postcustomfield')).toBe(1);
    expect(again.data).toEqual(first.data);
    expect(again.extensions).toEqual({ idempotentReplay: true });
    expect(first.extensions).toBeUndefined();
  });

  it('marks a replayed HTTP answer with Idempotent-Replayed: true', async () => {
    const key = freshKey();
    const send = () =>
      t.gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ query: CREATE_FIELD, variables: { input: { name: 'Dietary needs' } } }),
      });
    const first = await send();
    const again = await send();
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toMatchObject(await first.json());
    expect(t.count('postcustomfield')).toBe(1);
  });

  it('refuses the same key with other variables before any call (422, naming the header)', async () => {
    const key = freshKey();
    await createField('Arrival flight', { 'idempotency-key': key });
    t.clearLog();
    const other = await createField('Departure flight', { 'idempotency-key': key });
    expect(other.status).toBe(422);
    expect(other.data ?? null).toBeNull();
    expect(other.errors).toHaveLength(1);
    expect(other.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'Idempotency-Key' });
    expect(other.errors![0]!.message).toContain('Idempotency-Key');
    expect(t.calls()).toEqual([]);
  });

  it('runs two concurrent requests with one key once, and answers both the same', async () => {
    const key = freshKey();
    const [one, two] = await Promise.all([
      createField('Room preference', { 'idempotency-key': key }),
      createField('Room preference', { 'idempotency-key': key }),
    ]);
    expect(t.count('postcustomfield')).toBe(1);
    expect(one.errors).toBeUndefined();
    expect(two.data).toEqual(one.data);
    // Exactly one of them ran; the other was answered what it got.
    expect([one.extensions?.idempotentReplay, two.extensions?.idempotentReplay].filter(Boolean)).toHaveLength(1);
  });

  it('without the header nothing changes: two requests, two calls, two fields', async () => {
    const first = await createField('Shuttle');
    const again = await createField('Shuttle');
    expect(t.count('postcustomfield')).toBe(2);
    expect(first.data!.createCustomField.customField.customFieldId).not.toBe(
      again.data!.createCustomField.customField.customFieldId,
    );
  });

  it('takes the draft’s quoted form (an sf-string) as the same key as the bare one', async () => {
    const key = freshKey();
    const quoted = await createField('Parking', { 'idempotency-key': `"${key}"` });
    const bare = await createField('Parking', { 'idempotency-key': key });
    expect(quoted.errors).toBeUndefined();
    expect(bare.data).toEqual(quoted.data);
    expect(t.count('postcustomfield')).toBe(1);
  });

  it.each([
    ['empty quotes', '""'],
    ['a non-ASCII character', 'clé-1'],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['an unterminated quoted string', '"abc'],
  ])('refuses a key that is %s, naming the header, before any call', async (_name, key) => {
    const refused = await createField('Late checkout', { 'idempotency-key': key });
    expect(refused.status).toBe(400);
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'Idempotency-Key' });
    expect(refused.errors![0]!.message).toContain('Idempotency-Key');
    expect(t.calls()).toEqual([]);
  });

  it('keeps no refusal made before any call: the key then runs the operation', async () => {
    const key = freshKey();
    const refused = await createField('   ', { 'idempotency-key': key });
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.name' });
    expect(t.calls()).toEqual([]);
    const ran = await createField('Accessibility', { 'idempotency-key': key });
    expect(ran.errors).toBeUndefined();
    expect(ran.extensions).toBeUndefined();
    expect(t.count('postcustomfield')).toBe(1);
  });

  it('takes the key from extensions.idempotencyKey over HTTP too, and refuses a header and extension that differ', async () => {
    const key = freshKey();
    const send = (headers: Record<string, string>, extensions: Record<string, unknown>) =>
      t.gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: CREATE_FIELD, variables: { input: { name: 'Visa letter' } }, extensions }),
      });
    const first = (await (await send({}, { idempotencyKey: key })).json()) as { data: unknown };
    const again = (await (await send({ 'idempotency-key': key }, { idempotencyKey: key })).json()) as {
      data: unknown;
      extensions: unknown;
    };
    expect(again).toEqual({ data: first.data, extensions: { idempotentReplay: true } });
    const differing = await send({ 'idempotency-key': key }, { idempotencyKey: `${key}-other` });
    expect(differing.status).toBe(400);
    expect(((await differing.json()) as { errors: { extensions: unknown }[] }).errors[0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'Idempotency-Key',
    });
    expect(t.count('postcustomfield')).toBe(1);
  });

  it('ignores the header on a query', async () => {
    const answer = await t.exec('{ customFields(eventId: 5001) { name } }', undefined, { 'idempotency-key': '"' });
    expect(answer.errors).toBeUndefined();
  });

  it('over graphql-ws, takes the key from the operation’s extensions', async () => {
    const server = await listen(t);
    const client = wsClient(server.wsUrl);
    try {
      const key = freshKey();
      const send = async () => {
        for await (const result of client.iterate({
          query: CREATE_FIELD,
          variables: { input: { name: 'Spouse program' } },
          extensions: { idempotencyKey: key },
        }))
          return result as { data?: Field; extensions?: Record<string, unknown> };
        throw new Error('no result');
      };
      const first = await send();
      const again = await send();
      expect(first.data).toBeDefined();
      expect(again.data).toEqual(first.data);
      expect(again.extensions).toEqual({ idempotentReplay: true });
      expect(t.count('postcustomfield')).toBe(1);
    } finally {
      await client.dispose();
      await server.close();
    }
  });
});

describe('Idempotency-Key on createWebhookEndpoint', () => {
  it('registers one endpoint, and the repeat answers the same id and the same secret', async () => {
    const key = freshKey();
    const input = { url: 'http://127.0.0.1:9/idempotent', eventIds: [5001] };
    const first = await t.exec<Endpoint, { input: typeof input }>(
      CREATE_ENDPOINT,
      { input },
      { 'idempotency-key': key },
    );
    const again = await t.exec<Endpoint, { input: typeof input }>(
      CREATE_ENDPOINT,
      { input },
      { 'idempotency-key': key },
    );
    expect(first.errors).toBeUndefined();
    const created = first.data!.createWebhookEndpoint;
    expect(created.endpoint?.id).toMatch(/^ep_/);
    expect(created.secret).toMatch(/^whsec_/);
    expect(again.data).toEqual(first.data);
    expect(again.extensions).toEqual({ idempotentReplay: true });
    const listed = await t.exec<{ webhookEndpoints: { edges: { node: { id: string; url: string } }[] } }, never>(
      '{ webhookEndpoints { edges { node { id url } } } }',
    );
    expect(listed.data!.webhookEndpoints.edges.filter(({ node }) => node.url === input.url)).toEqual([
      { node: { id: created.endpoint!.id, url: input.url } },
    ]);
    await t.exec(`mutation { deleteWebhookEndpoint(id: "${created.endpoint!.id}") { deletedId } }`);
  });
});

describe('the key and the memory store', () => {
  it('reads a bare key and the draft’s sf-string, and nothing else', () => {
    expect(parsedKey('7f3c9a')).toBe('7f3c9a');
    expect(parsedKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(parsedKey('"a \\"quoted\\" \\\\ key"')).toBe('a "quoted" \\ key');
    expect(parsedKey('')).toBeUndefined();
    expect(parsedKey('"a"b"')).toBeUndefined();
    expect(parsedKey('tab\there')).toBeUndefined();
  });

  it('holds a key while it runs, keeps its answer, and frees a key released', async () => {
    const store = new MemoryIdempotencyStore();
    const claim = await store.claim('acme:k', 'f1');
    if (!('held' in claim)) throw new Error('not claimed');
    expect(await store.claim('acme:k', 'f1')).toEqual({ running: { fingerprint: 'f1' } });
    await claim.held.keep({ fingerprint: 'f1', answer: '{"data":{}}' });
    expect(await store.claim('acme:k', 'f2')).toEqual({ kept: { fingerprint: 'f1', answer: '{"data":{}}' } });
    const other = await store.claim('acme:other', 'f1');
    if (!('held' in other)) throw new Error('not claimed');
    await other.held.release();
    expect('held' in (await store.claim('acme:other', 'f2'))).toBe(true);
  });

  it('lets a key whose operation never answered lapse after its running time', async () => {
    const store = new MemoryIdempotencyStore({ runningMs: 20, keptMs: 1000 });
    expect('held' in (await store.claim('acme:k', 'f1'))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect('held' in (await store.claim('acme:k', 'f1'))).toBe(true);
  });

  it('refuses a repeat that waited past its bound for the first answer (409, Retry-After), then replays it', async () => {
    let finish = () => {};
    const ran: number[] = [];
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: 'type Query { ok: Boolean } type Mutation { slow: Int }',
        resolvers: {
          Mutation: {
            slow: () => new Promise<number>((resolve) => (finish = () => resolve(ran.push(1)))),
          },
        },
      }),
      context: { principal: { licenseeId: 'acme' } },
      plugins: [useIdempotency(new MemoryIdempotencyStore(), new OperationRecords(), { waitMs: 50 })],
    });
    const send = () =>
      yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'slow-1' },
        body: JSON.stringify({ query: 'mutation { slow }' }),
      });
    const first = send();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const waited = await send();
    expect(waited.status).toBe(409);
    expect(waited.headers.get('retry-after')).toBe('1');
    expect(((await waited.json()) as { errors: { extensions: unknown }[] }).errors[0]!.extensions).toMatchObject({
      code: 'IDEMPOTENT_REQUEST_IN_PROGRESS',
      retryAfterSeconds: 1,
    });
    finish();
    expect(await (await first).json()).toEqual({ data: { slow: 1 } });
    expect(await (await send()).json()).toEqual({ data: { slow: 1 }, extensions: { idempotentReplay: true } });
    expect(ran).toHaveLength(1);
  });
});
