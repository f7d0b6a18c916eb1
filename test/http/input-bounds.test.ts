import { connect } from 'node:net';
import type { DocumentNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedParseCaches } from '../../src/operations/query-limits.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { closed, nextMessage, openSocket } from '../helpers/raw-sockets.ts';
import { listen, subscribeSse } from '../helpers/subscriptions.ts';

/**
 * Fault: 20 queries each padded with a 20 MB comment were all answered and raised the gateway's
 * RSS by 400 MiB for good (the token limit does not count comments, Yoga's body bound is 25 MB, its
 * parse cache keeps 1024 documents by their whole text), and a 90 MB `connection_init` was read
 * before the socket was authenticated. Now a document is bounded in bytes before it is parsed
 * (QUERY_MAX_BYTES), a request body or WebSocket message before it is read (MAX_REQUEST_BYTES),
 * and the parse cache by the text it keeps. (The memory itself: `bench/hostile-inputs.ts`.)
 */
const MIB = 1024 * 1024;
const padded = (bytes: number) => {
  const document = '{ __typename }\n';
  return `#${'x'.repeat(bytes - document.length - 2)}\n${document}`;
};

let roomy: TestGateway;
let bounded: TestGateway;
beforeAll(async () => {
  // A body bound above the documents', to show the document's own bound at work.
  roomy = await startGateway({ rateLimit: false }, { MAX_REQUEST_BYTES: String(8 * MIB) });
  bounded = await startGateway({ rateLimit: false }, licenseesEnv());
});
afterAll(async () => {
  await roomy?.close();
  await bounded?.close();
});

describe('QUERY_MAX_BYTES: a document longer than it is refused before it is parsed', () => {
  it('a 5 MB document of comment, and one of 5 MB of tokens, with BAD_USER_INPUT naming the limit, before any upstream call', async () => {
    roomy.clearLog();
    const comment = await roomy.exec(padded(5_000_000));
    expect(comment.status).toBe(413);
    expect(comment.errors).toEqual([
      {
        message: expect.stringContaining('The document is 5000000 bytes long, more than the 65536 allowed'),
        extensions: { code: 'BAD_USER_INPUT', limit: 'QUERY_MAX_BYTES', maxBytes: 65_536 },
      },
    ]);
    // Parsing would have stopped at QUERY_MAX_TOKENS: the byte count came first.
    const tokens = await roomy.exec(`{ ${'__typename '.repeat(500_000)}}`);
    expect(tokens.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'QUERY_MAX_BYTES' });
    expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('counts comments and whitespace: 65536 bytes run, 65537 do not', async () => {
    const atTheLimit = await roomy.exec(padded(65_536));
    expect(atTheLimit).toMatchObject({ status: 200, data: { __typename: 'Query' } });
    const over = await roomy.exec(padded(65_537));
    expect(over.errors?.[0]?.extensions).toMatchObject({ limit: 'QUERY_MAX_BYTES' });
    // Bytes, not characters: 30,000 three-byte characters are 90,000 bytes.
    const wide = await roomy.exec(`# ${'€'.repeat(30_000)}\n{ __typename }`);
    expect(wide.errors?.[0]?.message).toMatch(/is 90017 bytes long/);
  });

  it('holds over SSE too', async () => {
    roomy.clearLog();
    const stream = await subscribeSse(
      async (url, init) => roomy.gateway.yoga.fetch(url, init),
      'http://yoga/graphql',
      { eventId: 5001 },
      {},
      `${padded(100_000)} subscription { reservationChanged(eventId: 5001) { kind } }`,
    );
    expect(stream.response.status).toBe(413);
    const [answer] = await stream.take(1);
    expect(answer?.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'QUERY_MAX_BYTES' });
    stream.close();
    expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('holds over graphql-ws too: the document does not run', async () => {
    const server = await listen(roomy);
    try {
      roomy.clearLog();
      const upgrade = await openSocket(server.wsUrl);
      if (!('socket' in upgrade)) throw new Error(`upgrade refused: ${upgrade.status}`);
      const { socket } = upgrade;
      const end = closed(socket);
      socket.send(JSON.stringify({ type: 'connection_init' }));
      expect((await nextMessage(socket)).type).toBe('connection_ack');
      const messages: { type: string }[] = [];
      socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as { type: string }));
      socket.send(
        JSON.stringify({
          id: '1',
          type: 'subscribe',
          payload: { query: `${padded(100_000)} { event(eventId: 5001) { name } }` },
        }),
      );
      // Refused for this operation (an error message) or, until the socket answers per operation, by closing it.
      await Promise.race([
        end,
        new Promise<void>((resolve) =>
          socket.on('message', () => messages.some((m) => m.type === 'error') && resolve()),
        ),
      ]);
      expect(messages.filter((m) => m.type === 'next')).toEqual([]);
      expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
      socket.close();
    } finally {
      await server.close();
    }
  });
});

