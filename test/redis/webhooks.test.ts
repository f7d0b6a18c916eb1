import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { type Replica, startReplica } from '../helpers/replicas.ts';
import { book, until } from '../helpers/subscriptions.ts';

/*
 * Webhooks with two replicas on one Redis: an endpoint registered on one replica is known to both
 * (the endpoint store is in Redis), and each change reaches the receiver once: one replica at a
 * time (the holder of the `webhooks` lease) joins the feeds and queues their changes, and each
 * delivery of the shared queue is claimed by one replica.
 */

const serverPath = redisServerOrSkip();

describe.skipIf(!serverPath)('webhooks across replicas on Redis', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  let replicas: Replica[] = [];
  let receiver: ReturnType<typeof createServer>;
  let receiverUrl: string;
  const received: { reservationNumber: number; webhookId: string }[] = [];

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    receiver = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => {
        body += chunk;
      });
      request.on('end', () => {
        const message = JSON.parse(body) as { data: { reservationNumber: number } };
        received.push({
          reservationNumber: message.data.reservationNumber,
          webhookId: String(request.headers['webhook-id']),
        });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    replicas = await Promise.all(
      [1, 2].map((n) =>
        startReplica({
          UPSTREAM_BASE_URL: emulator.url,
          UPSTREAM_KEY: 'demo-key-1001',
          UPSTREAM_SYSTEM_IDENTIFIER: '1001',
          UPSTREAM_USER_AGENT: `replica-${n}`,
          REDIS_URL: redis.url,
          REDIS_PREFIX: 'webhooks-test:',
          CHANGES_POLL_INTERVAL_MS: '500',
          WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
        }),
      ),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
    await emulator?.close();
    await redis?.close();
  });

  const exec = async (replica: Replica, query: string) => {
    const response = await fetch(replica.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  };

  it('an endpoint registered on one replica is seen by the other, and each change is delivered once', async () => {
    const [first, second] = replicas as [Replica, Replica];
    const created = await exec(
      first,
      `mutation { createWebhookEndpoint(input: { url: "${receiverUrl}", eventIds: [5003] }) { endpoint { id } userErrors { message } } }`,
    );
    expect(created.errors).toBeUndefined();
    const listed = await exec(second, '{ webhookEndpoints { edges { node { url eventIds } } } }');
    expect(listed.data).toEqual({ webhookEndpoints: { edges: [{ node: { url: receiverUrl, eventIds: [5003] } }] } });

    // The delivering replica heard of the endpoint (announced over Redis) and joins the feed at once.
    const { reservationNumber: one } = await book(emulator, { eventId: 5003 });
    await until(() => received.some((got) => got.reservationNumber === one), 500 + 5_000);
    const { reservationNumber: two } = await book(emulator, { eventId: 5003 });
    await until(() => received.some((got) => got.reservationNumber === two), 10_000);
    expect(received.filter((got) => got.reservationNumber === one)).toHaveLength(1);

    const queueing = replicas.filter((replica) =>
      replica.output().includes('webhooks: this replica queues the changes'),
    );
    expect(queueing).toHaveLength(1);
  }, 60_000);
});
