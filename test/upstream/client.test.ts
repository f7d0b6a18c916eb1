import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import type { Emulator } from '../../src/emulator/server.ts';
import { createGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import {
  clientFor,
  clockUntil,
  count,
  emulatorAndClient,
  LICENSEE_1001,
  LICENSEE_2002,
  onFakeClock,
  settle,
} from '../helpers/upstream.ts';

let emulator: Emulator;
let client: UpstreamClient;
beforeAll(async () => {
  ({ emulator, client } = await emulatorAndClient({ rateLimit: false }));
});
afterAll(async () => {
  await client.close();
  await emulator.close();
});
beforeEach(async () => {
  emulator.state.reset();
  await client.close();
  client = clientFor(emulator, { halfOpenAfterMs: 300 });
});

const code = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  return e instanceof UpstreamError ? e.code : e;
};

describe('tokens', () => {
  it('after the clock moves 31 minutes, the next calls succeed with one new authenticate', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    emulator.state.clock.advance(31 * 60_000);
    const { ok, errors } = await settle(
      Array.from({ length: 20 }, (_, i) =>
        client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i }),
      ),
    );
    expect(errors).toEqual([]);
    expect(ok).toHaveLength(20);
    expect(count(emulator, 'authenticate')).toBe(2);
  });

  it('after the tokens are revoked, the next calls succeed with one new authenticate', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    emulator.state.revokeTokens();
    const { errors } = await settle(
      Array.from({ length: 20 }, (_, i) =>
        client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i }),
      ),
    );
    expect(errors).toEqual([]);
    expect(count(emulator, 'authenticate')).toBe(2);
  });

  it('renews a token before its 30 minutes run out, behind the held one, without a rejection', async () => {
    let now = Date.now();
    const clocked = clientFor(emulator, { now: () => now });
    await clocked.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    now += 26 * 60_000;
    await clocked.call(LICENSEE_1001, 'getevent', { eventId: 5002 });
    await vi.waitFor(() => expect(count(emulator, 'authenticate')).toBe(2));
    expect(emulator.state.log.filter((r) => r.status === 401)).toEqual([]);
    await clocked.close();
  });

  it('keeps one token per licensee', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    await client.call(LICENSEE_2002, 'getevent', { eventId: 6001 });
    expect(emulator.state.log.filter((r) => r.endpoint === 'authenticate').map((r) => r.licensee)).toEqual([
      '1001',
      '2002',
    ]);
  });

  it('reports refused credentials as UPSTREAM_ERROR without the key', async () => {
    const error = await client
      .call({ ...LICENSEE_1001, key: 'secret-wrong-key' }, 'getevent', { eventId: 5001 })
      .catch((e: Error) => e);
    expect((error as UpstreamError).code).toBe('UPSTREAM_ERROR');
    expect(String((error as Error).message)).not.toContain('secret-wrong-key');
    expect(count(emulator, 'authenticate')).toBe(1);
  });
});

describe('one clock', () => {
  // Fault: the client's `now` did not reach the budget, which kept reading the wall clock.
  it('the budget reads the client’s clock: once it has moved a window on, the next call is served', async () => {
    let now = Date.now();
    const clocked = clientFor(emulator, {
      now: () => now,
      rateLimit: 2,
      rateMargin: 0,
      rateWindowMs: 60_000,
      deadlineMs: 1_000,
    });
    await clocked.call(LICENSEE_1001, 'getevent', { eventId: 5001 }); // the authenticate and this call fill the budget
    const spent = await code(clocked.call(LICENSEE_1001, 'getevent', { eventId: 5002 }));
    now += 61_000;
    const served = await clocked.call(LICENSEE_1001, 'getevent', { eventId: 5003 });
    await clocked.close();
    expect(spent).toBe('RATE_LIMITED');
    expect(served.eventId).toBe(5003);
  });
});

