import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LICENSEES_JSON, licenseesEnv, sha256 } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { readBody } from '../helpers/request-body.ts';
import { book, listen, pause, until, wsClient } from '../helpers/subscriptions.ts';
import { verifies } from './standard-webhooks.ts';

/*
 * Webhooks through the gateway: endpoints managed over GraphQL by a client with the
 * `webhooks:manage` scope, one licensee apart from another, and a booking at the emulator reaching
 * a receiver on 127.0.0.1 (allowed by WEBHOOK_ALLOW_HTTP_HOSTS), signed, through the event's one feed.
 */

const POLL_MS = 300;
const OPS_TOKEN = 'webhook-tests-ops-token-7c1d9e2f4a6b';
const ops = { headers: { authorization: `Bearer ${OPS_TOKEN}` } };
const KEYS = {
  'acme-hooks': 'acme-hooks-key-5e6f7a8b9c0d1e2f3a4b',
  'globex-hooks': 'globex-hooks-key-4b3a2f1e0d9c8b7a6f5e',
  'acme-ops': 'acme-ops-key-9f8e7d6c5b4a3f2e1d0c',
} as const;
const as = (client: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[client]}` });

const LICENSEES = {
  licensees: LICENSEES_JSON.licensees.map((licensee) => ({
    ...licensee,
    clients: [
      ...licensee.clients,
      {
        name: `${licensee.id}-hooks`,
        apiKeySha256: sha256(licensee.id === 'acme' ? KEYS['acme-hooks'] : KEYS['globex-hooks']),
        scopes: ['webhooks:manage'],
      },
    ],
  })),
};

/** Waits until an asynchronous condition holds (20 s at most). */
async function eventually(condition: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 20_000; !(await condition()); await pause(50))
    if (Date.now() > deadline) throw new Error('the condition was never reached');
}

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

const CREATE = /* GraphQL */ `
  mutation ($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      endpoint { id url eventIds kinds enabled disabledReason }
      secret
      userErrors { field message }
    }
  }
