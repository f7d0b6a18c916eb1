import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, createClient, type ExecutionResult } from 'graphql-ws';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config/environment.ts';
import { startEmulator } from '../../src/emulator/server.ts';
import { createGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, pause, subscribeSse, subscribeWs, until, wsClient } from '../helpers/subscriptions.ts';

/*
 * The rules that guard operations hold on the WebSocket door as on HTTP and SSE (docs/security.md)
 *: trusted documents, per-operation errors, credentials that expire, subscription caps, the
 * audit line and the response cache's extension. Each over a real port, with real clients.
 */

type Answer = ExecutionResult<Record<string, unknown>, Record<string, unknown>> & {
  errors?: { message: string; extensions?: Record<string, unknown> }[];
};

/** One operation over graphql-ws: its results, or the errors of an `error` message. */
function run(client: Client, payload: Record<string, unknown>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let last: Answer | undefined;
    client.subscribe(payload as never, {
      next: (result) => void (last = result as Answer),
      error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)),
      complete: () => resolve(last ?? {}),
    });
  });
}

const codesOf = (answer: Answer) => answer.errors?.map((error) => error.extensions?.code);
const hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function tempFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'doors-')), name);
  writeFileSync(path, content);
  return path;
}

describe('graphql-ws with a trusted-documents manifest', () => {
  const EVENT = 'query EventName($eventId: Int!) { event(eventId: $eventId) { eventId name } }';
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  let client: Client;
  beforeAll(async () => {
    t = await startGateway(
      { rateLimit: false },
      {
        TRUSTED_DOCUMENTS_FILE: tempFile(
          'persisted-documents.json',
          JSON.stringify({ [`sha256:${hex(EVENT)}`]: EVENT }),
        ),
      },
    );
    server = await listen(t);
    client = wsClient(server.wsUrl);
  });
  afterAll(async () => {
    await client.dispose();
    await server.close();
    await t.close();
  });

  it('refuses a document sent as text, introspection included, with nothing sent upstream; the socket lives on', async () => {
    t.clearLog();
    const text = await run(client, {
      query: '{ event(eventId: 5001) { reservations(first: 1) { edges { node { contact { email } } } } } }',
    });
    expect(codesOf(text)).toEqual(['BAD_USER_INPUT']);
    expect(text.errors?.[0]?.message).toContain('only trusted documents');
    const introspection = await run(client, { query: '{ __schema { mutationType { fields { name } } } }' });
    expect(codesOf(introspection)).toEqual(['BAD_USER_INPUT']);
    expect(t.calls()).toEqual([]);
  });

  it('runs a trusted document named by documentId or by extensions.persistedQuery.sha256Hash, on the same socket', async () => {
    const byDocumentId = await run(client, {
      query: '',
      documentId: `sha256:${hex(EVENT)}`,
      variables: { eventId: 5001 },
    });
    expect(byDocumentId).toEqual({ data: { event: { eventId: 5001, name: expect.any(String) } } });
    const byApolloHash = await run(client, {
      query: '',
      extensions: { persistedQuery: { version: 1, sha256Hash: hex(EVENT) } },
      variables: { eventId: 5002 },
    });
    expect(byApolloHash).toEqual({ data: { event: { eventId: 5002, name: expect.any(String) } } });
  });

  it('answers an unknown id with PERSISTED_QUERY_NOT_FOUND', async () => {
    expect(codesOf(await run(client, { query: '', documentId: `sha256:${'0'.repeat(64)}` }))).toEqual([
      'PERSISTED_QUERY_NOT_FOUND',
    ]);
  });
});

describe('graphql-ws with automatic persisted queries (no manifest)', () => {
  it('an unknown hash is PERSISTED_QUERY_NOT_FOUND, the text with its hash runs, then the hash alone, as over HTTP', async () => {
    const t = await startGateway({ rateLimit: false });
    const server = await listen(t);
    const client = wsClient(server.wsUrl);
    const QUERY = '{ event(eventId: 5002) { eventId } }';
    const extensions = { persistedQuery: { version: 1, sha256Hash: hex(QUERY) } };
    expect(codesOf(await run(client, { query: '', extensions }))).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(await run(client, { query: QUERY, extensions })).toEqual({ data: { event: { eventId: 5002 } } });
    expect(await run(client, { query: '', extensions })).toEqual({ data: { event: { eventId: 5002 } } });
    await client.dispose();
    await server.close();
    await t.close();
  });
});

