import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import type { Variations } from '../../src/emulator/variations.ts';
import { createGateway } from '../../src/gateway.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { WORDS_RENEWAL_MS } from '../../src/upstream/tokens.ts';
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
  // Named forms: nothing a client sends can produce them, so they are believed at any token age.
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

  // Words alone: believed once the token is WORDS_RENEWAL_MS old.
  it.each<Rejection>([
    { status: 200, form: 'message', message: 'Token is expired' },
    { status: 200, form: 'message' },
    { status: 400, form: 'message' },
    { status: 401, form: 'message' },
    { status: 403, form: 'message', message: 'Unknown token' },
  ])('in words (%o), token older than 30 s: the call succeeds after exactly one authenticate', async (rejection) => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    now += WORDS_RENEWAL_MS;
    emulator.state.variations = { tokenRejection: rejection };
    emulator.state.revokeTokens();
    const event = await client.call(LICENSEE_1001, 'getevent', { eventId: 5002 });
    expect(event.eventId).toBe(5002);
    expect(authenticates()).toBe(2);
    // The new token serves the next calls without another.
    expect((await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 })).eventId).toBe(5001);
    expect(authenticates()).toBe(2);
  });

  it('in words, token younger than 30 s: the service’s refusal is passed on until the token is 30 s old, then one authenticate', async () => {
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    emulator.state.variations = { tokenRejection: { status: 200, form: 'message', message: 'Token is expired' } };
    emulator.state.revokeTokens();
    for (const _ of [1, 2, 3]) {
      now += 5_000;
      const refused = await failure(client.call(LICENSEE_1001, 'getevent', { eventId: 5002 }));
      expect([refused.code, refused.message]).toEqual([
        'UPSTREAM_ERROR',
        'the reservation service refused getevent: Token is expired',
      ]);
    }
    expect(authenticates()).toBe(1);
    now += WORDS_RENEWAL_MS - 15_000;
    expect((await client.call(LICENSEE_1001, 'getevent', { eventId: 5002 })).eventId).toBe(5002);
    expect(authenticates()).toBe(2);
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
    'in %s: every request gets the service’s refusal, and at most one authenticate per 30 s however many requests',
    async (_name, variations, code) => {
      await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
      emulator.state.variations = { echoValues: true, ...variations };
      const start = now;
      // Authenticates sent while the fake clock was in each 30 s window since the token was obtained.
      const perWindow = new Map<number, number>();
      for (let second = 0; second < 150; second++) {
        const before = authenticates();
        const refused = await failure(link(`token is expired ${second}`));
        expect([refused.code, refused.message]).toEqual([code, `group code not found: "token is expired ${second}"`]);
        const window = Math.floor((now - start) / WORDS_RENEWAL_MS);
        perWindow.set(window, (perWindow.get(window) ?? 0) + authenticates() - before);
        now += 1_000;
      }
      // Renewed once the token was 30 s old, in each window after the first; never more.
      expect([...perWindow.values()]).toEqual([0, 1, 1, 1, 1]);
      // Many at once, with a token old enough to doubt: still one.
      now += WORDS_RENEWAL_MS;
      const before = authenticates();
      const refusals = await Promise.all(Array.from({ length: 50 }, (_, i) => failure(link(`Token is expired ${i}`))));
      expect(refusals.map((e) => e.code)).toEqual(Array(50).fill(code));
      expect(authenticates() - before).toBe(1);
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
      const young = await failure(stubbed.call(LICENSEE_1001, 'getevent', { eventId: 5001 }));
      now += WORDS_RENEWAL_MS;
      const renewed = await failure(stubbed.call(LICENSEE_1001, 'getevent', { eventId: 5001 }));
      expect(stub.requests).toEqual(['authenticate', 'getevent', 'getevent', 'authenticate', 'getevent']);
      for (const error of [young, renewed])
        expect(error.message).toBe('the reservation service refused getevent: Token [token] is expired');
      expect(lines.length).toBeGreaterThan(0);
      const text = JSON.stringify([young, renewed, young.details, renewed.details, lines]);
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
    vi.useFakeTimers({ toFake: ['Date'] });
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
      vi.setSystemTime(Date.now() + WORDS_RENEWAL_MS);
      expect(await query(5002)).toEqual({ data: { event: { eventId: 5002 } } });
      expect(await query(5001)).toEqual({ data: { event: { eventId: 5001 } } });
      expect(authenticates()).toBe(2);
    } finally {
      await gateway.close();
      vi.useRealTimers();
    }
  });
});