`;

describe('webhooks through the gateway', () => {
  let t: TestGateway;
  let receiver: ReturnType<typeof createServer>;
  let receiverUrl: string;
  let server: Awaited<ReturnType<typeof listen>>;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = createServer(async (request: IncomingMessage, response) => {
      const body = await readBody(request);
      received.push({ path: request.url ?? '', headers: request.headers as Record<string, string>, body });
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    t = await startGateway(
      { rateLimit: false },
      {
        ...licenseesEnv(LICENSEES),
        GATEWAY_AUTH: 'api-key',
        CHANGES_POLL_INTERVAL_MS: String(POLL_MS),
        WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
        OPS_TOKEN,
      },
    );
    server = await listen(t);
  });
  afterEach(async () => {
    for (const client of ['acme-hooks', 'globex-hooks'] as const) {
      const listed = await t.exec<{ webhookEndpoints: { edges: { node: { id: string } }[] } }, never>(
        '{ webhookEndpoints { edges { node { id } } } }',
        undefined,
        as(client),
      );
      for (const { node } of listed.data?.webhookEndpoints.edges ?? [])
        await t.exec(`mutation { deleteWebhookEndpoint(id: "${node.id}") { deletedId } }`, undefined, as(client));
    }
    await until(() => t.gateway.webhooks.joined().length === 0);
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  /** A query or mutation over GraphQL over SSE: the codes of its errors, and its data. */
  async function overSse(query: string, client: keyof typeof KEYS) {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...as(client) },
      body: JSON.stringify({ query }),
    });
    const text = await response.text();
    const [data] = [...text.matchAll(/^data: (.+)$/gm)].map((match) => JSON.parse(match[1]!) as GraphQLResult);
    return data;
  }

  /** The same over graphql-ws, authenticated in the init payload. */
  async function overWs(query: string, client: keyof typeof KEYS) {
    const ws = wsClient(server.wsUrl, { Authorization: as(client).authorization });
    try {
      for await (const result of ws.iterate({ query })) return result as GraphQLResult;
    } finally {
      await ws.dispose();
    }
  }

  type GraphQLResult = { data?: unknown; errors?: { extensions?: { code?: string } }[] };
  const codes = (result: GraphQLResult | undefined) => result?.errors?.map((error) => error.extensions?.code);

  type Created = {
    createWebhookEndpoint: {
      endpoint: { id: string; url: string; eventIds: number[]; kinds: string[]; enabled: boolean } | null;
      secret: string | null;
      userErrors: { field: string[] | null; message: string }[];
    };
  };
  const create = (client: keyof typeof KEYS, input: Record<string, unknown>) =>
    t.exec<Created, { input: Record<string, unknown> }>(CREATE, { input }, as(client));

  it('delivers a booking at the emulator to the registered receiver, signed, through the event’s one feed', async () => {
    const created = await create('acme-hooks', { url: receiverUrl, eventIds: [5003], description: 'CRM' });
    expect(created.errors).toBeUndefined();
    const { endpoint, secret, userErrors } = created.data!.createWebhookEndpoint;
    expect(userErrors).toEqual([]);
    expect(secret).toMatch(/^whsec_/);
    expect(endpoint).toMatchObject({ url: receiverUrl, eventIds: [5003], kinds: ['CREATED', 'CHANGED', 'CANCELLED'] });
    await until(() => t.gateway.webhooks.joined().includes('1001|5003'));
    expect(t.gateway.changeFeeds.active()).toEqual([expect.objectContaining({ licenseeId: '1001', eventId: 5003 })]);

    const { reservationNumber } = await book(t.emulator, { eventId: 5003 });
    await until(() => received.length > 0, POLL_MS + 5_000);
    const [delivery] = received as [Received];
    expect(verifies(secret!, delivery.headers, delivery.body)).toBe(true);
    expect(JSON.parse(delivery.body)).toMatchObject({
      type: 'reservation.created',
      data: { eventId: 5003, reservationNumber, sequence: 1 },
    });

    // The secret is answered once: the endpoint never shows it again. (The attempt is recorded once
    // the receiver's answer is back, just after the receiver saw the request.)
    const readEndpoint = () =>
      t.exec(
        `{ webhookEndpoint(id: "${endpoint!.id}") { id enabled pendingDeliveries deliveries(first: 5) { totalCount edges { node { status webhookId attempts { status } } } } } }`,
        undefined,
        as('acme-hooks'),
      );
    await eventually(async () => !JSON.stringify((await readEndpoint()).data).includes('PENDING'));
    const read = await readEndpoint();
    expect(JSON.stringify(read)).not.toContain(secret!);
    expect(read.data).toMatchObject({
      webhookEndpoint: {
        enabled: true,
        pendingDeliveries: 0,
        deliveries: {
          totalCount: 1,
          edges: [
            { node: { status: 'SUCCEEDED', webhookId: delivery.headers['webhook-id'], attempts: [{ status: 204 }] } },
          ],
        },
      },
    });
    // Counted once settled (the read above saw it SUCCEEDED).
    const scraped = await t.gateway.metrics.registry.metrics();
    expect(scraped).toContain('gateway_webhook_attempts_total{licensee="1001",outcome="delivered"} 1');
    expect(scraped).toContain('gateway_webhook_queue_depth{licensee="1001"} 0');
    expect(scraped).toContain(`gateway_webhook_oldest_pending_seconds{licensee="1001",endpoint="${endpoint!.id}"} 0`);
    expect(scraped).not.toContain(secret!);
  });

  it('answers userErrors for a bad URL, an unknown event and another licensee’s event, saving nothing', async () => {
    const bad = await create('acme-hooks', { url: 'http://10.0.0.1/hooks', eventIds: [6001, 999999] });
    expect(bad.data?.createWebhookEndpoint).toEqual({
      endpoint: null,
      secret: null,
      userErrors: [
        { field: ['input', 'url'], message: 'The URL must use https.' },
        { field: ['input', 'eventIds'], message: 'No event 6001 of your licensee.' },
        { field: ['input', 'eventIds'], message: 'No event 999999 of your licensee.' },
      ],
    });
    const metadata = await create('acme-hooks', { url: 'https://169.254.169.254/latest', eventIds: [5003] });
    expect(metadata.data?.createWebhookEndpoint.userErrors).toEqual([
      { field: ['input', 'url'], message: 'The address is not a public unicast address.' },
    ]);
    // Each address form, through the mutation (127.0.0.1 itself is exempt here: the receivers' host).
    const notPublic = 'The address is not a public unicast address.';
    const notDecimal = 'An IPv4 address must be written as four decimal numbers.';
    for (const [url, message] of [
      ['https://127.0.0.2/hooks', notPublic],
      ['https://[::1]/hooks', notPublic],
      ['https://10.1.2.3/hooks', notPublic],
      ['https://192.168.1.1/hooks', notPublic],
      ['https://172.16.0.1/hooks', notPublic],
      ['https://[fd00::1]/hooks', notPublic],
      ['https://169.254.1.1/hooks', notPublic],
      ['https://[fe80::1]/hooks', notPublic],
      ['https://100.64.0.1/hooks', notPublic],
      ['https://[::ffff:127.0.0.1]/hooks', notPublic],
      ['https://[::ffff:8.8.8.8]/hooks', notPublic],
      ['https://2130706433/hooks', notDecimal],
      ['https://0177.0.0.1/hooks', notDecimal],
      ['https://0x7f.0.0.1/hooks', notDecimal],
      ['https://user:pass@receiver.example/hooks', 'The URL must not carry credentials.'],
    ]) {
      const refused = await create('acme-hooks', { url, eventIds: [5003] });
      expect(refused.data?.createWebhookEndpoint, url).toEqual({
        endpoint: null,
        secret: null,
        userErrors: [{ field: ['input', 'url'], message }],
      });
    }
    const listed = await t.exec<{ webhookEndpoints: { totalCount: number } }, never>(
      '{ webhookEndpoints { totalCount } }',
      undefined,
      as('acme-hooks'),
    );
    expect(listed.data?.webhookEndpoints.totalCount).toBe(0);
  });

  it('keeps one licensee’s endpoints from another: not listed, read, changed, pinged, deleted or redelivered', async () => {
    const { endpoint } = (await create('acme-hooks', { url: receiverUrl, eventIds: [5003] })).data!
      .createWebhookEndpoint;
    const id = endpoint!.id;
    const listed = await t.exec('{ webhookEndpoints { totalCount } }', undefined, as('globex-hooks'));
    expect(listed.data).toEqual({ webhookEndpoints: { totalCount: 0 } });
    const read = await t.exec(`{ webhookEndpoint(id: "${id}") { id } }`, undefined, as('globex-hooks'));
    expect(read.data).toEqual({ webhookEndpoint: null });
    const notYours = { field: ['id'], message: 'No webhook endpoint of yours has this id.' };
    for (const mutation of [
      `updateWebhookEndpoint(id: "${id}", input: { url: "https://example.com/x" }) { userErrors { field message } }`,
      `disableWebhookEndpoint(id: "${id}") { userErrors { field message } }`,
      `enableWebhookEndpoint(id: "${id}") { userErrors { field message } }`,
      `rotateWebhookSecret(id: "${id}") { secret userErrors { field message } }`,
      `pingWebhookEndpoint(id: "${id}") { userErrors { field message } }`,
      `deleteWebhookEndpoint(id: "${id}") { userErrors { field message } }`,
    ]) {
      const answer = await t.exec<Record<string, { userErrors: unknown[]; secret?: unknown }>, never>(
        `mutation { ${mutation} }`,
        undefined,
        as('globex-hooks'),
      );
      const [payload] = Object.values(answer.data ?? {});
      expect(payload?.userErrors).toEqual([notYours]);
      expect(payload?.secret ?? null).toBeNull();
    }
    // Acme's delivery ids mean nothing to globex.
    const pinged = await t.exec<{ pingWebhookEndpoint: { delivery: { id: string } } }, never>(
      `mutation { pingWebhookEndpoint(id: "${id}") { delivery { id } } }`,
      undefined,
      as('acme-hooks'),
    );
    const deliveryId = pinged.data!.pingWebhookEndpoint.delivery.id;
    const redelivered = await t.exec(
      `mutation { redeliverWebhook(deliveryId: "${deliveryId}") { delivery { id } userErrors { message } } }`,
      undefined,
      as('globex-hooks'),
    );
    expect(redelivered.data).toEqual({
      redeliverWebhook: { delivery: null, userErrors: [{ message: 'No webhook delivery of yours has this id.' }] },
    });
    const still = await t.exec(`{ webhookEndpoint(id: "${id}") { enabled eventIds } }`, undefined, as('acme-hooks'));
    expect(still.data).toEqual({ webhookEndpoint: { enabled: true, eventIds: [5003] } });
    // Nor can acme move its own endpoint onto globex's event.
    const moved = await t.exec(
      `mutation { updateWebhookEndpoint(id: "${id}", input: { eventIds: [6001] }) { endpoint { id } userErrors { field message } } }`,
      undefined,
      as('acme-hooks'),
    );
    expect(moved.data).toEqual({
      updateWebhookEndpoint: {
        endpoint: null,
        userErrors: [{ field: ['input', 'eventIds'], message: 'No event 6001 of your licensee.' }],
      },
    });
  });

  it('needs the webhooks:manage scope, and that scope alone runs nothing else', async () => {
    const withoutScope = await t.exec('{ webhookEndpoints { totalCount } }', undefined, as('acme-ops'));
    expect(withoutScope.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const mixed = await t.exec(
      '{ event(eventId: 5003) { eventId } webhookEndpoints { totalCount } }',
      undefined,
      as('acme-ops'),
    );
    expect(mixed.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(mixed.data).toBeNull();
    const createdByOps = await t.exec(CREATE, { input: { url: receiverUrl, eventIds: [5003] } }, as('acme-ops'));
    expect(createdByOps.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const otherQuery = await t.exec('{ event(eventId: 5003) { eventId } }', undefined, as('acme-hooks'));
    expect(otherQuery.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(t.gateway.webhooks.joined()).toEqual([]);
  });

  it('rotates a secret: both sign meanwhile; disabling leaves the feed, enabling joins it again', async () => {
    const { endpoint, secret } = (await create('acme-hooks', { url: receiverUrl, eventIds: [5003] })).data!
      .createWebhookEndpoint;
    const rotated = await t.exec<{ rotateWebhookSecret: { secret: string } }, never>(
      `mutation { rotateWebhookSecret(id: "${endpoint!.id}", previousSecretValidFor: 3600) { secret userErrors { message } } }`,
      undefined,
      as('acme-hooks'),
    );
    const fresh = rotated.data!.rotateWebhookSecret.secret;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await t.exec(
      `mutation { pingWebhookEndpoint(id: "${endpoint!.id}") { userErrors { message } } }`,
      undefined,
      as('acme-hooks'),
    );
    const pingOf = () =>
      received.find((got) => {
        const message = JSON.parse(got.body) as { type: string; data: { endpointId?: string } };
        return message.type === 'webhook.test' && message.data.endpointId === endpoint!.id;
      });
    await until(() => pingOf() !== undefined);
    const ping = pingOf()!;
    expect(verifies(fresh, ping.headers, ping.body)).toBe(true);
    expect(verifies(secret!, ping.headers, ping.body)).toBe(true);

    await until(() => t.gateway.webhooks.joined().includes('1001|5003'));
    const disabled = await t.exec(
      `mutation { disableWebhookEndpoint(id: "${endpoint!.id}") { endpoint { enabled disabledReason } } }`,
      undefined,
      as('acme-hooks'),
    );
    expect(disabled.data).toEqual({
      disableWebhookEndpoint: { endpoint: { enabled: false, disabledReason: 'disabled by its client' } },
    });
    await until(() => t.gateway.webhooks.joined().length === 0);
    await t.exec(
      `mutation { enableWebhookEndpoint(id: "${endpoint!.id}") { endpoint { enabled } } }`,
      undefined,
      as('acme-hooks'),
    );
    await until(() => t.gateway.webhooks.joined().includes('1001|5003'));
  });

  it('recovers a disabled endpoint: what changed while it was disabled is sent, nothing it had is sent again (HTTP and graphql-ws)', async () => {
    const { endpoint } = (await create('acme-hooks', { url: `${receiverUrl}?recover`, eventIds: [5003] })).data!
      .createWebhookEndpoint;
    const id = endpoint!.id;
    const mine = () =>
      received
        .filter((got) => got.path === '/hooks?recover')
        .map((got) => (JSON.parse(got.body) as { data: { reservationNumber?: number } }).data.reservationNumber);
    await until(() => t.gateway.webhooks.joined().includes('1001|5003'));
    const had = await book(t.emulator, { eventId: 5003 });
    await until(() => mine().includes(had.reservationNumber));
    // From a minute before the last change received, on the service's clock (as a receiver knows it).
    const lastReceived = received.filter((got) => got.path === '/hooks?recover').at(-1)!;
    const since = new Date(
      Date.parse((JSON.parse(lastReceived.body) as { data: { modifiedAt: string } }).data.modifiedAt) - 60_000,
    ).toISOString();
    await t.exec(
      `mutation { disableWebhookEndpoint(id: "${id}") { userErrors { message } } }`,
      undefined,
      as('acme-hooks'),
    );
    await until(() => t.gateway.webhooks.joined().length === 0);
    const missed = await book(t.emulator, { eventId: 5003 });

    const RECOVER = (at: string) =>
      `mutation { recoverWebhookEndpoint(id: "${id}", since: "${at}") { endpoint { enabled disabledReason } queued userErrors { field message } } }`;
    // Another licensee's client cannot; a client without the scope is refused on every door.
    const globex = await t.exec(RECOVER(since), undefined, as('globex-hooks'));
    expect(globex.data).toEqual({
      recoverWebhookEndpoint: {
        endpoint: null,
        queued: null,
        userErrors: [{ field: ['id'], message: 'No webhook endpoint of yours has this id.' }],
      },
    });
    expect(codes(await overWs(RECOVER(since), 'acme-ops'))).toEqual(['FORBIDDEN']);
    expect(codes(await overSse(RECOVER(since), 'acme-ops'))).toEqual(['FORBIDDEN']);
    const future = await t.exec(
      RECOVER(new Date(Date.parse(since) + 3_600_000).toISOString()),
      undefined,
      as('acme-hooks'),
    );
    expect(future.data).toMatchObject({
      recoverWebhookEndpoint: { queued: null, userErrors: [{ field: ['since'] }] },
    });
    expect(mine().includes(missed.reservationNumber)).toBe(false);

    const sentBefore = mine().length;
    const recovered = (await overWs(RECOVER(since), 'acme-hooks')) as {
      data?: { recoverWebhookEndpoint: { endpoint: unknown; queued: number; userErrors: unknown[] } };
    };
    expect(recovered.data?.recoverWebhookEndpoint).toMatchObject({
      endpoint: { enabled: true, disabledReason: null },
      userErrors: [],
    });
    const { queued } = recovered.data!.recoverWebhookEndpoint;
    expect(queued).toBeGreaterThanOrEqual(1);
    await until(() => mine().length === sentBefore + queued);
    expect(mine().filter((n) => n === missed.reservationNumber)).toHaveLength(1);
    expect(mine().filter((n) => n === had.reservationNumber)).toHaveLength(1);
    await until(() => t.gateway.webhooks.joined().includes('1001|5003'));

    // Recovering again over HTTP has nothing left to send.
    const again = await t.exec(RECOVER(since), undefined, as('acme-hooks'));
    expect(again.data).toMatchObject({ recoverWebhookEndpoint: { queued: 0, userErrors: [] } });
  });

  it('shows endpoints’ health on the status page: enabled and disabled, deliveries waiting, the oldest’s age', async () => {
    // A receiver that refuses connections: a closed port on 127.0.0.1.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const downUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/down`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = (await create('acme-hooks', { url: downUrl, eventIds: [5003] })).data!.createWebhookEndpoint.endpoint!;
    const off = (await create('acme-hooks', { url: receiverUrl, eventIds: [5003] })).data!.createWebhookEndpoint
      .endpoint!;
    await t.exec(
      `mutation { disableWebhookEndpoint(id: "${off.id}") { userErrors { message } } }`,
      undefined,
      as('acme-hooks'),
    );
    await t.exec(
      `mutation { pingWebhookEndpoint(id: "${down.id}") { userErrors { message } } }`,
      undefined,
      as('acme-hooks'),
    );
    // The ping's first attempt failed: it waits for the next.
    await eventually(async () => {
      const read = await t.exec<
        { webhookEndpoint: { deliveries: { edges: { node: { attempts: unknown[] } }[] } } },
        never
      >(
        `{ webhookEndpoint(id: "${down.id}") { deliveries(first: 1) { edges { node { attempts { status } } } } } }`,
        undefined,
        as('acme-hooks'),
      );
      return (read.data?.webhookEndpoint.deliveries.edges[0]?.node.attempts.length ?? 0) > 0;
    });

    type Snapshot = { licensees: { licensee: string; webhooks: Record<string, number> }[] };
    const health = async (licensee: string) => {
      const snapshot = (await (await t.gateway.operators.fetch('http://ops/status.json', ops)).json()) as Snapshot;
      return snapshot.licensees.find((status) => status.licensee === licensee)?.webhooks;
    };
    // What waits is what the graph says waits (the ping, and whatever the event's feed told meanwhile).
    const pendingInGraph = async () => {
      const read = await t.exec<{ webhookEndpoints: { edges: { node: { pendingDeliveries: number } }[] } }, never>(
        '{ webhookEndpoints { edges { node { pendingDeliveries } } } }',
        undefined,
        as('acme-hooks'),
      );
      return (read.data?.webhookEndpoints.edges ?? []).reduce((sum, { node }) => sum + node.pendingDeliveries, 0);
    };
    let acme: Record<string, number> | undefined;
    let pending = 0;
    await eventually(async () => {
      acme = await health('1001');
      pending = await pendingInGraph();
      return acme?.enabled === 1 && acme.disabled === 1 && acme.backlog === pending;
    });
    expect(pending).toBeGreaterThanOrEqual(1);
    expect(acme).toEqual({ enabled: 1, disabled: 1, backlog: pending, oldestPendingSeconds: expect.any(Number) });
    expect(await health('2002')).toEqual({ enabled: 0, disabled: 0, backlog: 0, oldestPendingSeconds: 0 });
    const page = await (await t.gateway.operators.fetch('http://ops/status', ops)).text();
    expect(page).toContain("'webhook-endpoints'");
    expect(page).toContain("'webhook-backlog'");
  });

  describe('the scope on every door', () => {
    const LIST = '{ webhookEndpoints { totalCount } }';
    const CREATE_ONE = `mutation { createWebhookEndpoint(input: { url: "https://receiver.example/x", eventIds: [5003] }) { secret userErrors { message } } }`;

    it('refuses a client without webhooks:manage over SSE and graphql-ws, and serves one with it', async () => {
      for (const door of [overSse, overWs]) {
        expect(codes(await door(LIST, 'acme-ops')), door.name).toEqual(['FORBIDDEN']);
        expect(codes(await door(CREATE_ONE, 'acme-ops')), door.name).toEqual(['FORBIDDEN']);
        expect((await door(LIST, 'acme-hooks'))?.data, door.name).toEqual({ webhookEndpoints: { totalCount: 0 } });
      }
      const listed = await t.exec(LIST, undefined, as('acme-hooks'));
      expect(listed.data).toEqual({ webhookEndpoints: { totalCount: 0 } });
    });
  });
});