describe('MAX_REQUEST_BYTES: a body or message larger than it is refused before it is read', () => {
  it('a 2 MB body is a 413 naming the setting, whether it announces its length or is streamed', async () => {
    const body = JSON.stringify({ query: padded(2 * MIB) });
    // An authenticated client's (without a credential, the 401 comes first, also before the body is read).
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEYS['acme-web']}` };
    const announced = await bounded.gateway.yoga.fetch('http://yoga/graphql', { method: 'POST', headers, body });
    expect(announced.status).toBe(413);
    expect(await announced.json()).toEqual({
      errors: [
        {
          message: expect.stringContaining(
            "larger than the 1048576 bytes allowed: the gateway's MAX_REQUEST_BYTES setting",
          ),
          extensions: { code: 'REQUEST_ENTITY_TOO_LARGE', limit: 'MAX_REQUEST_BYTES', maxBytes: MIB },
        },
      ],
    });
    const chunks = new TextEncoder().encode(body);
    let sent = 0;
    const streamed = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= chunks.length) return controller.close();
        controller.enqueue(chunks.subarray(sent, (sent += 64 * 1024)));
      },
    });
    const chunked = await bounded.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers,
      body: streamed,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    // Refused once past the bound: the rest was never pulled.
    expect(sent).toBeLessThan(chunks.length);
  });

  it('answers a body announced too large at once, without waiting for it', async () => {
    const server = await listen(bounded);
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    try {
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      // The headers only: not one byte of the 2 MB body follows. (What does follow, Node reads and
      // drops, within HTTP_REQUEST_TIMEOUT_MS, so that the client reads the 413.)
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${CLIENT_KEYS['acme-web']}\r\nContent-Length: ${2 * MIB}\r\n\r\n`,
      );
      await expect.poll(() => answer).toContain('MAX_REQUEST_BYTES');
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    } finally {
      socket.destroy();
      await server.close();
    }
  });

  it('closes a socket whose first message, its connection_init, is over the bound with 1009, before authenticating it', async () => {
    const server = await listen(bounded);
    try {
      bounded.clearLog();
      const upgrade = await openSocket(server.wsUrl);
      if (!('socket' in upgrade)) throw new Error(`upgrade refused: ${upgrade.status}`);
      const end = closed(upgrade.socket);
      upgrade.socket.send(
        JSON.stringify({
          type: 'connection_init',
          payload: { Authorization: `Bearer ${CLIENT_KEYS['acme-web']}`, padding: 'x'.repeat(2 * MIB) },
        }),
      );
      expect((await end).code).toBe(1009);

      // Within the bound, the same client is served.
      const fine = await openSocket(server.wsUrl);
      if (!('socket' in fine)) throw new Error(`upgrade refused: ${fine.status}`);
      fine.socket.send(
        JSON.stringify({
          type: 'connection_init',
          payload: { Authorization: `Bearer ${CLIENT_KEYS['acme-web']}`, padding: 'x'.repeat(MIB / 2) },
        }),
      );
      expect((await nextMessage(fine.socket)).type).toBe('connection_ack');
      fine.socket.close();
    } finally {
      await server.close();
    }
  });
});

describe('the parse cache', () => {
  it('keeps at most 1 MiB of document text, however few the documents', () => {
    const { documentCache } = boundedParseCaches();
    const document = { kind: 'Document', definitions: [] } as unknown as DocumentNode;
    const large = (n: number) => `#${String(n).repeat(400_000)}\n{ __typename }`;
    documentCache!.set(large(1), document);
    documentCache!.set(large(2), document);
    documentCache!.set(large(3), document);
    expect(documentCache!.get(large(1))).toBeUndefined();
    expect(documentCache!.get(large(3))).toBe(document);
    // Small documents: the usual 1024 of them fit.
    const small = boundedParseCaches().documentCache!;
    for (let i = 0; i < 1024; i++) small.set(`query Q${i} { __typename }`, document);
    expect(small.get('query Q0 { __typename }')).toBe(document);
  });
});