describe('graphql-ws: a bad operation is answered on its own', () => {
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '200' });
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });
  afterEach(() => vi.restoreAllMocks());

  it('a syntax error, an invalid field and a document over the token limit each get their code; a live subscription on the socket keeps receiving', async () => {
    const stderr = vi.spyOn(process.stderr, 'write');
    const consoleError = vi.spyOn(console, 'error');
    const client = wsClient(server.wsUrl);
    const changes = subscribeWs(client, { eventId: 5003 });
    await until(() => t.gateway.changeFeeds.active().some((feed) => feed.eventId === 5003 && feed.polls >= 1));

    expect(codesOf(await run(client, { query: '{ event(eventId: 5001) { name ' }))).toEqual(['GRAPHQL_PARSE_FAILED']);
    expect(codesOf(await run(client, { query: '{ event(eventId: 5001) { nope } }' }))).toEqual([
      'GRAPHQL_VALIDATION_FAILED',
    ]);
    const tooLong = `{ ${Array.from({ length: 1100 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    expect(codesOf(await run(client, { query: tooLong }))).toEqual(['BAD_USER_INPUT']);

    await book(t.emulator, { eventId: 5003 });
    await changes.take(1);
    expect(changes.received[0]?.data?.reservationChanged).toBeDefined();
    expect(await run(client, { query: '{ __typename }' })).toEqual({ data: { __typename: 'Query' } });
    expect(consoleError).not.toHaveBeenCalled();
    expect(stderr.mock.calls.filter(([chunk]) => /Error|at /.test(String(chunk)))).toEqual([]);
    changes.close();
    await client.dispose();
  });
});

describe('subscriptions per client (SUBSCRIPTIONS_PER_CLIENT)', () => {
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '5000', SUBSCRIPTIONS_PER_CLIENT: '2' });
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('past the cap a subscription is refused with RATE_LIMITED, on a socket and over SSE alike; one that ends frees its place', async () => {
    const client = wsClient(server.wsUrl);
    const first = subscribeWs(client, { eventId: 5001 });
    const second = subscribeWs(client, { eventId: 5002 });
    await until(() => t.gateway.changeFeeds.active().length >= 2);
    const third = subscribeWs(client, { eventId: 5003 });
    const [refusedOnSocket] = await third.take(1);
    expect(refusedOnSocket?.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      limit: 'SUBSCRIPTIONS_PER_CLIENT',
    });
    // The same client (one principal) over SSE: its two places are taken.
    const overSse = await subscribeSse(fetch, server.url, { eventId: 5003 });
    const [refusedOverSse] = await overSse.take(1);
    expect(refusedOverSse?.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      limit: 'SUBSCRIPTIONS_PER_CLIENT',
    });
    overSse.close();

    first.close();
    await pause(100);
    const again = await subscribeSse(fetch, server.url, { eventId: 5003 });
    await until(() => t.gateway.changeFeeds.active().some((feed) => feed.eventId === 5003));
    expect(again.received.filter((result) => result.errors)).toEqual([]);
    again.close();
    second.close();
    await client.dispose();
  });
});

describe('credentials that expire end what they opened', () => {
  const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';
  const jwtEnv = {
    ...licenseesEnv(),
    GATEWAY_AUTH: 'jwt',
    JWT_SECRET: SECRET,
    JWT_ISSUER: 'https://id.example.com/',
    JWT_AUDIENCE: 'reservation-gateway',
    CHANGES_POLL_INTERVAL_MS: '5000',
  };
  const token = (expiresInSeconds: number) =>
    new SignJWT({ licensee: 'acme', scope: 'read write' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(jwtEnv.JWT_ISSUER)
      .setAudience(jwtEnv.JWT_AUDIENCE)
      .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
      .sign(new TextEncoder().encode(SECRET));
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, jwtEnv);
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('a socket is closed with 4401 and an SSE stream ends with UNAUTHENTICATED when the token expires (its exp and the 5 s tolerance)', async () => {
    const expiring = await token(1);
    let closeCode: number | undefined;
    const client = createClient({
      url: server.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${expiring}` },
      retryAttempts: 0,
      // One socket for the query and the subscription.
      lazyCloseTimeout: 60_000,
      on: { closed: (event) => void (closeCode = (event as { code: number }).code) },
    });
    expect(await run(client, { query: '{ event(eventId: 5001) { eventId } }' })).toEqual({
      data: { event: { eventId: 5001 } },
    });
    const onSocket = subscribeWs(client, { eventId: 5001 });
    const overSse = await subscribeSse(fetch, server.url, { eventId: 5001 }, { authorization: `Bearer ${expiring}` });
    expect(overSse.response.status).toBe(200);

    await until(() => closeCode !== undefined && overSse.received.length > 0, 15_000);
    expect(closeCode).toBe(4401);
    expect(overSse.received.at(-1)?.errors?.[0]).toMatchObject({
      message: expect.stringContaining('expired'),
      extensions: { code: 'UNAUTHENTICATED' },
    });
    await overSse.completed;
    onSocket.close();
    await client.dispose();
  }, 25_000);

  it('a fresh token on a new socket works again', async () => {
    const client = wsClient(server.wsUrl, { Authorization: `Bearer ${await token(300)}` });
    expect(await run(client, { query: '{ event(eventId: 5001) { eventId } }' })).toEqual({
      data: { event: { eventId: 5001 } },
    });
    await client.dispose();
  });
});

