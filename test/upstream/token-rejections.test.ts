import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import type { Variations } from '../../src/emulator/variations.ts';
import { createGateway } from '../../src/gateway.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { ECHO_CAP } from '../../src/upstream/token-echoes.ts';
import { clientFor, count, LICENSEE_1001, startStub } from '../helpers/upstream.ts';

/**
 * Token rejections in each form the emulator's `tokenRejection` variation has, and a client's value
 * echoed in a message that calls the token expired. The client's clock is a fake moved by hand; the
 * emulator's log counts the authenticates.
 */

let emulator: Emulator;
let client: UpstreamClient;
let now: number;
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(() => {
  emulator.state.reset();
  now = Date.now();
  // A budget no test here comes near: the fake clock stands still between moves.
  client = clientFor(emulator, { now: () => now, rateLimit: 100_000 });
});
afterEach(async () => {
  await client.close();
});

const failure = async (p: Promise<unknown>) => {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof UpstreamError)) throw new Error(`expected an UpstreamError, got ${String(error)}`);
  return error;
};
const authenticates = () => count(emulator, 'authenticate');
type Rejection = NonNullable<Variations['tokenRejection']>;

describe('a token the service really dropped', () => {
  // Every form is believed at any token age: our clock is never trusted about a token.
  it.each<Rejection>([
    { status: 401, form: 'empty' },
    { status: 200, form: 'code' },
    { status: 400, form: 'code' },
    { status: 401, form: 'code' },
    { status: 403, form: 'code' },
    { status: 200, form: 'field' },
    { status: 400, form: 'field' },
  ])('named (%o): the call succeeds after exactly one authenticate, however young the token', async (rejection) => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    emulator.state.variations = { tokenRejection: rejection };
    emulator.state.revokeTokens();
    const event = await client.call(LICENSEE_1001, 'getevent', { eventId: 5002 });
    expect(event.eventId).toBe(5002);
    expect(authenticates()).toBe(2);
  });

  it.each<Rejection>([
    { status: 200, form: 'message', message: 'Token is expired' },
    { status: 200, form: 'message' },
    { status: 400, form: 'message' },
    { status: 401, form: 'message' },
    { status: 403, form: 'message', message: 'Unknown token' },
  ])('in words (%o), a token a second old: the call succeeds after exactly one authenticate', async (rejection) => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    now += 1_000;
    emulator.state.variations = { tokenRejection: rejection };
    emulator.state.revokeTokens();
    const event = await client.call(LICENSEE_1001, 'getevent', { eventId: 5002 });
    expect(event.eventId).toBe(5002);
    expect(authenticates()).toBe(2);
    // The new token serves the next calls without another.
    expect((await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 })).eventId).toBe(5001);
    expect(authenticates()).toBe(2);
  });

  it('revoked again and again, each a few uses old: every call is served, with one authenticate per revocation', async () => {
    emulator.state.variations = {
      tokenRejection: { status: 200, form: 'message', message: 'Token is expired', revokeAfterUses: 3 },
    };
    // Each call resolves (a refusal passed on would throw), and the service answered each one.
    for (let i = 0; i < 30; i++)
      await client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i });
    const served = emulator.state.log.filter((r) => r.endpoint === 'getreservation' && r.licensee === '1001');
    expect(served).toHaveLength(30);
    const refusals = emulator.state.log.filter((r) => r.endpoint !== 'authenticate' && r.licensee === null).length;
    // 30 calls of 3 a token: 10 tokens, each but the last revoked once.
    expect(refusals).toBe(9);
    expect(authenticates()).toBe(refusals + 1);
  });

  it('calls refused in words together share one authenticate', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    now += 10 * 60_000;
    emulator.state.variations = { tokenRejection: { status: 200, form: 'message' } };
    emulator.state.revokeTokens();
    const reservations = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i }),
      ),
    );
    expect(reservations).toHaveLength(20);
    expect(authenticates()).toBe(2);
  });
});

