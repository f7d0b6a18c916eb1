import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { post, type Replica, startReplicas } from '../helpers/replicas.ts';
import { readBody } from '../helpers/request-body.ts';
import { book, feedHasRead, until } from '../helpers/subscriptions.ts';
import { verifies } from '../webhooks/standard-webhooks.ts';

/*
 * Webhooks with two replicas on one Redis: an endpoint registered on one replica is known to both
 * (the endpoint store is in Redis), and each change reaches the receiver once: one replica at a
 * time (the holder of the `webhooks` lease) joins the feeds and queues their changes, and each
 * delivery of the shared queue is claimed by one replica.
 */

const serverPath = redisServerOrSkip();
const SECRET_KEY = '5e'.repeat(32);

/*
 * One Redis, one emulator and one pair of replicas for both groups below: the first leaves the
 * pair as it found it (its endpoint deleted), the second kills them and starts a new pair.
 */
let redis: TestRedis;
let emulator: Emulator;
let replicas: Replica[] = [];
const startPair = () =>
  startReplicas(2, emulator.url, redis.url, 'webhooks-test:', {
    CHANGES_POLL_INTERVAL_MS: '500',
    WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
    WEBHOOK_SECRET_KEY: SECRET_KEY,
    // A claim lasts twice the timeout: a dead replica's lapses after 4 s.
    WEBHOOK_TIMEOUT_MS: '2000',
  });
beforeAll(async () => {
  if (!serverPath) return;
  redis = await startRedis(serverPath);
  emulator = await startEmulator({ port: 0, rateLimit: false });
  replicas = await startPair();
}, 60_000);
afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await emulator?.close();
  await redis?.close();
});

describe.skipIf(!serverPath)('webhooks across replicas on Redis', () => {
  let endpointId: string | undefined;
  let receiver: ReturnType<typeof createServer>;
  let receiverUrl: string;
  const received: { reservationNumber: number; webhookId: string; headers: Record<string, string>; body: string }[] =
    [];

  beforeAll(async () => {
    receiver = createServer(async (request, response) => {
      const body = await readBody(request);
      const message = JSON.parse(body) as { data: { reservationNumber: number } };
      received.push({
        reservationNumber: message.data.reservationNumber,
        webhookId: String(request.headers['webhook-id']),
        headers: request.headers as Record<string, string>,
        body,
      });
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    // The pair goes on to the next group: its endpoint (and the deliveries queued for it) goes.
    if (endpointId !== undefined) {
      const deleted = await post(
        replicas[0]!.url,
        `mutation { deleteWebhookEndpoint(id: "${endpointId}") { deletedId userErrors { message } } }`,
      );
      expect(deleted.body.data).toEqual({ deleteWebhookEndpoint: { deletedId: endpointId, userErrors: [] } });
    }
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
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
    const registeredAt = emulator.state.log.length;
    const created = await exec(
      first,
      `mutation { createWebhookEndpoint(input: { url: "${receiverUrl}", eventIds: [5003] }) { endpoint { id } secret userErrors { message } } }`,
    );
    expect(created.errors).toBeUndefined();
    // WEBHOOK_SECRET_KEY: the secret is sealed in Redis, and both replicas open it to sign.
    const { endpoint, secret } = (
      created.data as { createWebhookEndpoint: { endpoint: { id: string }; secret: string } }
    ).createWebhookEndpoint;
    endpointId = endpoint.id;
    const record = await redis.client().hget('webhooks-test:webhooks:endpoints', endpoint.id);
    expect(record).toContain('aes256gcm:');
    expect(record).not.toContain(secret.slice('whsec_'.length));
    const listed = await exec(second, '{ webhookEndpoints { edges { node { url eventIds } } } }');
    expect(listed.data).toEqual({ webhookEndpoints: { edges: [{ node: { url: receiverUrl, eventIds: [5003] } }] } });

    // The delivering replica heard of the endpoint (announced over Redis) and joins the feed at once;
    // what changes once the feed has read the service as the endpoint found it is told (issue 36).
    await feedHasRead(emulator, 5003, registeredAt);
    const { reservationNumber: one } = await book(emulator, { eventId: 5003 });
    await until(() => received.some((got) => got.reservationNumber === one), 500 + 5_000);
    const { reservationNumber: two } = await book(emulator, { eventId: 5003 });
    await until(() => received.some((got) => got.reservationNumber === two), 10_000);
    expect(received.filter((got) => got.reservationNumber === one)).toHaveLength(1);
    for (const got of received) expect(verifies(secret, got.headers, got.body)).toBe(true);

    const queueing = replicas.filter((replica) =>
      replica.output().includes('webhooks: this replica queues the changes'),
    );
    expect(queueing).toHaveLength(1);
  }, 60_000);
});

/**
 * Which of `pids` holds the TCP socket whose local port is `port` (the replica that sent a request),
 * read from Linux's /proc: the sockets of that port in /proc/net/tcp(6), then each process's fds.
 */
function processWithPort(port: number, pids: readonly number[]): number | undefined {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6'])
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(hex) && fields[9]) inodes.add(fields[9]);
    }
  const holds = (pid: number) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
        } catch {
          return false; // closed meanwhile
        }
      });
    } catch {
      return false; // the process is gone
    }
  };
  return pids.find(holds);
}