describe('faults', () => {
  it('at 30 % 503 plus 5 % connection resets, every read succeeds', async () => {
    emulator.state.faults.set({
      rules: [
        {
          endpoint: '*',
          latencyMs: 0,
          errorRate: 0.3,
          errorStatus: 503,
          resetRate: 0.05,
          malformedRate: 0,
          rateLimitRate: 0,
        },
      ],
    });
    const reads = Array.from({ length: 60 }, (_, i) =>
      client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i }),
    );
    reads.push(
      client.call(LICENSEE_1001, 'gethotels', { eventId: 5001 }) as never,
      client.call(LICENSEE_1001, 'getgroupcodes', { eventId: 5001 }) as never,
    );
    const { errors } = await settle(reads);
    expect(errors).toEqual([]);
    const faults = emulator.state.log.filter((r) => r.fault);
    expect(faults.some((r) => r.fault === 'status')).toBe(true);
    expect(faults.some((r) => r.fault === 'reset')).toBe(true);
  });

  it('a postcustomfield that met a reset is not sent twice', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 }); // warm token
    emulator.state.faults.set({
      rules: [
        {
          endpoint: 'postcustomfield',
          latencyMs: 0,
          errorRate: 0,
          errorStatus: 503,
          resetRate: 1,
          malformedRate: 0,
          rateLimitRate: 0,
        },
      ],
    });
    const error = await client.call(LICENSEE_1001, 'postcustomfield', { name: 'Badge' }).catch((e: Error) => e);
    expect((error as UpstreamError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect((error as Error).message).toContain('may or may not have been applied');
    expect(count(emulator, 'postcustomfield')).toBe(1);
  });

  it('a postcustomfield that met a 503 is not sent twice either, but a forced 429 is retried', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    emulator.state.faults.set({
      rules: [
        {
          endpoint: 'postcustomfield',
          latencyMs: 0,
          errorRate: 1,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0,
          rateLimitRate: 0,
        },
      ],
    });
    expect(await code(client.call(LICENSEE_1001, 'postcustomfield', { name: 'Badge' }))).toBe('UPSTREAM_UNAVAILABLE');
    expect(count(emulator, 'postcustomfield')).toBe(1);
    emulator.state.faults.set({
      rules: [
        {
          endpoint: 'postcustomfield',
          latencyMs: 0,
          errorRate: 0,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0,
          rateLimitRate: 0.5,
        },
      ],
      seed: 3,
    });
    const created = await client.call(LICENSEE_1001, 'postcustomfield', { name: 'Badge' });
    expect(created.name).toBe('Badge');
  });

  it('a read still failing at its deadline ends UPSTREAM_UNAVAILABLE, not RATE_LIMITED', async () => {
    const quick = clientFor(emulator, { deadlineMs: 300 });
    await quick.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    emulator.state.faults.set({
      rules: [
        {
          endpoint: 'getgroupcodes',
          latencyMs: 0,
          errorRate: 1,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0,
          rateLimitRate: 0,
        },
      ],
    });
    expect(await code(quick.call(LICENSEE_1001, 'getgroupcodes', { eventId: 5001 }))).toBe('UPSTREAM_UNAVAILABLE');
    expect(count(emulator, 'getgroupcodes')).toBeGreaterThan(1);
    await quick.close();
  });

  it('retries malformed bodies of reads', async () => {
    emulator.state.faults.set({
      rules: [
        {
          endpoint: 'getevent',
          latencyMs: 0,
          errorRate: 0,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0.5,
          rateLimitRate: 0,
        },
      ],
      seed: 5,
    });
    const events = await Promise.all(
      [5001, 5002, 5003].map((eventId) => client.call(LICENSEE_1001, 'getevent', { eventId })),
    );
    expect(events.map((e) => e.eventId)).toEqual([5001, 5002, 5003]);
  });

  it('a 429 pauses the licensee for Retry-After and the call is retried', async () => {
    // On a fake clock (the client made on it), moved on as the service answers: the 2 s pause passes at once.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => void vi.useRealTimers());
    await client.close();
    client = clientFor(emulator, { halfOpenAfterMs: 300 });
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    emulator.state.faults.set({
      rules: [
        {
          endpoint: 'getevent',
          latencyMs: 0,
          errorRate: 0,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0,
          rateLimitRate: 1,
        },
      ],
    });
    const throttle = vi.spyOn(client.budget, 'throttle');
    const pending = Promise.all([5002, 5003].map((eventId) => client.call(LICENSEE_1001, 'getevent', { eventId })));
    await clockUntil(() => emulator.state.log.some((r) => r.status === 429));
    emulator.state.faults.clear();
    const events = await onFakeClock(pending);
    expect(events.map((e) => e.eventId)).toEqual([5002, 5003]);
    // The emulator's forced 429 says Retry-After: 2; the licensee is paused that long, then retried.
    expect(throttle.mock.calls.map((args) => args[2])).toContain(2_000);
    expect(throttle.mock.results.map((r) => r.value)).toContain(2_000);
    const log = emulator.state.log.filter((r) => r.endpoint === 'getevent').map((r) => r.status);
    expect(log.indexOf(429)).toBeLessThan(log.lastIndexOf(200));
  });

  it('opens the circuit when the service is down, fails fast, and probes it back', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    // The breaker reads the time from Date (its half-open delay): held still here, so that the six
    // calls can fail at once and the circuit stays open however long their last retries take to end.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    emulator.state.faults.set({
      rules: [
        {
          endpoint: '*',
          latencyMs: 0,
          errorRate: 1,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0,
          rateLimitRate: 0,
        },
      ],
    });
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        client
          .call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i })
          .catch(() => undefined),
      ),
    );
    const sent = emulator.state.log.length;
    const error = await client
      .call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_100 })
      .catch((e: Error) => e);
    expect((error as UpstreamError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect((error as Error).message).toContain('circuit open');
    expect(emulator.state.log.length).toBe(sent); // failed fast: nothing sent
    emulator.state.faults.clear();
    vi.setSystemTime(Date.now() + 400); // past the breaker's half-open delay (300 ms)
    expect(
      await client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_100 }),
    ).toHaveLength(1);
  }, 60_000);
});

