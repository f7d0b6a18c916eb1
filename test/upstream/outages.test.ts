import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import type { UpstreamError } from '../../src/upstream/errors.ts';
import { startGateway } from '../helpers/gateway.ts';
import {
  clientFor,
  clockUntil,
  control,
  LICENSEE_1001,
  LICENSEE_2002,
  onFakeClock,
  requestsTo,
  type StubService,
  settle,
  startStub,
} from '../helpers/upstream.ts';

/**
 * Outages of the service, each against the emulator over real HTTP, driven through its
 * /_emulator/ control surface (faults, revoke-tokens, variations) and counted in its request log.
 */

let emulator: Emulator;
const clients: UpstreamClient[] = [];
const stubs: StubService[] = [];
const open = (options: Parameters<typeof clientFor>[1] = {}, target: { url: string } = emulator) => {
  const client = clientFor(target, options);
  clients.push(client);
  return client;
};

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(async () => {
  await control(emulator, 'reset');
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(stubs.splice(0).map((s) => s.close()));
});

const authenticates = async () => (await requestsTo(emulator, 'authenticate')).length;
const event = (eventId: number) => ({ status: 200, body: { eventId, name: `Event ${eventId}` } });
const TOKEN = { status: 200, body: { token: 'stub-token' } };

describe('breaker deadlock', () => {
  it('after 503s opened the breaker, faults cleared and tokens revoked, the next calls succeed within their deadline with exactly one authenticate', async () => {
    const client = open({ halfOpenAfterMs: 200, deadlineMs: 5_000, maxRetries: 1 });
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    await control(emulator, 'faults', { rules: [{ endpoint: '*', errorRate: 1, errorStatus: 503 }] });
    let failure = '';
    for (let i = 0; i < 40 && !failure.includes('circuit open'); i++) {
      failure = await client
        .call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_001 + i })
        .then(
          () => 'succeeded',
          (e: Error) => e.message,
        );
    }
    expect(failure).toContain('circuit open');
    await control(emulator, 'faults', { rules: [] });
    await control(emulator, 'revoke-tokens');
    const before = await authenticates();
    await new Promise((resolve) => setTimeout(resolve, 250)); // the breaker's half-open delay passes
    const started = Date.now();
    // Before the fix the probe's re-authenticate waited for the probe itself: nothing returned.
    const { ok, errors } = await settle(
      Array.from({ length: 5 }, (_, i) =>
        client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_100 + i }),
      ),
    );
    expect(errors).toEqual([]);
    expect(ok).toHaveLength(5);
    expect(Date.now() - started).toBeLessThan(5_000); // the bound: the call's deadline
    expect((await authenticates()) - before).toBe(1);
  }, 30_000);
});

describe('429 without Retry-After', () => {
  // Over real HTTP, on a fake clock: the client's timers and its clock (Date) move on in steps of
  // 50 ms as fast as the service answers, so the 1 + 2 + 4 s backoff passes without the real wait.
  // The backoff itself (1 s, 2 s, 4 s, one probe at a time) is pinned in budget.test.ts.
  it('after three bare 429s the next query succeeds within 10 s, not after a whole 60 s window', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const client = open({ rateWindowMs: 60_000, deadlineMs: 15_000 });
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    await control(emulator, 'variations', { noRetryAfter: true });
    await control(emulator, 'faults', { rules: [{ endpoint: 'getevent', rateLimitRate: 1 }] });
    const first = client.call(LICENSEE_1001, 'getevent', { eventId: 5002 });
    await clockUntil(async () => (await requestsTo(emulator, 'getevent')).filter((r) => r.status === 429).length >= 3);
    await control(emulator, 'faults', { rules: [] });
    const started = Date.now();
    const next = await onFakeClock(client.call(LICENSEE_1001, 'getevent', { eventId: 5003 }));
    expect(next.eventId).toBe(5003);
    expect(Date.now() - started).toBeLessThan(10_000); // within 10 s, not a whole window
    expect((await first).eventId).toBe(5002);
  }, 30_000);
});

