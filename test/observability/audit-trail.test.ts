import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { faultsSchema } from '../../src/emulator/faults.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';

/**
 * The audit trail: one info line per operation (request id, client, licensee, operation name,
 * upstream requests sent, duration, error codes), the request id in every /graphql response's
 * X-Request-Id, and never a variable's value, a key or a token in any line at any level.
 */
let emulator: Emulator;
let gateway: Gateway;
const lines: Record<string, unknown>[] = [];
const audit = () => lines.filter((line) => line.component === 'audit');

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  // Every level: no key or token may appear even at trace.
  const logger = createLogger('trace', {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  gateway = createGateway(
    { ...loadConfig({ LOG_LEVEL: 'trace', ...licenseesEnv() }), upstreamBaseUrl: emulator.url },
    logger,
  );
});
afterAll(async () => {
  await gateway.close();
  await emulator.close();
});
beforeEach(async () => {
  lines.length = 0;
  emulator.state.log = [];
  await gateway.upstream.clearCache();
  gateway.clearResponseCache();
});

async function post(body: object, headers: Record<string, string> = {}) {
  const res = await gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    requestId: res.headers.get('x-request-id'),
    body: (await res.json()) as {
      data?: unknown;
      errors?: { extensions?: { code?: string } }[];
      extensions?: Record<string, unknown>;
    },
  };
}

const acmeOps = { authorization: `Bearer ${CLIENT_KEYS['acme-ops']}` };
const sentUpstream = () => emulator.state.log.filter((entry) => entry.endpoint !== 'authenticate').length;

