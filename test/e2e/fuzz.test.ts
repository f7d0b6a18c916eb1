import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { SCAN_TEXT_FROM_BYTES } from '../../src/http/input-bounds.ts';
import type { WebSocketTransport } from '../../src/http/websocket.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import {
  anyRequest,
  boundedInputRequest,
  type FuzzRequest,
  invalidRequest,
  malformedHttpRequest,
  type WsFuzz,
  wsRequest,
} from '../helpers/fuzz-requests.ts';

/*
 * Generated operations, variables, bodies and credentials against a real port, with api-key
 * authentication and the two licensees. Every answer is a well-formed GraphQL error or data, or an
 * HTTP 4xx; never a 5xx. Requests wrong by construction make no upstream call. Each run draws a new
 * seed (printed at the start and in a failure's message); FUZZ_SEED=<seed> replays a run exactly:
 * `FUZZ_SEED=123 npx vitest run test/e2e/fuzz.test.ts`. A failure also prints the request that caused it.
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const REPLAY = `FUZZ_SEED=${SEED} npx vitest run test/e2e/fuzz.test.ts`;
const INVALID_RUNS = 1200;
const MIXED_RUNS = 1000;
/** Deep and wide input and malformed requests on the HTTP doors (POST, GET, SSE); on graphql-ws. */
const BOUNDED_RUNS = 150;
const WS_RUNS = 120;

let emulator: Emulator;
let gateway: Gateway;
let server: Server;
let sockets: WebSocketTransport;
let base: string;

beforeAll(async () => {
  if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be a whole number, got ${process.env.FUZZ_SEED}`);
  console.log(`fuzz: seed ${SEED} (replay: ${REPLAY})`);
  emulator = await startEmulator({ port: 0, rateLimit: false });
  gateway = createGateway({
    ...loadConfig({ LOG_LEVEL: 'silent', ...licenseesEnv(), GATEWAY_AUTH: 'api-key' }),
    upstreamBaseUrl: emulator.url,
  });
  server = createServer(gateway.yoga);
  sockets = gateway.acceptWebSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await sockets.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await gateway.close();
  await emulator.close();
});

interface Answer {
  status: number;
  body: unknown;
  text: string;
}

async function send(request: FuzzRequest): Promise<Answer> {
  const res = await fetch(`${base}/graphql${request.search ?? ''}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await res.text();
  // An SSE answer (a refusal included) carries its result in a `data:` line.
  const data = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? /^data: (.*)$/m.exec(text)?.[1]
    : text;
  let body: unknown;
  try {
    body = JSON.parse(data ?? '');
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** What the server answered to one graphql-ws exchange: its messages (the `connection_ack` left out) and how the socket closed, if it did. */
async function exchange(
  fuzz: WsFuzz,
): Promise<{ messages: { type: string; payload?: unknown }[]; close?: { code: number; reason: string } }> {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: { type: string; payload?: unknown }[] = [];
  let close: { code: number; reason: string } | undefined;
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) =>
    socket.once('close', (code, reason) => {
      close = { code, reason: reason.toString() };
      resolve();
    }),
  );
  await new Promise((resolve) => socket.once('open', resolve));
  const answered = new Promise<void>((resolve) =>
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { type: string; payload?: unknown };
      if (message.type === 'connection_ack') {
        if (fuzz.message === undefined) resolve();
        else socket.send(fuzz.message);
      } else {
        messages.push(message);
        if (message.type === 'error' || message.type === 'complete') resolve();
      }
    }),
  );
  socket.send(fuzz.init);
  // A malformed message may be answered by nothing at all (graphql-ws ignores some): then a moment is enough.
  await Promise.race([answered, closed, new Promise((resolve) => setTimeout(resolve, 200))]);
  socket.close();
  await closed;
  return { messages, close };
}

/** Runs a property, its failure's message opening with the seed and how to replay it. */
async function check<T>(property: fc.IAsyncPropertyWithHooks<[T]>, numRuns: number): Promise<void> {
  try {
    await fc.assert(property, { seed: SEED, numRuns, endOnFailure: true });
  } catch (error) {
    (error as Error).message = `fuzz seed ${SEED} (replay: ${REPLAY})\n${(error as Error).message}`;
    throw error;
  }
}

/**
 * `{ data }` and/or `{ errors: [{ message, extensions: { code } }, …] }`: what a GraphQL client can
 * read. INTERNAL_SERVER_ERROR is a crash behind a 200 (review fault: a resolver's TypeError passed
 * here as "no 5xx"), so it is not well-formed.
 */
function isWellFormed(body: unknown): boolean {
  // A batch (a JSON array of operations) is answered with one such answer per operation.
  if (Array.isArray(body)) return body.length > 0 && body.every(isWellFormed);
  if (!body || typeof body !== 'object') return false;
  const { data, errors } = body as { data?: unknown; errors?: unknown };
  if (errors === undefined) return data !== undefined;
  return (
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every(
      (e: { message?: unknown; extensions?: { code?: unknown } }) =>
        typeof e?.message === 'string' &&
        e.message !== '' &&
        typeof e.extensions?.code === 'string' &&
        e.extensions.code !== 'INTERNAL_SERVER_ERROR',
    )
  );
}

/** The answer, or each answer of a batch's. */
const answersOf = (body: unknown) => (Array.isArray(body) ? body : [body]) as { errors?: unknown }[];

const describeRequest = (r: FuzzRequest) =>
  `${r.kind}: ${r.method} ${(r.search ?? r.body ?? '').slice(0, 300)} headers ${JSON.stringify(r.headers).slice(0, 200)}`;