describe('the audit line and the response cache over graphql-ws', () => {
  const lines: Record<string, unknown>[] = [];
  let gateway: ReturnType<typeof createGateway>;
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  let server: ReturnType<typeof createServer>;
  let sockets: { close(): Promise<void> };
  let url: string;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, rateLimit: false });
    const logger = createLogger('info', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    gateway = createGateway(
      { ...loadConfig({ LOG_LEVEL: 'info', ...licenseesEnv() }), upstreamBaseUrl: emulator.url },
      logger,
    );
    server = createServer(gateway.yoga);
    sockets = gateway.acceptWebSockets(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    await sockets.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await gateway.close();
    await emulator.close();
  });
  const audit = () => lines.filter((line) => line.component === 'audit');
  const ops = `Bearer ${CLIENT_KEYS['acme-ops']}`;
  const MUTATION =
    'mutation Upsert { upsertAttendee(input: { attendeeId: "door-A", registrationEventId: "door-R" }) { created } }';

  it('a mutation over graphql-ws is logged with the same fields as over HTTP', async () => {
    lines.length = 0;
    const overHttp = await fetch(`http://${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: ops },
      body: JSON.stringify({ query: MUTATION }),
    });
    expect(overHttp.status).toBe(200);
    const client = wsClient(`ws://${url}`, { Authorization: ops });
    expect((await run(client, { query: MUTATION })).errors).toBeUndefined();
    await client.dispose();
    await until(() => audit().length >= 2, 5_000);
    const [http, ws] = audit();
    expect(Object.keys(ws!).sort()).toEqual(Object.keys(http!).sort());
    expect(ws).toMatchObject({
      client: 'acme-ops',
      licensee: 'acme',
      operation: 'Upsert',
      upstreamCalls: 1,
      status: null,
      errors: [],
    });
    expect(http).toMatchObject({
      client: 'acme-ops',
      licensee: 'acme',
      operation: 'Upsert',
      upstreamCalls: 1,
      status: 200,
      errors: [],
    });
  });

  it('a refused operation over graphql-ws is logged with its code', async () => {
    lines.length = 0;
    const client = wsClient(`ws://${url}`, { Authorization: `Bearer ${CLIENT_KEYS['acme-web']}` });
    expect(codesOf(await run(client, { query: MUTATION }))).toEqual(['FORBIDDEN']);
    await client.dispose();
    await until(() => audit().length >= 1, 5_000);
    expect(audit()[0]).toMatchObject({ client: 'acme-web', operation: 'Upsert', errors: ['FORBIDDEN'], status: null });
  });

  it('answers carry no extensions.responseCache unless the socket asked with X-Show-Cost: 1', async () => {
    const QUERY = '{ event(eventId: 5001) { eventId } }';
    const plain = wsClient(`ws://${url}`, { Authorization: ops });
    await run(plain, { query: QUERY });
    const cached = await run(plain, { query: QUERY });
    expect(cached).toEqual({ data: { event: { eventId: 5001 } } });
    await plain.dispose();

    class ShowingCost extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers: { 'x-show-cost': '1' } });
      }
    }
    const asking = createClient({
      url: `ws://${url}`,
      webSocketImpl: ShowingCost,
      connectionParams: { Authorization: ops },
      retryAttempts: 0,
      lazy: true,
    });
    const shown = await run(asking, { query: QUERY });
    expect(shown.extensions).toMatchObject({ responseCache: expect.anything(), upstreamCalls: 0 });
    await asking.dispose();
  });
});

describe('subscriptions are costed like queries', () => {
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '5000' });
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });
  // Each change looks up its attendee's reservations: per record of a poll's page of changes.
  const COSTLY = `subscription { reservationChanged(eventId: 5001, since: "2000-01-01T00:00:00Z") {
    reservation { attendee { reservations(eventId: 5001) { totalCount } } } } }`;

  it('a replay whose per-record lookups exceed QUERY_MAX_UPSTREAM_CALLS is refused before any upstream call, over SSE and graphql-ws', async () => {
    t.clearLog();
    const overSse = await subscribeSse(fetch, server.url, {}, {}, COSTLY);
    const [sseAnswer] = await overSse.take(1);
    expect(sseAnswer?.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY', maxCalls: 120 });
    overSse.close();
    const client = wsClient(server.wsUrl);
    const onSocket = subscribeWs(client, {}, COSTLY);
    const [wsAnswer] = await onSocket.take(1);
    expect(wsAnswer?.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY' });
    expect(t.calls()).toEqual([]);
    expect(t.gateway.changeFeeds.active()).toEqual([]);

    // The licensee's other clients are served as before.
    expect((await t.exec('{ event(eventId: 5001) { eventId } }')).data).toEqual({ event: { eventId: 5001 } });
    const cheap = subscribeWs(client, { eventId: 5001 });
    await until(() => t.gateway.changeFeeds.active().some((feed) => feed.eventId === 5001));
    expect(cheap.received.filter((result) => result.errors)).toEqual([]);
    cheap.close();
    await client.dispose();
  });
});