describe('tolerated variations', () => {
  it.each([
    ['error', { errorWith200: 'error' }],
    ['success-false', { errorWith200: 'success-false' }],
    ['status-error', { errorWith200: 'status-error' }],
  ] as const)('reads an error reported with status 200 (%s)', async (_name, variations) => {
    emulator.state.variations = variations;
    expect(await code(client.call(LICENSEE_1001, 'getevent', { eventId: 42 }))).toBe('NOT_FOUND');
    // A successful answer beside it is still read as one.
    expect((await client.call(LICENSEE_1001, 'getevent', { eventId: 5002 })).eventId).toBe(5002);
  });

  // Token rejections in each form: token-rejections.test.ts.

  it('reads bare-integer page counts, wrapped arrays, numeric strings and unknown properties', async () => {
    emulator.state.variations = {
      bareIntegerPageCount: true,
      wrappedArrays: 'named',
      numericStrings: true,
      extraProperties: true,
    };
    expect(await client.call(LICENSEE_1001, 'getreservationpagecount', { eventId: 5001 })).toBe(26);
    const hotels = await client.call(LICENSEE_1001, 'gethotels', { eventId: 5001 });
    expect(hotels.length).toBeGreaterThan(10);
    expect(hotels[0]!.hotelId).toEqual(expect.any(Number));
    expect(hotels[0]!.raw.legacyRef).toBe('LR-0');
    expect(hotels[0]!.raw.hotelId).toEqual(expect.any(String));
    emulator.state.variations = { wrappedArrays: 'data' };
    const page = await client.call(LICENSEE_1001, 'getreservation', { eventId: 5002 });
    expect(page).toHaveLength(1000);
  });

  it('maps error bodies that are not JSON by their status, and a 429 without Retry-After', async () => {
    emulator.state.variations = { nonJsonErrors: 'html' };
    expect(await code(client.call(LICENSEE_1001, 'getevent', { eventId: 42 }))).toBe('NOT_FOUND');
    emulator.state.variations = { nonJsonErrors: 'empty' };
    expect(await code(client.call(LICENSEE_1001, 'getevent', { eventId: 43 }))).toBe('NOT_FOUND');
    emulator.state.variations = { noRetryAfter: true };
    // Without Retry-After the licensee backs off 1 s (at most a window, here 500 ms) and probes again.
    const quick = clientFor(emulator, { rateWindowMs: 500 });
    const throttle = vi.spyOn(quick.budget, 'throttle');
    emulator.state.faults.set({
      rules: [
        {
          endpoint: 'getevent',
          latencyMs: 0,
          errorRate: 0,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0,
          rateLimitRate: 1,
        },
      ],
    });
    const pending = quick.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    while (!emulator.state.log.some((r) => r.status === 429)) await new Promise((r) => setTimeout(r, 10));
    emulator.state.faults.clear();
    expect((await pending).eventId).toBe(5001);
    expect(throttle.mock.calls[0]?.[2]).toBeUndefined();
    expect(throttle.mock.results[0]?.value).toBe(500);
    await quick.close();
  });
});

