import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { anyRequest, type FuzzRequest, invalidRequest } from '../helpers/fuzz-requests.ts';

/*
 * Generated operations, variables, bodies and credentials against a real port, with api-key
 * authentication and the two licensees. Every answer is a well-formed GraphQL error or data, or an
 * HTTP 4xx; never a 5xx. Requests wrong by construction make no upstream call. Seeded, so a run is
 * the same on every machine; a failure prints the request that caused it.
 */
const SEED = 20_261_122;
const INVALID_RUNS = 1200;
const MIXED_RUNS = 1000;

let emulator: Emulator;
let gateway: Gateway;
let server: Server;
let base: string;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  gateway = createGateway({
    ...loadConfig({ LOG_LEVEL: 'silent', ...licenseesEnv(), GATEWAY_AUTH: 'api-key' }),
    upstreamBaseUrl: emulator.url,
  });
  server = createServer(gateway.yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
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
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/**
 * `{ data }` and/or `{ errors: [{ message, extensions: { code } }, …] }`: what a GraphQL client can
 * read. INTERNAL_SERVER_ERROR is a crash behind a 200 (review fault: a resolver's TypeError passed
 * here as "no 5xx"), so it is not well-formed.
 */
function isWellFormed(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
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

const describeRequest = (r: FuzzRequest) =>
  `${r.kind}: ${r.method} ${(r.search ?? r.body ?? '').slice(0, 300)} headers ${JSON.stringify(r.headers).slice(0, 200)}`;

describe('fuzz: generated requests against a real port (api-key, two licensees)', () => {
  it(`${INVALID_RUNS} requests wrong by construction: each a well-formed error, none a 5xx, and no upstream call`, async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(invalidRequest, async (request) => {
        emulator.state.log = [];
        const answer = await send(request);
        const context = `${describeRequest(request)} → ${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, context).toBeLessThan(500);
        expect(isWellFormed(answer.body), context).toBe(true);
        if (request.answersNull)
          expect(JSON.stringify(answer.body), context).toMatch(/^\{"data":\{"nodes?":(null|\[(null,?)*\])\}\}$/);
        else expect((answer.body as { errors?: unknown }).errors, context).toBeDefined();
        // Not even a token is fetched, unless the valid part read the parent event (which needs one).
        const allowed = request.parentReads ? ['authenticate', ...request.parentReads] : [];
        const calls = emulator.state.log
          .map((entry) => entry.endpoint)
          .filter((endpoint) => !allowed.includes(endpoint));
        expect(calls, context).toEqual([]);
        if (request.kind.startsWith('wrong credential')) expect(answer.status, context).toBe(401);
      }),
      { seed: SEED, numRuns: INVALID_RUNS, endOnFailure: true },
    );
    console.log(`fuzz: ${INVALID_RUNS} invalid requests in ${Date.now() - started} ms`);
  }, 120_000);

  it(`${MIXED_RUNS} mixed requests (valid, invalid, odd variables and headers): none a 5xx, every body well-formed`, async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(anyRequest, async (request) => {
        const answer = await send(request);
        const context = `${describeRequest(request)} → ${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, context).toBeLessThan(500);
        // A 4xx outside GraphQL (a refused method or media type) may answer in its own words.
        if (answer.status < 400 || answer.body !== undefined) expect(isWellFormed(answer.body), context).toBe(true);
      }),
      { seed: SEED, numRuns: MIXED_RUNS, endOnFailure: true },
    );
    console.log(`fuzz: ${MIXED_RUNS} mixed requests in ${Date.now() - started} ms`);
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