describe('fuzz: generated requests against a real port (api-key, two licensees)', () => {
  it(`${INVALID_RUNS} requests wrong by construction: each a well-formed error, none a 5xx, and no upstream call`, async () => {
    const started = Date.now();
    await check(
      fc.asyncProperty(invalidRequest, async (request) => {
        emulator.state.log = [];
        const answer = await send(request);
        const context = `${describeRequest(request)} → ${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, context).toBeLessThan(500);
        expect(isWellFormed(answer.body), context).toBe(true);
        if (request.answersNull)
          expect(JSON.stringify(answer.body), context).toMatch(/^\{"data":\{"nodes?":(null|\[(null,?)*\])\}\}$/);
        else
          expect(
            answersOf(answer.body).every((one) => one.errors !== undefined),
            context,
          ).toBe(true);
        // Not even a token is fetched, unless the valid part read the parent event (which needs one).
        const allowed = request.parentReads ? ['authenticate', ...request.parentReads] : [];
        const calls = emulator.state.log
          .map((entry) => entry.endpoint)
          .filter((endpoint) => !allowed.includes(endpoint));
        expect(calls, context).toEqual([]);
        if (request.kind.startsWith('wrong credential')) expect(answer.status, context).toBe(401);
      }),
      INVALID_RUNS,
    );
    console.log(`fuzz: ${INVALID_RUNS} invalid requests in ${Date.now() - started} ms`);
  }, 120_000);

  it(`${MIXED_RUNS} mixed requests (valid, invalid, odd variables and headers): none a 5xx, every body well-formed`, async () => {
    const started = Date.now();
    await check(
      fc.asyncProperty(anyRequest, async (request) => {
        const answer = await send(request);
        const context = `${describeRequest(request)} → ${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, context).toBeLessThan(500);
        // A 4xx outside GraphQL (a refused method or media type) may answer in its own words.
        if (answer.status < 400 || answer.body !== undefined) expect(isWellFormed(answer.body), context).toBe(true);
      }),
      MIXED_RUNS,
    );
    console.log(`fuzz: ${MIXED_RUNS} mixed requests in ${Date.now() - started} ms`);
  }, 120_000);

  it(`${BOUNDED_RUNS} deep, wide or malformed requests on HTTP POST, GET and SSE: a 400 naming the limit, no upstream call`, async () => {
    const started = Date.now();
    await check(
      fc.asyncProperty(fc.oneof(boundedInputRequest, malformedHttpRequest), async (request) => {
        emulator.state.log = [];
        const answer = await send(request);
        const context = `${describeRequest(request)} → ${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, context).toBeLessThan(500);
        expect(isWellFormed(answer.body), context).toBe(true);
        expect(
          answersOf(answer.body).every((one) => one.errors !== undefined),
          context,
        ).toBe(true);
        if ('limit' in request) {
          expect(answer.status, context).toBe(400);
          const [error] = (answer.body as { errors: { message: string; extensions: Record<string, unknown> }[] })
            .errors;
          expect(error?.extensions, context).toMatchObject({ code: 'BAD_REQUEST', limit: request.limit });
          expect(error?.message, context).toContain(String(request.limit));
        }
        expect(
          emulator.state.log.map((entry) => entry.endpoint),
          context,
        ).toEqual([]);
      }),
      BOUNDED_RUNS,
    );
    console.log(`fuzz: ${BOUNDED_RUNS} deep, wide or malformed HTTP requests in ${Date.now() - started} ms`);
  }, 120_000);

  it(`${WS_RUNS} deep, wide or malformed graphql-ws messages: an error for the operation or a 4400 close, nothing run`, async () => {
    const started = Date.now();
    await check(
      fc.asyncProperty(wsRequest, async (fuzz) => {
        emulator.state.log = [];
        const { messages, close } = await exchange(fuzz);
        const context = `${fuzz.kind}: ${(fuzz.message ?? fuzz.init).slice(0, 300)} → ${JSON.stringify(messages).slice(0, 300)} ${JSON.stringify(close)}`;
        expect(
          messages.filter((message) => message.type === 'next'),
          context,
        ).toEqual([]);
        // A connection_init past a bound, or a message over 16 KiB (measured as text before graphql-ws
        // parses it), closes the socket naming the limit; a smaller message gets an error for its operation.
        if (fuzz.limit && (fuzz.message === undefined || Buffer.byteLength(fuzz.message) > SCAN_TEXT_FROM_BYTES))
          expect(close, context).toEqual({ code: 4400, reason: expect.stringContaining(fuzz.limit) });
        else if (fuzz.limit) {
          expect(messages[0], context).toMatchObject({
            type: 'error',
            payload: [
              { message: expect.stringContaining(fuzz.limit), extensions: { code: 'BAD_REQUEST', limit: fuzz.limit } },
            ],
          });
        } else if (messages.length === 0) {
          // A malformed message closes the socket with one of graphql-ws's 44xx codes (4400, 4429 for a
          // second connection_init …), or is ignored (the client then closed it itself).
          const code = close?.code ?? 0;
          expect((code >= 4400 && code < 4500) || code === 1000 || code === 1005, context).toBe(true);
        }
        expect(
          emulator.state.log.map((entry) => entry.endpoint),
          context,
        ).toEqual([]);
      }),
      WS_RUNS,
    );
    console.log(`fuzz: ${WS_RUNS} graphql-ws exchanges in ${Date.now() - started} ms`);
  }, 120_000);

  it('the process stays up: afterwards a valid query answers and /health is 200', async () => {
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${CLIENT_KEYS['acme-web']}`,
      },
      body: JSON.stringify({ query: '{ event(eventId: 5001) { eventId } }' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { event: { eventId: 5001 } } });
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });
});