describe('errors', () => {
  it('refuses bad parameters before any call, naming the field', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['getreservation', { eventId: 5001, modifiedAfterDate: '05-Jan-2027' }, 'modifiedAfterDate'],
      ['getreservation', { eventId: 5001, page: 0 }, 'page'],
      ['getreservation', { eventId: 5001, reservationStatus: 'open' }, 'reservationStatus'],
      ['getshoppingviewhotels', { eventId: 5001, checkInDate: '2027-03-12' }, 'checkOutDate'],
      [
        'getshoppingviewhotels',
        { eventId: 5001, checkInDate: '2027-03-12', checkOutDate: '2027-03-11' },
        'checkOutDate',
      ],
      ['posteventquestion', { eventId: 5001, questionId: 1, question: 'Q', type: 2, enabled: true }, 'options'],
      [
        'posteventquestion',
        {
          eventId: 5001,
          questionId: 1,
          question: 'Q',
          type: 1,
          options: [{ value: '1', label: 'Yes' }],
          enabled: true,
        },
        'options',
      ],
      ['postcustomfieldvalue', { customFieldId: 1, value: 'v' }, 'reservationId'],
      ['postcustomfieldvalue', { customFieldId: 1, value: 'v', attendeeId: 'A' }, 'registrationEventId'],
      ['postattendee', { attendeeId: 'A', registrationEventId: 'R', country: 'Atlantis' }, 'country'],
      ['postattendee', { attendeeId: 'A', registrationEventId: 'R', email: 'nope' }, 'email'],
      ['postattendee', { attendeeId: 'A', registrationEventId: 'R', firstName: 'x'.repeat(256) }, 'firstName'],
      [
        'posteventhotelactualized',
        { eventId: 5001, hotelId: 201, actualized: [{ date: '2027-02-30', rooms: 1 }] },
        'actualized',
      ],
      [
        'posteventhotelactualized',
        {
          eventId: 5001,
          hotelId: 201,
          actualized: [
            { date: '2027-03-01', rooms: 1 },
            { date: '2027-03-01', rooms: 2 },
          ],
        },
        'actualized',
      ],
    ];
    for (const [name, params, field] of cases) {
      const error = await client
        .call(LICENSEE_1001, name as 'getevent', params as never)
        .catch((e: UpstreamError) => e);
      expect([name, (error as UpstreamError).code, (error as UpstreamError).details.field]).toEqual([
        name,
        'BAD_USER_INPUT',
        field,
      ]);
    }
    expect(emulator.state.log).toEqual([]);
  });

  it('maps upstream refusals: 404 NOT_FOUND, 400 BAD_USER_INPUT, 410 UPSTREAM_ERROR', async () => {
    expect(await code(client.call(LICENSEE_1001, 'getevent', { eventId: 6001 }))).toBe('NOT_FOUND');
    expect(
      await code(
        client.call(LICENSEE_1001, 'postcustomfieldvalue', { customFieldId: 1, value: 'v', reservationId: 760_001 }),
      ),
    ).toBe('BAD_USER_INPUT');
  });

  it('never carries the key or a token in an error', async () => {
    emulator.state.variations = { errorWith200: 'error' };
    const errors = await settle([
      client.call(LICENSEE_1001, 'getevent', { eventId: 42 }),
      client.call({ ...LICENSEE_1001, key: 'k-very-secret' }, 'getevent', { eventId: 1 }),
    ]);
    const text = JSON.stringify(errors.errors.map((e) => ({ message: e.message, ...(e as UpstreamError).details })));
    expect(text).not.toContain('k-very-secret');
    expect(text).not.toContain('demo-key-1001');
    expect(text).not.toMatch(/[A-Za-z0-9_-]{32}/);
  });
});

describe('a bug in the call path', () => {
  // Fault: any error the layers did not know became UPSTREAM_ERROR "unexpected failure", unlogged.
  it('passes as it is: the gateway logs it with its stack and answers INTERNAL_SERVER_ERROR', async () => {
    let logged = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((logged += chunk.toString()), done()) });
    const config = loadConfig({
      LOG_LEVEL: 'error',
      UPSTREAM_BASE_URL: emulator.url,
      UPSTREAM_KEY: 'demo-key-1001',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
    });
    const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url }, createLogger('error', sink));
    const bug = new TypeError("Cannot read properties of undefined (reading 'token')");
    vi.spyOn(gateway.upstream.tokens, 'lease').mockRejectedValue(bug);
    const direct = await gateway.upstream.call(LICENSEE_1001, 'getevent', { eventId: 5001 }).catch((e: unknown) => e);
    const res = await gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ event(eventId: 5001) { name } }' }),
    });
    const body = (await res.json()) as { errors?: { message: string; extensions?: { code?: string } }[] };
    await gateway.close();
    expect(direct).toBe(bug);
    expect(body.errors?.[0]).toMatchObject({
      message: 'Unexpected error.',
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    expect(logged).toContain("Cannot read properties of undefined (reading 'token')");
    expect(logged).toContain('client.test.ts'); // the stack, pointing at where it was thrown
  });
});

