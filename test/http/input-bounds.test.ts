import { connect } from 'node:net';
import type { DocumentNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCAN_TEXT_FROM_BYTES } from '../../src/http/input-bounds.ts';
import { boundedParseCaches } from '../../src/operations/query-limits.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { closed, nextMessage, openSocket } from '../helpers/raw-sockets.ts';
import { listen, subscribeSse, wsClient } from '../helpers/subscriptions.ts';

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

describe('MAX_INPUT_DEPTH and MAX_INPUT_NODES: deep or wide JSON is refused once parsed, on every door', () => {
  /*
   * Fault: an unused variable nested 5,000 deep (`{ __typename }`) answered INTERNAL_SERVER_ERROR
   * after a RangeError (the cost estimate's memo key stringified it), and so did a JSON variable
   * 4096 deep: JSON.parse reads such nesting, the walkers after it recurse. Now the variables,
   * extensions and the rest of a body are measured without the call stack as soon as they are
   * parsed, and refused with 400 BAD_REQUEST naming the setting, before any upstream call.
   */
  const deep = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
  const wideArray = (n: number) => `[${new Array(n).fill(0).join(',')}]`;
  const wideObject = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
  /** A query that reads upstream were it run: a refusal with an empty log was made before it. */
  const QUERY = 'query ($eventIds: [Int!]!) { events(eventIds: $eventIds) { name } }';
  const SUBSCRIPTION = 'subscription ($eventId: Int!) { reservationChanged(eventId: $eventId) { kind } }';
  const DEPTH = { code: 'BAD_REQUEST', limit: 'MAX_INPUT_DEPTH', maxDepth: 64 };
  const NODES = { code: 'BAD_REQUEST', limit: 'MAX_INPUT_NODES', maxNodes: 50_000 };
  /** The variables and extensions of each case, as JSON text (built without recursion), and what refuses them. */
  const CASES: { name: string; variables: string; extensions?: string; refusal: object; message: RegExp }[] = [
    {
      name: 'variables 4096 deep',
      variables: `{"eventIds": [5001], "eventId": 5001, "v": ${deep(4096)}}`,
      refusal: DEPTH,
      message: /^The variables nest deeper than 64 levels \(MAX_INPUT_DEPTH\)/,
    },
    {
      name: 'variables 100,000 wide (an array)',
      variables: `{"eventIds": [5001], "eventId": 5001, "v": ${wideArray(100_000)}}`,
      refusal: NODES,
      message: /^The variables hold more than 50000 values \(MAX_INPUT_NODES\)/,
    },
    {
      name: 'variables 100,000 wide (an object)',
      variables: `{"eventIds": [5001], "eventId": 5001, "v": ${wideObject(100_000)}}`,
      refusal: NODES,
      message: /^The variables hold more than 50000 values/,
    },
    {
      name: 'extensions 4096 deep',
      variables: '{"eventIds": [5001], "eventId": 5001}',
      extensions: `{"x": ${deep(4096)}}`,
      refusal: DEPTH,
      message: /^The extensions nest deeper than 64 levels \(MAX_INPUT_DEPTH\)/,
    },
    {
      name: 'extensions 100,000 wide',
      variables: '{"eventIds": [5001], "eventId": 5001}',
      extensions: `{"x": ${wideArray(100_000)}}`,
      refusal: NODES,
      message: /^The extensions hold more than 50000 values \(MAX_INPUT_NODES\)/,
    },
  ];
  const body = (query: string, c: (typeof CASES)[number]) =>
    `{"query": ${JSON.stringify(query)}, "variables": ${c.variables}${c.extensions ? `, "extensions": ${c.extensions}` : ''}}`;
  const post = (text: string, accept = 'application/json') =>
    roomy.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: text,
    });

  it.each(CASES)('HTTP POST: $name', async (c) => {
    roomy.clearLog();
    const res = await post(body(QUERY, c));
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { errors: { message: string; extensions: object }[] };
    expect(answer.errors).toEqual([{ message: expect.stringMatching(c.message), extensions: c.refusal }]);
    expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
  });

  it.each(CASES)('HTTP GET (variables and extensions in the query string): $name', async (c) => {
    roomy.clearLog();
    const search = new URLSearchParams({
      query: QUERY,
      variables: c.variables,
      ...(c.extensions ? { extensions: c.extensions } : {}),
    });
    // Through yoga.fetch: over a socket, Node answers a URL past its 16 KiB header bound with 431 first.
    const res = await roomy.gateway.yoga.fetch(`http://yoga/graphql?${search}`, {
      headers: { accept: 'application/json', 'graphql-preflight': '1' },
    });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { errors: { message: string; extensions: object }[] };
    expect(answer.errors).toEqual([{ message: expect.stringMatching(c.message), extensions: c.refusal }]);
    expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
  });

  it.each(CASES)('SSE: $name', async (c) => {
    roomy.clearLog();
    const res = await post(body(SUBSCRIPTION, c), 'text/event-stream');
    expect(res.status).toBe(400);
    const text = await res.text();
    const data = /^data: (.*)$/m.exec(text)?.[1];
    const answer = JSON.parse(data ?? text) as { errors: { message: string; extensions: object }[] };
    expect(answer.errors).toEqual([{ message: expect.stringMatching(c.message), extensions: c.refusal }]);
    expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
  });

  // A message over 16 KiB is measured as text before graphql-ws parses it (websocket.ts, measureMessages).
  const isLarge = (c: (typeof CASES)[number]) => body(QUERY, c).length > SCAN_TEXT_FROM_BYTES;

  it('graphql-ws, a message up to 16 KiB: an `error` for that operation only; the socket serves the next one', async () => {
    const server = await listen(roomy);
    const client = wsClient(server.wsUrl);
    try {
      for (const c of CASES.filter((c) => !isLarge(c))) {
        roomy.clearLog();
        for (const query of [QUERY, SUBSCRIPTION]) {
          const payload = {
            query,
            variables: JSON.parse(c.variables) as Record<string, unknown>,
            ...(c.extensions ? { extensions: JSON.parse(c.extensions) as Record<string, unknown> } : {}),
          };
          const errors = await new Promise<unknown>((resolve, reject) => {
            client.subscribe(payload, {
              next: () => reject(new Error(`${c.name}: a result was sent`)),
              error: resolve,
              complete: () => reject(new Error(`${c.name}: completed without an error`)),
            });
          });
          expect(errors, c.name).toEqual([{ message: expect.stringMatching(c.message), extensions: c.refusal }]);
        }
        expect(roomy.calls({ withAuthenticate: true }), c.name).toEqual([]);
      }
      const fine = await new Promise<unknown>((resolve, reject) =>
        client.subscribe({ query: '{ __typename }' }, { next: resolve, error: reject, complete: () => {} }),
      );
      expect(fine).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await client.dispose();
      await server.close();
    }
  });

  it('graphql-ws, a larger message: the socket is closed with 4400 naming the limit, before it is parsed', async () => {
    const server = await listen(roomy);
    try {
      const large = CASES.filter(isLarge);
      expect(large.length).toBeGreaterThan(0);
      for (const c of large) {
        roomy.clearLog();
        const upgrade = await openSocket(server.wsUrl);
        if (!('socket' in upgrade)) throw new Error(`upgrade refused: ${upgrade.status}`);
        const end = closed(upgrade.socket);
        upgrade.socket.send('{"type": "connection_init"}');
        upgrade.socket.send(`{"id": "1", "type": "subscribe", "payload": ${body(SUBSCRIPTION, c)}}`);
        const { code, reason } = await end;
        expect(code, c.name).toBe(4400);
        expect(`The ${reason}`, c.name).toMatch(c.message);
        expect(roomy.calls({ withAuthenticate: true }), c.name).toEqual([]);
      }
    } finally {
      await server.close();
    }
  });

  it('over a real port (a Content-Length: a body over 16 KiB is measured as text), POST and SSE answer as above', async () => {
    const server = await listen(roomy);
    try {
      for (const c of CASES)
        for (const accept of ['application/json', 'text/event-stream']) {
          roomy.clearLog();
          const res = await fetch(server.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept },
            body: body(SUBSCRIPTION, c),
          });
          expect(res.status, c.name).toBe(400);
          const text = await res.text();
          const data = /^data: (.*)$/m.exec(text)?.[1];
          const answer = JSON.parse(data ?? text) as { errors: { message: string; extensions: object }[] };
          expect(answer.errors, c.name).toEqual([{ message: expect.stringMatching(c.message), extensions: c.refusal }]);
          expect(roomy.calls({ withAuthenticate: true }), c.name).toEqual([]);
        }
    } finally {
      await server.close();
    }
  });

  it('graphql-ws: a connection_init payload past a bound closes the socket with 4400 naming the limit', async () => {
    const server = await listen(roomy);
    try {
      for (const [payload, reason] of [
        [`{"x": ${deep(4096)}}`, 'connection_init payload nests deeper than 64 levels (MAX_INPUT_DEPTH)'],
        [`{"x": ${wideArray(100_000)}}`, 'connection_init payload holds more than 50000 values (MAX_INPUT_NODES)'],
      ] as const) {
        const upgrade = await openSocket(server.wsUrl);
        if (!('socket' in upgrade)) throw new Error(`upgrade refused: ${upgrade.status}`);
        const end = closed(upgrade.socket);
        upgrade.socket.send(`{"type": "connection_init", "payload": ${payload}}`);
        expect(await end).toEqual({ code: 4400, reason });
      }
    } finally {
      await server.close();
    }
  });

  it('a body past a bound elsewhere: another parameter, a batch, a body that is one deep array', async () => {
    roomy.clearLog();
    for (const [text, message] of [
      [`{"query": "{ __typename }", "other": ${deep(4096)}}`, /^The request body nests deeper than 64 levels/],
      [`[{"query": "{ __typename }", "variables": {"v": ${deep(4096)}}}]`, /^The variables nest deeper than 64/],
      [
        `[${new Array(100_000).fill('{"query": "{ __typename }"}').join(',')}]`,
        /^The request body holds more than 50000/,
      ],
      [deep(4096), /^The request body nests deeper than 64 levels/],
    ] as const) {
      const res = await post(text);
      expect(res.status, text.slice(0, 40)).toBe(400);
      const answer = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(answer.errors[0]?.message).toMatch(message);
      expect(answer.errors[0]?.extensions.code).toBe('BAD_REQUEST');
    }
    expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('regressions: a JSON variable 4096 deep, and `{ __typename }` with an unused variable 5000 deep, are 400s naming the limit', async () => {
    roomy.clearLog();
    for (const text of [
      `{"query": "query ($v: JSON) { __typename }", "variables": {"v": ${deep(4096)}}}`,
      `{"query": "{ __typename }", "variables": {"unused": ${deep(5000)}}}`,
    ]) {
      const res = await post(text);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        errors: [
          {
            message: expect.stringContaining('variables nest deeper than 64 levels (MAX_INPUT_DEPTH)'),
            extensions: DEPTH,
          },
        ],
      });
    }
    expect(roomy.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('passes what the schema takes at its largest: a year of actualized nights', async () => {
    const nights = Array.from({ length: 366 }, (_, i) => ({
      date: new Date(Date.UTC(2028, 0, 1 + i)).toISOString().slice(0, 10),
      rooms: 1,
    }));
    const answer = await roomy.exec(
      'mutation ($input: RecordActualizedPickupInput!) { recordActualizedPickup(input: $input) { stored } }',
      { input: { eventId: 5001, hotelId: 201, nights } },
    );
    expect(answer.errors).toBeUndefined();
    expect(answer).toMatchObject({ status: 200, data: { recordActualizedPickup: { stored: expect.anything() } } });
  });
});