describe('Retry-After larger than the window', () => {
  it('Retry-After: 86400 is capped at the window: the call is retried after one window, not a day', async () => {
    const stub = await startStub((endpoint, nth) => {
      if (endpoint === 'authenticate') return TOKEN;
      return nth === 1
        ? {
            status: 429,
            headers: { 'retry-after': '86400' },
            body: { error: { code: 'RATE_LIMITED', message: 'slow down' } },
          }
        : event(5001);
    });
    stubs.push(stub);
    const client = open({ rateWindowMs: 500, deadlineMs: 5_000 }, stub);
    expect((await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 })).eventId).toBe(5001);
    expect(stub.requests).toEqual(['authenticate', 'getevent', 'getevent']);
  });
});

describe('token renewal', () => {
  it('fails open: in the last minutes of its life the held token serves while one renewal runs, even when the renewal fails', async () => {
    let now = Date.now();
    const client = open({ now: () => now });
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    now += 27 * 60_000; // inside the renewal margin, still valid
    await control(emulator, 'faults', { rules: [{ endpoint: 'authenticate', errorRate: 1, errorStatus: 503 }] });
    const { ok, errors } = await settle(
      [5001, 5002, 5003].map((eventId) =>
        client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_000 + eventId }),
      ),
    );
    expect(errors).toEqual([]);
    expect(ok).toHaveLength(3);
    // One renewal behind the held token (an authenticate and its own retries), not one per call.
    await vi.waitFor(
      async () => expect((await requestsTo(emulator, 'authenticate')).filter((r) => r.status === 503).length).toBe(3),
      { timeout: 5_000 },
    );
    await control(emulator, 'faults', { rules: [] });
    now += 60_000; // past the pause after a failed renewal
    await client.call(LICENSEE_1001, 'getreservation', { eventId: 5002, reservationNumber: 760_010 });
    await vi.waitFor(
      async () => expect((await requestsTo(emulator, 'authenticate')).filter((r) => r.status === 200)).toHaveLength(2),
      { timeout: 5_000 },
    );
  });

  it('fails when no valid token is held and none can be obtained', async () => {
    await control(emulator, 'faults', { rules: [{ endpoint: 'authenticate', errorRate: 1, errorStatus: 503 }] });
    const client = open({ deadlineMs: 2_000 });
    const error = (await client
      .call(LICENSEE_1001, 'getevent', { eventId: 5001 })
      .catch((e: unknown) => e)) as UpstreamError;
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
  });
});