describe('a client’s value that echoes "token is expired"', () => {
  const link = (groupCode: string) =>
    client.call(LICENSEE_1001, 'getgroupcodelink', {
      eventId: 5001,
      groupCode,
      attendeeId: 'A-1',
      registrationEventId: 'R-1',
    });

  it.each([
    ['a 404', {}, 'NOT_FOUND'],
    ['a 200 with success false', { errorWith200: 'success-false' }, 'NOT_FOUND'],
  ] as const)(
    `in %s: every request gets the service’s refusal; one authenticate proves a value an echo, its repeats cost none, and distinct values at most ${ECHO_CAP} a minute`,
    async (_name, variations, code) => {
      await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
      emulator.state.variations = { echoValues: true, ...variations };
      const refusedAs = async (value: string) => {
        const refused = await failure(link(value));
        expect([refused.code, refused.message]).toEqual([code, `group code not found: "${value}"`]);
      };
      await refusedAs('token is expired');
      expect(authenticates()).toBe(2);
      for (let second = 0; second < 30; second++, now += 1_000) await refusedAs('token is expired');
      expect(authenticates()).toBe(2);
      // Distinct values, one after another and many at once: the cap, then nothing until the minute has passed.
      for (let i = 0; i < 20; i++, now += 1_000) await refusedAs(`token is expired ${i}`);
      await Promise.all(Array.from({ length: 50 }, (_, i) => refusedAs(`Token is expired ${i}`)));
      expect(authenticates()).toBe(1 + ECHO_CAP);
      now += 60_000;
      await Promise.all(Array.from({ length: 50 }, (_, i) => refusedAs(`Token expired ${i}`)));
      // Many at once share the one authenticate their refused token needs.
      expect(authenticates()).toBe(2 + ECHO_CAP);
      // And the licensee's other calls are served all along.
      expect((await client.call(LICENSEE_1001, 'getevent', { eventId: 5002 })).eventId).toBe(5002);
    },
  );
});

describe('secrets', () => {
  it('a message naming the token refuses in words without the token reaching the error or the log', async () => {
    const token = 'tk+/=7';
    const stub = await startStub((endpoint) =>
      endpoint === 'authenticate'
        ? { status: 200, body: { token } }
        : { status: 200, body: { success: false, message: `Token ${token} is expired` } },
    );
    const lines: string[] = [];
    const logger = {
      warn: (obj: object, msg: string) => lines.push(JSON.stringify(obj), msg),
      debug: (obj: object, msg: string) => lines.push(JSON.stringify(obj), msg),
    };
    const stubbed = clientFor(stub, { now: () => now, logger });
    try {
      const first = await failure(stubbed.call(LICENSEE_1001, 'getevent', { eventId: 5001 }));
      const repeat = await failure(stubbed.call(LICENSEE_1001, 'getevent', { eventId: 5001 }));
      // Renewed once for the words, proven an echo, and not renewed for them again.
      expect(stub.requests).toEqual(['authenticate', 'getevent', 'authenticate', 'getevent', 'getevent']);
      for (const error of [first, repeat])
        expect(error.message).toBe('the reservation service refused getevent: Token [token] is expired');
      expect(lines.length).toBeGreaterThan(0);
      const text = JSON.stringify([first, repeat, first.details, repeat.details, lines]);
      expect(text).not.toContain(token);
      expect(text).not.toContain(encodeURIComponent(token));
    } finally {
      await stubbed.close();
      await stub.close();
    }
  });
});

describe('through the gateway', () => {
  // The outage: a service that reports an expired token only as a 200 with a message.
  it('keeps serving a licensee whose token the service refuses as {"success": false, "message": "Token is expired"}', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url });
    const query = async (eventId: number) => {
      await gateway.upstream.clearCache();
      gateway.clearResponseCache();
      const res = await gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: `{ event(eventId: ${eventId}) { eventId } }` }),
      });
      return (await res.json()) as {
        data?: { event: { eventId: number } | null };
        errors?: { extensions?: { code?: string } }[];
      };
    };
    try {
      expect((await query(5001)).data).toEqual({ event: { eventId: 5001 } });
      emulator.state.variations = { tokenRejection: { status: 200, form: 'message', message: 'Token is expired' } };
      emulator.state.revokeTokens();
      expect(await query(5002)).toEqual({ data: { event: { eventId: 5002 } } });
      expect(await query(5001)).toEqual({ data: { event: { eventId: 5001 } } });
      expect(authenticates()).toBe(2);
    } finally {
      await gateway.close();
    }
  });
});