describe('transport, versions and formats', () => {
  it('sends the configured User-Agent, POST, v102, and v101 for the link endpoints', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    const code1 = (await client.call(LICENSEE_1001, 'getgroupcodes', { eventId: 5001 }))[0]!.groupCode;
    const link = await client.call(LICENSEE_1001, 'getgroupcodelink', {
      eventId: 5001,
      groupCode: code1,
      attendeeId: 'A-1',
      registrationEventId: 'R-1',
    });
    expect(link.link).toContain(code1);
    const log = emulator.state.log;
    expect(new Set(log.map((r) => r.userAgent))).toEqual(new Set(['reservation-gateway/test']));
    expect(log.map((r) => `${r.version}/${r.endpoint}`)).toEqual([
      'v102/authenticate',
      'v102/getevent',
      'v102/getgroupcodes',
      'v101/getgroupcodelink',
    ]);
  });

  it('decodes dates to ISO: days, event offsets, timestamps in the licensee’s zone', async () => {
    const r = (await client.call(LICENSEE_2002, 'getreservation', { eventId: 6001, reservationNumber: 900_001 })).at(0);
    expect(r!.arrivalDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(r!.modifiedDate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00-0[45]:00$/);
    expect(r!.raw.modifiedDate).toMatch(/ (am|pm)$/);
    const event = await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    expect(event.startDate).toBe('2027-03-12T08:00:00-06:00');
  });

  it('sends modifiedAfterDate in the licensee’s zone and gets what changed since then', async () => {
    const all = emulator.state.store.reservationsByEvent.get(6001)!;
    const pivot = [...all].sort((a, b) => a.modifiedMs - b.modifiedMs)[200]!;
    const since = new Date(Math.floor(pivot.modifiedMs / 60_000) * 60_000).toISOString();
    const list = await client.call(LICENSEE_2002, 'getreservation', { eventId: 6001, modifiedAfterDate: since });
    expect(list.slice().map((x) => x.reservationNumber)).toEqual(
      all.filter((x) => x.modifiedMs >= Date.parse(since)).map((x) => x.reservationNumber),
    );
  });

  it('sends actualized nights as a JSON array and options as a JSON object', async () => {
    const hotelId = emulator.state.store.hotelsByEvent.get(5001)![0]!.hotelId;
    const stored = await client.call(LICENSEE_1001, 'posteventhotelactualized', {
      eventId: 5001,
      hotelId,
      actualized: [{ date: '2027-03-13', rooms: 7 }],
    });
    expect(stored.stored).toBe(1);
    await client.call(LICENSEE_1001, 'posteventquestion', {
      eventId: 5001,
      questionId: 50,
      question: 'Gala?',
      type: 2,
      options: [
        { value: '1', label: 'Yes' },
        { value: '0', label: 'No' },
      ],
      enabled: true,
    });
    const questions = await client.call(LICENSEE_1001, 'geteventquestions', { eventId: 5001 });
    expect(questions.find((q) => q.questionId === 50)!.options).toEqual({ 1: 'Yes', 0: 'No' });
  });
});

describe('cache', () => {
  it('keeps answers for the endpoint’s lifetime and drops what a mutation changes', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    expect(count(emulator, 'getevent')).toBe(1);
    const before = await client.call(LICENSEE_1001, 'geteventquestions', { eventId: 5001 });
    await client.call(LICENSEE_1001, 'posteventquestion', {
      eventId: 5001,
      questionId: 60,
      question: 'New?',
      type: 1,
      enabled: true,
    });
    const after = await client.call(LICENSEE_1001, 'geteventquestions', { eventId: 5001 });
    expect(after.length).toBe(before.length + 1);
    await client.call(LICENSEE_1001, 'getcustomfields', {});
    await client.call(LICENSEE_1001, 'getcustomfields', { eventId: 5001 });
    await client.call(LICENSEE_1001, 'postcustomfield', { name: 'Fresh', eventId: 5001 });
    expect((await client.call(LICENSEE_1001, 'getcustomfields', {})).map((f) => f.name)).toContain('Fresh');
    expect((await client.call(LICENSEE_1001, 'getcustomfields', { eventId: 5001 })).map((f) => f.name)).toContain(
      'Fresh',
    );
    expect(count(emulator, 'geteventquestions')).toBe(2);
    expect(count(emulator, 'getcustomfields')).toBe(4);
  });

  it('never shares answers between licensees', async () => {
    await client.call(LICENSEE_1001, 'getcustomfields', {});
    const other = await client.call(LICENSEE_2002, 'getcustomfields', {});
    expect(other.map((f) => f.customFieldId)).toEqual([3]);
  });
});
