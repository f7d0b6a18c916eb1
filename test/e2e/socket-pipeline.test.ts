import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { operationCounts, samples } from '../helpers/metrics.ts';
import { listen, wsClient } from '../helpers/subscriptions.ts';

/*
 * An operation over graphql-ws passes the same pipeline as one over HTTP: it is counted in /metrics
 * with its outcome and its refusals' codes, and its errors carry the codes HTTP gives them (without
 * `extensions.http`, which means nothing on a socket).
 */
const OPS_TOKEN = 'operators-token-0123456789abcdef';

interface Answer {
  data?: unknown;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

/** One operation: its last result, or the errors of an `error` message. */
function run(client: Client, payload: { query: string; variables?: Record<string, unknown> }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let last: Answer = {};
    client.subscribe(payload, {
      next: (result) => void (last = result as Answer),
      error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)),
      complete: () => resolve(last),
    });
  });
}

/** The samples of one metric on the gateway's /metrics. */
async function metric(t: TestGateway, name: string) {
  const res = await t.gateway.operators.fetch('http://yoga/metrics', {
    headers: { authorization: `Bearer ${OPS_TOKEN}` },
  });
  return samples(await res.text(), name);
}

describe('graphql-ws passes the one pipeline', () => {
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, { OPS_TOKEN, OPERATION_NAMES: 'EventName,V' });
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('counts each operation on a socket in gateway_graphql_operations_total with its outcome, and its refusals by code', async () => {
    const client = wsClient(server.wsUrl);
    for (let i = 0; i < 5; i++)
      expect(await run(client, { query: 'query EventName { event(eventId: 5002) { name } }' })).toMatchObject({
        data: { event: { name: expect.any(String) } },
      });
    const refused = await run(client, {
      query: 'query V($e: Int!) { event(eventId: $e) { name } }',
      variables: { e: 'x' },
    });
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const invalid = await run(client, { query: '{ event(eventId: 5002) { nope } }' });
    expect(invalid.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    await client.dispose();

    const operations = operationCounts(await metric(t, 'gateway_graphql_operations_total'));
    expect(operations).toEqual(
      expect.arrayContaining([
        ['EventName', 'query', 'ok', 5],
        ['V', 'query', 'BAD_USER_INPUT', 1],
        ['anonymous', 'query', 'GRAPHQL_VALIDATION_FAILED', 1],
      ]),
    );
    expect(await metric(t, 'gateway_refusals_total')).toEqual(
      expect.arrayContaining([
        { labels: { code: 'BAD_USER_INPUT' }, value: 1 },
        { labels: { code: 'GRAPHQL_VALIDATION_FAILED' }, value: 1 },
      ]),
    );
    const durations = await metric(t, 'gateway_graphql_operation_duration_seconds_count');
    expect(durations.find(({ labels }) => labels.operation === 'EventName')?.value).toBe(5);
  });

  it('answers a variable of the wrong type with BAD_USER_INPUT and no http extension, as HTTP gives its code', async () => {
    const client = wsClient(server.wsUrl);
    const answer = await run(client, {
      query: 'query V($e: Int!) { event(eventId: $e) { name } }',
      variables: { e: 'x' },
    });
    await client.dispose();
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors?.[0]?.message).toMatch(/Variable "\$e" got invalid value "x"/);
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT' });

    const overHttp = await t.exec('query V($e: Int!) { event(eventId: $e) { name } }', { e: 'x' });
    expect(overHttp.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(overHttp.errors?.[0]?.message).toBe(answer.errors?.[0]?.message);
  });
});