describe('readiness', () => {
  // How fast ready answers and how often it asks are pinned on a fake clock in readiness.test.ts.
  // Fault: readiness asked through the authenticate path that retries twice: 3 authenticates.
  it('during a 503 outage of authenticate, one /ready probe makes exactly one authenticate', async () => {
    const client = open();
    await control(emulator, 'faults', { rules: [{ endpoint: 'authenticate', errorRate: 1, errorStatus: 503 }] });
    expect(await client.ready(LICENSEE_1001)).toBe(false);
    expect(await client.ready(LICENSEE_1001)).toBe(false);
    expect(await authenticates()).toBe(1);
  });

  // Fault: one flag for all licensees: 1001's successful call made 2002 (wrong key) look ready.
  it('a call that succeeded for one licensee does not make another with a wrong key ready', async () => {
    const client = open();
    await client.call(LICENSEE_1001, 'getevent', { eventId: 5001 });
    expect(await client.ready({ ...LICENSEE_2002, key: 'wrong-key' })).toBe(false);
    expect(await client.ready(LICENSEE_1001)).toBe(true);
  });

  it('the gateway’s /ready with a wrong key: 503 each time, one authenticate, the key in no answer', async () => {
    const t = await startGateway(
      { rateLimit: false },
      { UPSTREAM_KEY: 'wrong-secret-key', UPSTREAM_SYSTEM_IDENTIFIER: '1001' },
    );
    try {
      for (let i = 0; i < 4; i++) {
        const res = await t.gateway.yoga.fetch('http://yoga/ready');
        expect(res.status).toBe(503);
        expect(await res.text()).not.toContain('wrong-secret-key');
      }
      expect(t.count('authenticate')).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('answers true from state once a token is held, without another authenticate', async () => {
    const client = open();
    await client.call(LICENSEE_2002, 'getevent', { eventId: 6001 });
    for (let i = 0; i < 3; i++) expect(await client.ready(LICENSEE_2002)).toBe(true);
    expect(await authenticates()).toBe(1);
  });
});

// Words alone renew the token once; when the repeat gets the same words they were the data's, and the
// same request renews nothing again (token-rejections.test.ts: the cap on distinct ones).
describe('token-rejection guess', () => {
  it('a 400 whose message echoes "invalid token" from a client value: passed on, one authenticate for the request, none for its repeats', async () => {
    const stub = await startStub((endpoint) =>
      endpoint === 'authenticate'
        ? TOKEN
        : {
            status: 400,
            body: {
              error: { code: 'INVALID_PARAMETER', message: 'no hotel named "invalid token"', field: 'hotelName' },
            },
          },
    );
    stubs.push(stub);
    const client = open({}, stub);
    for (let i = 0; i < 3; i++) {
      const error = (await client
        .call(LICENSEE_1001, 'gethotels', { eventId: 5001, hotelName: 'invalid token' })
        .catch((e: unknown) => e)) as UpstreamError;
      expect(error.code).toBe('BAD_USER_INPUT');
    }
    expect(stub.requests).toEqual(['authenticate', 'gethotels', 'authenticate', 'gethotels', 'gethotels', 'gethotels']);
  });

  it('a 200 whose message alone names an invalid token: passed on, one authenticate for the request, none for its repeats', async () => {
    const stub = await startStub((endpoint) =>
      endpoint === 'authenticate'
        ? TOKEN
        : { status: 200, body: { success: false, message: 'Invalid token "x" in label1' } },
    );
    stubs.push(stub);
    const client = open({}, stub);
    for (let i = 0; i < 3; i++) {
      const error = (await client
        .call(LICENSEE_1001, 'getevent', { eventId: 5001 })
        .catch((e: unknown) => e)) as UpstreamError;
      expect(error.code).toBe('UPSTREAM_ERROR');
    }
    expect(stub.requests.filter((e) => e === 'authenticate')).toHaveLength(2);
  });
});

describe('secrets in upstream messages', () => {
  // Fault: only the key was cleaned out exactly; a token with `+ / =` or under 24 characters
  // slipped past the length pattern and reached clients and logs.
  it('a 400 or 404 message echoing the call’s token, raw or URL-encoded, reaches the caller without it', async () => {
    const token = 'ab+cd/ef=';
    const stub = await startStub((endpoint, nth) => {
      if (endpoint === 'authenticate') return { status: 200, body: { token } };
      // The first call and its repeat (its message names a token: words, so renewed once), then a 404.
      return nth <= 2
        ? {
            status: 400,
            body: {
              error: { code: 'INVALID_PARAMETER', message: `bad hotelName for token ${token}`, field: 'hotelName' },
            },
          }
        : {
            status: 404,
            body: { error: { code: 'NOT_FOUND', message: `no event for ${encodeURIComponent(token)} (${token})` } },
          };
    });
    stubs.push(stub);
    const client = open({}, stub);
    const refused = (await client
      .call(LICENSEE_1001, 'gethotels', { eventId: 5001 })
      .catch((e: unknown) => e)) as UpstreamError;
    const missing = (await client
      .call(LICENSEE_1001, 'gethotels', { eventId: 5002 })
      .catch((e: unknown) => e)) as UpstreamError;
    expect([refused.code, missing.code]).toEqual(['BAD_USER_INPUT', 'NOT_FOUND']);
    expect(refused.message).toBe('bad hotelName for token [token]');
    expect(missing.message).toBe('no event for [token] ([token])');
  });
});
