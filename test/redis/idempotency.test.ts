import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { closeGateways, type GatewayOnRedis, gatewaysOnRedis } from '../helpers/in-process-replicas.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';

const serverPath = redisServerOrSkip();
const SECRET_KEY = '7a'.repeat(32);

/**
 * Idempotency-Key across two gateways (replicas) in this process on one Redis: the answer kept by
 * one is replayed by the other, and an answer holding a webhook secret is sealed in Redis.
 */
describe.skipIf(!serverPath)('Idempotency-Key across replicas on Redis', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  const replicas: GatewayOnRedis[] = [];

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'idempotency-test:',
      WEBHOOK_SECRET_KEY: SECRET_KEY,
      WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
    });
    replicas.push(...(await gatewaysOnRedis(config, emulator.url, 2)));
  }, 30_000);
  afterAll(async () => {
    await closeGateways(replicas);
    await emulator?.close();
    await redis?.close();
  });

  const exec = async (replica: number, query: string, variables: Record<string, unknown>, key?: string) => {
    const response = await replicas[replica]!.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    return {
      replayed: response.headers.get('idempotent-replayed'),
      body: (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[]; extensions?: unknown },
    };
  };
  const calls = (endpoint: string) => emulator.state.log.filter((entry) => entry.endpoint === endpoint).length;

  it('the second replica replays the answer the first kept, with no upstream call', async () => {
    const query =
      'mutation ($input: CreateCustomFieldInput!) { createCustomField(input: $input) { customField { customFieldId name } } }';
    const variables = { input: { name: 'Badge type', eventId: 5001 } };
    const before = calls('postcustomfield');
    const first = await exec(0, query, variables, 'replica-key-1');
    const again = await exec(1, query, variables, 'replica-key-1');
    expect(first.body.errors).toBeUndefined();
    expect(calls('postcustomfield')).toBe(before + 1);
    expect(again.body.data).toEqual(first.body.data);
    expect(again.body.extensions).toEqual({ idempotentReplay: true });
    expect(again.replayed).toBe('true');
    // Another operation with the key is refused on either replica.
    const other = await exec(1, query, { input: { name: 'Other', eventId: 5001 } }, 'replica-key-1');
    expect(other.body.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT', field: 'Idempotency-Key' } }]);
    expect(calls('postcustomfield')).toBe(before + 1);
  });

  it('keeps the answer of createWebhookEndpoint sealed in Redis: its secret is not in the stored value', async () => {
    const query =
      'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } secret userErrors { message } } }';
    const variables = { input: { url: 'http://127.0.0.1:9/sealed', eventIds: [5001] } };
    const first = await exec(0, query, variables, 'replica-key-2');
    const created = first.body.data!.createWebhookEndpoint as { endpoint: { id: string }; secret: string };
    expect(created.secret).toMatch(/^whsec_/);
    const again = await exec(1, query, variables, 'replica-key-2');
    expect(again.body.data).toEqual(first.body.data);

    const client = redis.client();
    const keys = await client.keys('idempotency-test:idempotency:*');
    const values = await Promise.all(keys.map((key) => client.get(key)));
    const kept = values.filter((value) => value?.includes('aes256gcm:'));
    expect(kept.length).toBe(2);
    for (const value of values) {
      expect(value).not.toContain(created.secret);
      expect(value).not.toContain(created.secret.slice('whsec_'.length));
      expect(value).not.toContain(created.endpoint.id);
    }
    const listed = await exec(1, '{ webhookEndpoints { edges { node { id } } } }', {});
    expect(listed.body.data).toEqual({ webhookEndpoints: { edges: [{ node: { id: created.endpoint.id } }] } });
    await exec(0, `mutation { deleteWebhookEndpoint(id: "${created.endpoint.id}") { deletedId } }`, {});
  });
});