/*
 * Replicas as processes, killed: the replica holding a delivery in flight is killed (SIGKILL) while
 * the receiver holds its answer back, and the other replica sends the delivery again, with the same
 * webhook-id, once the dead one's claim lapses (twice WEBHOOK_TIMEOUT_MS). Then no replica is left while deliveries
 * wait for their retry, and two new ones on the same Redis send them: nothing is lost.
 */
describe.skipIf(!serverPath)('webhook deliveries when replicas die', () => {
  let receiver: ReturnType<typeof createServer>;
  let receiverUrl: string;
  const received: { reservationNumber: number; webhookId: string; port: number }[] = [];
  /** How the receiver answers a delivery: a status, or 'hold' (no answer until the sender goes away). */
  let answer: (reservationNumber: number) => number | 'hold' = () => 204;

  beforeAll(async () => {
    receiver = createServer(async (request, response) => {
      const body = await readBody(request);
      const message = JSON.parse(body) as { data: { reservationNumber: number } };
      const { reservationNumber } = message.data;
      received.push({
        reservationNumber,
        webhookId: String(request.headers['webhook-id']),
        port: request.socket.remotePort!,
      });
      const status = answer(reservationNumber);
      if (status !== 'hold') response.writeHead(status).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    // Stopped first: a replica stopping mid-delivery is not left waiting for the closed receiver.
    await Promise.all(replicas.map((replica) => replica.stop()));
    replicas = [];
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  });

  const of = (reservationNumber: number) => received.filter((got) => got.reservationNumber === reservationNumber);

  it('the replica holding a delivery in flight is killed: the other delivers it with the same webhook-id; a restart of both loses nothing', async () => {
    const [first] = replicas as [Replica, Replica];
    const registeredAt = emulator.state.log.length;
    const created = await post(
      first.url,
      `mutation { createWebhookEndpoint(input: { url: "${receiverUrl}", eventIds: [5003] }) { endpoint { id } userErrors { message } } }`,
    );
    expect(created.body.errors).toBeUndefined();
    await feedHasRead(emulator, 5003, registeredAt);

    // The first attempt of this booking gets no answer: its sender is killed while it waits.
    const { reservationNumber: held } = await book(emulator, { eventId: 5003 });
    answer = (n) => (n === held && of(held).length === 1 ? 'hold' : 204);
    await until(() => of(held).length === 1, 15_000);
    const sender = processWithPort(
      of(held)[0]!.port,
      replicas.map((replica) => replica.pid),
    );
    const holder = replicas.find((replica) => replica.pid === sender);
    expect(holder, `no replica has the port the delivery came from (pid ${sender})`).toBeDefined();
    const survivor = replicas.find((replica) => replica !== holder)!;
    await holder!.kill();
    replicas = [survivor];

    // Sent again by the survivor once the dead replica's claim lapsed: same webhook-id.
    await until(() => of(held).length === 2, 90_000);
    const [lost, again] = of(held) as [(typeof received)[0], (typeof received)[0]];
    expect(again.webhookId).toBe(lost.webhookId);
    expect(processWithPort(again.port, [holder!.pid, survivor.pid]) ?? survivor.pid).toBe(survivor.pid);

    // A later change is delivered once, by the one replica left.
    const { reservationNumber: later } = await book(emulator, { eventId: 5003 });
    await until(() => of(later).length === 1, 15_000);

    // Deliveries waiting for a retry when every replica stops are sent by the next ones.
    answer = () => 500;
    const waiting = await Promise.all([book(emulator, { eventId: 5003 }), book(emulator, { eventId: 5003 })]);
    await until(() => waiting.every(({ reservationNumber }) => of(reservationNumber).length >= 1), 15_000);
    // Killed at once, before the schedule's second attempt (5 s later) is due.
    await survivor.kill();
    replicas = [];
    const failedBefore = waiting.map(({ reservationNumber }) => of(reservationNumber).length);
    answer = () => 204;
    replicas = await startPair();
    for (const [i, { reservationNumber }] of waiting.entries())
      await until(() => of(reservationNumber).length > failedBefore[i]!, 90_000);
    for (const { reservationNumber } of waiting) {
      const ids = new Set(of(reservationNumber).map((got) => got.webhookId));
      expect(ids.size, `one webhook-id for ${reservationNumber}`).toBe(1);
    }
    // Nothing delivered twice once answered: each change was answered 204 once.
    expect(of(held)).toHaveLength(2);
    expect(of(later)).toHaveLength(1);
  }, 180_000);
});