describe('the audit line', () => {
  it('is one info line per operation with its request id, client, licensee, name, upstream calls, duration and error codes', async () => {
    const answer = await post(
      {
        query: 'query TwoEvents { a: event(eventId: 5001) { eventId } b: event(eventId: 5002) { eventId } }',
        operationName: 'TwoEvents',
      },
      { ...acmeOps, 'x-request-id': 'req-42.abc' },
    );
    expect(answer.status).toBe(200);
    expect(answer.requestId).toBe('req-42.abc');
    expect(audit()).toEqual([
      {
        level: 30,
        time: expect.any(Number),
        component: 'audit',
        requestId: 'req-42.abc',
        client: 'acme-ops',
        licensee: 'acme',
        operation: 'TwoEvents',
        upstreamCalls: 2,
        durationMs: expect.any(Number),
        status: 200,
        errors: [],
        msg: 'operation',
      },
    ]);
    expect(sentUpstream()).toBe(2);
  });

  it('is one line per operation of a batch (a JSON array), each with its own name, calls and errors', async () => {
    const res = await gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...acmeOps,
        'x-request-id': 'batch-7',
      },
      body: JSON.stringify([
        { query: 'query First { event(eventId: 5001) { eventId } }' },
        { query: 'query Second { a: event(eventId: 5002) { eventId } b: event(eventId: 5003) { eventId } }' },
        { query: 'query Broken { event(eventId: 5001) { nope } }' },
      ]),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(3);
    const line = (operation: string, batchIndex: number, upstreamCalls: number, errors: string[]) => ({
      level: 30,
      time: expect.any(Number),
      component: 'audit',
      requestId: 'batch-7',
      client: 'acme-ops',
      licensee: 'acme',
      operation,
      upstreamCalls,
      durationMs: expect.any(Number),
      status: 200,
      errors,
      batchIndex,
      msg: 'operation',
    });
    expect(audit()).toEqual([
      line('First', 0, 1, []),
      line('Second', 1, 2, []),
      line('Broken', 2, 0, ['GRAPHQL_VALIDATION_FAILED']),
    ]);
    expect(sentUpstream()).toBe(3);
  });

  it('counts only calls really sent: answers from the cache are not upstream calls', async () => {
    const query = '{ event(eventId: 5001) { eventId } }';
    await post({ query }, acmeOps);
    await post({ query }, acmeOps);
    expect(audit().map((line) => line.upstreamCalls)).toEqual([1, 0]);
    expect(sentUpstream()).toBe(1);
  });

  it('counts every attempt sent, retries included: the number the service saw', async () => {
    emulator.state.faults.set(
      faultsSchema.parse({ rules: [{ endpoint: 'getevent', errorRate: 0.5, errorStatus: 503 }], seed: 2 }),
    );
    try {
      const answer = await post(
        {
          query:
            '{ a: event(eventId: 5001) { eventId } b: event(eventId: 5002) { eventId } c: event(eventId: 5003) { eventId } }',
        },
        acmeOps,
      );
      expect(answer.body.errors).toBeUndefined();
    } finally {
      emulator.state.faults.clear();
    }
    const failed = emulator.state.log.filter((entry) => entry.endpoint === 'getevent' && entry.status === 503).length;
    expect(failed).toBeGreaterThan(0);
    expect(audit()[0]?.upstreamCalls).toBe(sentUpstream());
    expect(sentUpstream()).toBe(3 + failed);
  });

  it('names the operation from the document when no operationName is sent, even one refused at validation', async () => {
    await post({ query: 'query Misspelt { event(eventId: 5001) { eventId } nope }' }, acmeOps);
    await post({ query: '{ event(eventId: 5001) { eventId } }' }, acmeOps);
    expect(audit()).toEqual([
      expect.objectContaining({
        operation: 'Misspelt',
        client: 'acme-ops',
        errors: ['GRAPHQL_VALIDATION_FAILED'],
        upstreamCalls: 0,
      }),
      expect.objectContaining({ operation: null, client: 'acme-ops', errors: [], upstreamCalls: 1 }),
    ]);
  });

  // Review fault: the audit read the result before useReadableHttpErrors coded graphql-js's variable
  // errors, so it logged INTERNAL_SERVER_ERROR while the client received BAD_USER_INPUT.
  it('logs the error codes the client received, for a variable of the wrong type too', async () => {
    const answer = await post(
      { query: 'query Q($e: Int!) { event(eventId: $e) { name } }', variables: { e: 'x' } },
      acmeOps,
    );
    const received = answer.body.errors?.map((error) => error.extensions?.code);
    expect(received).toEqual(['BAD_USER_INPUT']);
    expect(audit()).toEqual([expect.objectContaining({ operation: 'Q', errors: received })]);
  });

  it('is written for a refused credential too, and the 401 carries the request id', async () => {
    const answer = await post({ query: '{ event(eventId: 5001) { eventId } }' }, { authorization: 'Bearer not-a-key' });
    expect(answer.status).toBe(401);
    expect(answer.requestId).toMatch(/^[0-9a-f]{24}$/);
    expect(audit()).toEqual([
      expect.objectContaining({
        requestId: answer.requestId,
        client: null,
        licensee: null,
        status: 401,
        errors: ['UNAUTHENTICATED'],
        upstreamCalls: 0,
      }),
    ]);
  });

  it.each([
    ['too long', 'x'.repeat(200)],
    ['with spaces and markup', 'a b <script>'],
    ['with a quote', 'id"x'],
  ])('replaces a client request id %s with a generated one', async (_case, offered) => {
    const answer = await post(
      { query: '{ event(eventId: 5001) { eventId } }' },
      { ...acmeOps, 'x-request-id': offered },
    );
    expect(answer.requestId).toMatch(/^[0-9a-f]{24}$/);
    expect(audit()[0]?.requestId).toBe(answer.requestId);
    expect(JSON.stringify(lines)).not.toContain(offered);
  });

  it('never holds a variable value, a client key, an upstream key or a token, at any level', async () => {
    const email = 'ada.lovelace.audit@example.com';
    const mutation = 'mutation Upsert($input: UpsertAttendeeInput!) { upsertAttendee(input: $input) { created } }';
    const ok = await post(
      { query: mutation, variables: { input: { attendeeId: 'A-77', registrationEventId: 'R-77', email } } },
      acmeOps,
    );
    expect(ok.body.errors).toBeUndefined();
    // A client mistake whose value the error names: the answer may say it, the log may not.
    const bad = await post(
      {
        query: mutation,
        variables: { input: { attendeeId: 'A-77', registrationEventId: 'R-77', email: 'not-an-email-secret-77' } },
      },
      acmeOps,
    );
    expect(bad.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await post({ query: '{ __typename }' }, { authorization: 'Bearer wrong-client-key-55' });
    expect(audit().map((line) => line.errors)).toEqual([[], ['BAD_USER_INPUT'], ['UNAUTHENTICATED']]);
    const text = JSON.stringify(lines);
    for (const secret of [
      email,
      'not-an-email-secret-77',
      'A-77',
      CLIENT_KEYS['acme-ops'],
      'wrong-client-key-55',
      'demo-key-1001',
      ...emulatorTokens(),
    ]) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('client mistakes in the log', () => {
  // Fault: Yoga logged every coded answer to a client's mistake at error level, message and all,
  // and such a message may quote the client's values.
  it('are not written at info or above, where their message would quote the variables', async () => {
    const mutation =
      'mutation Set($input: SetCustomFieldValueInput!) { setCustomFieldValue(input: $input) { __typename } }';
    const answer = await post(
      {
        query: mutation,
        variables: { input: { customFieldId: 1, value: 'VIP', reservationNumber: 760_001, eventId: 5002 } },
      },
      acmeOps,
    );
    const message = answer.body.errors?.[0] as { message: string; extensions: { code: string } };
    expect(message).toMatchObject({
      message: expect.stringContaining('not event 5002'),
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const infoAndAbove = lines.filter((line) => (line.level as number) >= 30);
    expect(infoAndAbove).toEqual([
      expect.objectContaining({ component: 'audit', operation: 'Set', errors: ['BAD_USER_INPUT'] }),
    ]);
    expect(JSON.stringify(infoAndAbove)).not.toContain('5002');
  });
});

describe('X-Show-Cost', () => {
  const query = '{ a: event(eventId: 5001) { eventId } b: event(eventId: 5002) { eventId } }';

  it("puts upstreamCalls (made), estimatedCalls and the response cache's outcome into the extensions when the client sends X-Show-Cost: 1", async () => {
    const first = await post({ query }, { ...acmeOps, 'x-show-cost': '1' });
    expect(first.body.extensions).toEqual({
      upstreamCalls: 2,
      estimatedCalls: 2,
      responseCache: { hit: false, didCache: true, ttl: 60_000 },
    });
    const cached = await post({ query }, { ...acmeOps, 'x-show-cost': '1' });
    expect(cached.body.extensions).toEqual({ upstreamCalls: 0, estimatedCalls: 2, responseCache: { hit: true } });
  });

  it("adds no extensions without the header, the response cache's neither (on a miss or a hit)", async () => {
    const answer = await post({ query }, acmeOps);
    expect(answer.body.extensions).toBeUndefined();
    expect(answer.body.data).toBeDefined();
    const hit = await post({ query }, acmeOps);
    expect(hit.body.extensions).toBeUndefined();
    expect(sentUpstream()).toBe(2);
  });
});

/** Every token the emulator handed out. */
function emulatorTokens(): string[] {
  const state = emulator.state as unknown as { tokens?: Map<string, unknown> };
  return state.tokens ? [...state.tokens.keys()] : [];
}
