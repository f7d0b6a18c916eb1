import { createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReservationChange } from '../../src/changes/change.ts';
import { AddressPolicy } from '../../src/deliveries/address-policy.ts';
import { OutboundClient } from '../../src/deliveries/outbound.ts';
import type { ReservationModel } from '../../src/upstream/records.ts';
import { WebhookDeliveries } from '../../src/webhooks/deliveries.ts';
import { MemoryDeliveryStore } from '../../src/webhooks/delivery-store.ts';
import { MemoryEndpointStore, type WebhookEndpoint } from '../../src/webhooks/endpoint-store.ts';
import { newSecret } from '../../src/webhooks/signature.ts';
import { readBody } from '../helpers/request-body.ts';
import { until } from '../helpers/subscriptions.ts';
import { verifies } from './standard-webhooks.ts';

/*
 * The queue over real sockets: a receiver on 127.0.0.1 (allowed by the development exemption)
 * gets signed deliveries through the one outbound path; 500s are retried with the same webhook-id
 * and the reservation's next change only after; a 302 to a private address is not followed.
 * The schedule is shortened so the test needs no clock of its own.
 */

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

describe('webhook deliveries to a receiver on 127.0.0.1', () => {
  const received: Received[] = [];
  let answer: (request: Received) => { status: number; headers?: Record<string, string> } = () => ({ status: 204 });
  let url: string;
  let server: ReturnType<typeof createServer>;
  let client: OutboundClient;
  let deliveries: WebhookDeliveries;
  const endpoints = new MemoryEndpointStore();
  const queue = new MemoryDeliveryStore();

  beforeAll(async () => {
    server = createServer(async (request, response) => {
      const got = {
        path: request.url ?? '',
        headers: request.headers as Record<string, string>,
        body: await readBody(request),
      };
      received.push(got);
      const { status, headers } = answer(got);
      response.writeHead(status, headers).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new OutboundClient(new AddressPolicy({ allowHttpHosts: ['127.0.0.1'] }), {
      timeoutMs: 15_000,
      deadlineMs: 15_000,
      maxResponseBytes: 2_048,
    });
    deliveries = new WebhookDeliveries({
      endpoints,
      queue,
      send: (to, body, headers) => client.post(to, body, headers),
      schedule: [0, 20, 20, 20, 20],
      random: () => 0,
    });
  });
  afterAll(async () => {
    await deliveries.close();
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  let changes = 0;
  const change = (reservationNumber: number): ReservationChange => {
    changes++;
    const modifiedAt = new Date(Date.UTC(2027, 0, 15, 12, changes)).toISOString();
    return {
      kind: 'CHANGED',
      modifiedAt,
      reservation: {
        eventId: 5003,
        reservationNumber,
        status: 'new',
        modifiedDate: modifiedAt,
      } as unknown as ReservationModel,
      key: `${reservationNumber}:r${changes}`,
    };
  };
  const register = async (path: string): Promise<WebhookEndpoint> => {
    const endpoint: WebhookEndpoint = {
      id: `ep_${path.slice(1)}`,
      licenseeId: '1001',
      url: `${url}${path}`,
      eventIds: [5003],
      kinds: ['CREATED', 'CHANGED', 'CANCELLED'],
      description: null,
      secrets: [{ value: newSecret() }],
      enabled: true,
      disabledReason: null,
      failingSince: null,
      createdAt: Date.now(),
    };
    // Only this test's endpoint gets the changes it tells.
    for (const other of await endpoints.list('1001')) await endpoints.save({ ...other, enabled: false });
    await endpoints.save(endpoint);
    return endpoint;
  };

  it('a receiver answering 500 three times then 200 gets the delivery with the same webhook-id, and the next change only after it', async () => {
    const endpoint = await register('/flaky');
    let failures = 3;
    answer = () => (failures-- > 0 ? { status: 500 } : { status: 200 });
    await deliveries.tell('1001', [change(700101)]);
    await deliveries.tell('1001', [change(700101)]);
    await until(() => received.filter((got) => got.path === '/flaky').length === 5);
    await deliveries.idle();

    const got = received.filter((request) => request.path === '/flaky');
    const ids = got.map((request) => request.headers['webhook-id']);
    expect(ids.slice(0, 4)).toEqual([ids[0], ids[0], ids[0], ids[0]]);
    expect(ids[4]).not.toBe(ids[0]);
    expect(got.map((request) => JSON.parse(request.body).data.sequence)).toEqual([1, 1, 1, 1, 2]);
    for (const request of got) expect(verifies(endpoint.secrets[0]!.value, request.headers, request.body)).toBe(true);
    expect(got[0]?.headers['content-type']).toBe('application/json');
  });

  it('does not follow a 302 to a private address: the attempt fails and is tried again', async () => {
    const endpoint = await register('/redirecting');
    answer = (request) =>
      request.path === '/redirecting' ? { status: 302, headers: { location: `${url}/private` } } : { status: 204 };
    await deliveries.tell('1001', [change(700102)]);
    await until(() => received.filter((got) => got.path === '/redirecting').length >= 2);
    await deliveries.idle();
    expect(received.filter((got) => got.path === '/private')).toEqual([]);
    const [delivery] = await queue.list(endpoint.id, { first: 1 });
    expect(delivery?.attempts[0]?.status).toBe(302);
  });

  it('honours a 429’s Retry-After read from the answer: the next attempt waits that long, not the schedule’s 20 ms', async () => {
    const endpoint = await register('/busy');
    answer = () => ({ status: 429, headers: { 'retry-after': '3600' } });
    const before = Date.now();
    await deliveries.tell('1001', [change(700104)]);
    await until(() => received.some((got) => got.path === '/busy'));
    await deliveries.idle();
    const [delivery] = await queue.list(endpoint.id, { first: 1 });
    expect(delivery).toMatchObject({ status: 'PENDING', attempts: [{ status: 429 }] });
    expect(delivery!.nextAttemptAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(received.filter((got) => got.path === '/busy')).toHaveLength(1);
  });

  it('disables the endpoint when it answers 410', async () => {
    const endpoint = await register('/gone');
    answer = () => ({ status: 410 });
    await deliveries.tell('1001', [change(700103)]);
    await until(() => received.some((got) => got.path === '/gone'));
    await deliveries.idle();
    expect(received.filter((got) => got.path === '/gone')).toHaveLength(1);
    expect((await endpoints.get('1001', endpoint.id))?.disabledReason).toBe('the endpoint answered 410 Gone');
  });
});

describe('a name that resolves to a public address at registration and to 127.0.0.1 at delivery', () => {
  it('is registered, then refused at delivery with nothing sent: the attempt says so and is tried again', async () => {
    // A listener on 127.0.0.1 that counts connections: none may arrive.
    let connections = 0;
    const witness = createTcpServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => witness.listen(0, '127.0.0.1', resolve));
    const port = (witness.address() as AddressInfo).port;
    const answers = [['93.184.215.14'], ['127.0.0.1']];
    const policy = new AddressPolicy({
      resolve: async () => (answers.shift() ?? ['127.0.0.1']).map((address) => ({ address, family: 4 })),
    });
    const url = `https://rebind.example:${port}/hooks`;
    // Registration: the name resolves to a public address.
    expect(await policy.check(url)).toBeUndefined();

    const client = new OutboundClient(policy, { timeoutMs: 2_000, deadlineMs: 2_000, maxResponseBytes: 2_048 });
    const endpoints = new MemoryEndpointStore();
    const queue = new MemoryDeliveryStore();
    const deliveries = new WebhookDeliveries({
      endpoints,
      queue,
      send: (to, body, headers) => client.post(to, body, headers),
      schedule: [0, 60_000],
      random: () => 0,
    });
    try {
      await endpoints.save({
        id: 'ep_rebind',
        licenseeId: '1001',
        url,
        eventIds: [5003],
        kinds: ['CREATED', 'CHANGED', 'CANCELLED'],
        description: null,
        secrets: [{ value: newSecret() }],
        enabled: true,
        disabledReason: null,
        failingSince: null,
        createdAt: Date.now(),
      });
      const modifiedAt = new Date().toISOString();
      await deliveries.tell('1001', [
        {
          kind: 'CREATED',
          modifiedAt,
          reservation: { eventId: 5003, reservationNumber: 700201, status: 'new', modifiedDate: modifiedAt } as never,
          key: '700201:rebind',
        },
      ]);
      let attempts: { status: number | null; error?: string }[] = [];
      for (let tries = 0; attempts.length === 0 && tries < 500; tries++) {
        attempts = (await queue.list('ep_rebind', { first: 1 }))[0]?.attempts ?? [];
        if (attempts.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(attempts).toEqual([
        expect.objectContaining({
          status: null,
          error: 'refused: the host name resolves to an address that is not public unicast',
        }),
      ]);
      expect((await queue.list('ep_rebind', { first: 1 }))[0]?.status).toBe('PENDING');
      expect(connections).toBe(0);
    } finally {
      await deliveries.close();
      await client.close();
      await new Promise<void>((resolve) => witness.close(() => resolve()));
    }
  });
});
