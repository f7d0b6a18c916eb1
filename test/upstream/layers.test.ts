import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryCacheStore, stableKey } from '../../src/upstream/cache.ts';
import { compose, type Send, type UpstreamCall } from '../../src/upstream/call.ts';
import { classifyAnswer } from '../../src/upstream/classify.ts';
import { type AnyEndpoint, ENDPOINTS, type EndpointName } from '../../src/upstream/endpoints.ts';
import { AttemptFailure, NotFoundError, TokenRejectedError, type UpstreamError } from '../../src/upstream/errors.ts';
import { retryLayer } from '../../src/upstream/layers/retry-and-breaker.ts';
import { SharedReads } from '../../src/upstream/layers/shared-reads.ts';
import { tokenLayer } from '../../src/upstream/layers/token.ts';
import { createBreaker } from '../../src/upstream/resilience.ts';
import { StaleCopies } from '../../src/upstream/stale-copies.ts';
import { ECHO_CAP, ECHO_MEMORY_MS, ECHO_WINDOW_MS } from '../../src/upstream/token-echoes.ts';
import { TokenManager } from '../../src/upstream/tokens.ts';
import { clientFor, LICENSEE_1001, type StubService, startStub } from '../helpers/upstream.ts';

/** Each layer of the call path on its own, with a fake `next`, and their order in the client. */

const stubs: StubService[] = [];
afterEach(async () => {
  await Promise.all(stubs.splice(0).map((s) => s.close()));
});

function callOf(name: EndpointName, params: Record<string, unknown>, deadline = Date.now() + 5_000): UpstreamCall {
  return { licensee: LICENSEE_1001, name, endpoint: ENDPOINTS[name] as unknown as AnyEndpoint, params, deadline };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('the call path', () => {
  it('is composed in one order: share and cache, token, retry and breaker, budget, then the transport', () => {
    const client = clientFor({ url: 'http://127.0.0.1:9' });
    expect(client.layerNames).toEqual(['shared-reads', 'token', 'retry-and-breaker', 'budget', 'readiness']);
    void client.close();
  });

  it('compose runs the first layer outermost', async () => {
    const seen: string[] = [];
    const named = (name: string) => ({
      name,
      layer:
        (next: Send): Send =>
        (call) => (seen.push(name), next(call)),
    });
    await compose([named('a'), named('b'), named('c')], async () => seen.push('last'))(
      callOf('getevent', { eventId: 1 }),
    );
    expect(seen).toEqual(['a', 'b', 'c', 'last']);
  });

  it('an open circuit fails fast without taking a budget slot (the breaker sits outside the budget)', async () => {
    const stub = await startStub((endpoint) =>
      endpoint === 'authenticate' ? { status: 200, body: { token: 't' } } : { status: 503 },
    );
    stubs.push(stub);
    const client = clientFor(stub, { maxRetries: 0, halfOpenAfterMs: 60_000 });
    for (let i = 0; i < 20; i++)
      await client.call(LICENSEE_1001, 'getevent', { eventId: i + 1 }).catch(() => undefined);
    const acquire = vi.spyOn(client.budget, 'acquire');
    const error = (await client
      .call(LICENSEE_1001, 'getevent', { eventId: 99 })
      .catch((e: unknown) => e)) as UpstreamError;
    expect(error.message).toContain('circuit open');
    expect(acquire).not.toHaveBeenCalled();
    await client.close();
  });
});

describe('share and cache', () => {
  it('stale reads after a write: a read in flight when a mutation completes is neither joined by later reads nor cached', async () => {
    const answers: ReturnType<typeof deferred<unknown>>[] = [];
    const next: Send = (call) => {
      if (call.name === 'posteventquestion') return Promise.resolve({ success: true });
      const answer = deferred<unknown>();
      answers.push(answer);
      return answer.promise;
    };
    const send = new SharedReads(new MemoryCacheStore()).layer(next);
    const questions = callOf('geteventquestions', { eventId: 5001 });

    const before = send(questions); // in flight while the question is saved
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    await send(callOf('posteventquestion', { eventId: 5001, questionId: 7, question: 'Q?', type: 1, enabled: true }));
    const after = send(questions);
    await vi.waitFor(() => expect(answers).toHaveLength(2)); // not joined to the read from before the write
    answers[0]!.resolve(['old list']);
    answers[1]!.resolve(['old list', 'Q?']);
    expect(await before).toEqual(['old list']);
    expect(await after).toEqual(['old list', 'Q?']);
    // What is cached is the answer of the read that started after the write.
    expect(await send(questions)).toEqual(['old list', 'Q?']);
    expect(answers).toHaveLength(2);
  });

  it('joins identical reads and caches their answer for the endpoint’s lifetime', async () => {
    const next = vi.fn<Send>(async () => ['answer']);
    const send = new SharedReads(new MemoryCacheStore()).layer(next);
    const results = await Promise.all([1, 2, 3].map(() => send(callOf('geteventquestions', { eventId: 5001 }))));
    await send(callOf('geteventquestions', { eventId: 5001 }));
    expect(results).toEqual([['answer'], ['answer'], ['answer']]);
    expect(next).toHaveBeenCalledTimes(1);
  });

  it('keep: false (a change feed’s poll) shares a read in flight but keeps no page, cached or stale (issue 28)', async () => {
    const next = vi.fn<Send>(async () => ['page']);
    const stale = new StaleCopies({ maxAgeMs: 60_000 });
    const send = new SharedReads(new MemoryCacheStore(), 5_000, stale, () => 10).layer(next);
    const page = (keep?: boolean) => ({
      ...callOf('getreservation', { eventId: 5001, page: 1 }),
      ...(keep === undefined ? {} : { keep }),
    });
    await Promise.all([send(page(false)), send(page(false))]);
    expect(next).toHaveBeenCalledTimes(1);
    expect(stale.get(`1001|getreservation|${stableKey(page().params)}`)).toBeUndefined();
    // Nothing was kept: a query's read asks the service; its page is kept, and a poll does not read it.
    await send(page());
    expect(next).toHaveBeenCalledTimes(2);
    expect(stale.get(`1001|getreservation|${stableKey(page().params)}`)).toBeDefined();
    await send(page(false));
    expect(next).toHaveBeenCalledTimes(3);
    await send(page());
    expect(next).toHaveBeenCalledTimes(3);
  });
});

describe('token', () => {
  it('repeats a call once with a fresh token after a rejection, and gives up after a second', async () => {
    let issued = 0;
    const tokens = new TokenManager(async () => `token-${++issued}`);
    const sent: (string | undefined)[] = [];
    const rejectAll: Send = async (call) => {
      sent.push(call.token);
      throw new TokenRejectedError('refused');
    };
    const error = await tokenLayer(tokens)(rejectAll)(callOf('getevent', { eventId: 1 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenRejectedError);
    expect(sent).toEqual(['token-1', 'token-2']);
    expect(await tokens.holds(LICENSEE_1001)).toBe(false);
  });

  const refusedInWords =
    (sent: (string | undefined)[]): Send =>
    async (call) => {
      sent.push(call.token);
      throw new TokenRejectedError('refused', {
        refusal: new NotFoundError('group code "token is expired" not found'),
      });
    };

  it('in words, at any age: renews at once; the same words with the fresh token are an echo, whose repeats renew nothing', async () => {
    let issued = 0;
    const echoes: string[] = [];
    const tokens = new TokenManager(async () => `token-${++issued}`, { onEcho: (e) => echoes.push(e.endpoint) });
    const sent: (string | undefined)[] = [];
    const send = tokenLayer(tokens)(refusedInWords(sent));
    const outcome = (eventId: number) =>
      send(callOf('getevent', { eventId })).catch((e: unknown) => (e as UpstreamError).code);
    expect(await outcome(1)).toBe('NOT_FOUND');
    expect(sent).toEqual(['token-1', 'token-2']);
    expect(echoes).toEqual(['getevent']);
    // The same request again: remembered, so it is refused with the token it has, without renewing.
    expect(await outcome(1)).toBe('NOT_FOUND');
    expect(sent).toEqual(['token-1', 'token-2', 'token-2']);
    // Another request refused in words is believed again.
    expect(await outcome(2)).toBe('NOT_FOUND');
    expect(sent).toEqual(['token-1', 'token-2', 'token-2', 'token-2', 'token-3']);
    expect(await tokens.get(LICENSEE_1001)).toBe('token-3');
  });

  it('in words, a real revocation of a token a second old: one authenticate, and the repeat is answered', async () => {
    let issued = 0;
    let revoked = true;
    const tokens = new TokenManager(async () => `token-${++issued}`);
    const sent: (string | undefined)[] = [];
    const send = tokenLayer(tokens)(async (call) => {
      sent.push(call.token);
      if (call.token === 'token-1' && revoked)
        throw new TokenRejectedError('refused', { refusal: new NotFoundError('Token is expired') });
      return 'answer';
    });
    expect(await send(callOf('getevent', { eventId: 1 }))).toBe('answer');
    expect(sent).toEqual(['token-1', 'token-2']);
    revoked = false;
    expect(await send(callOf('getevent', { eventId: 1 }))).toBe('answer');
    expect(sent).toEqual(['token-1', 'token-2', 'token-2']);
  });

  it('a token another call replaced meanwhile: the refused call repeats with that one, without an authenticate', async () => {
    let issued = 0;
    const tokens = new TokenManager(async () => `token-${++issued}`);
    const stale = await tokens.lease(LICENSEE_1001);
    await tokens.reject(LICENSEE_1001, stale.token);
    const current = await tokens.get(LICENSEE_1001);
    expect(await tokens.renewRefused(LICENSEE_1001, stale.token)).toMatchObject({ token: current });
    expect(issued).toBe(2);
  });

  it('calls that saw the same token refused share one authenticate', async () => {
    let issued = 0;
    const tokens = new TokenManager(async () => {
      issued++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return `token-${issued}`;
    });
    const first = await tokens.lease(LICENSEE_1001);
    const renewals = Array.from({ length: 10 }, () => tokens.renewRefused(LICENSEE_1001, first.token));
    expect(new Set((await Promise.all(renewals)).map((held) => held.token))).toEqual(new Set(['token-2']));
    expect(issued).toBe(2);
  });

  it(`after ${ECHO_CAP} proven echoes in a minute, words alone renew nothing for that licensee until the minute has passed; a named refusal still renews`, async () => {
    let now = 0;
    let issued = 0;
    const tokens = new TokenManager(async () => `token-${++issued}`, { now: () => now });
    const send = tokenLayer(tokens)(refusedInWords([]));
    // Distinct requests, each echoing: each costs an authenticate until the cap.
    for (let i = 0; i < 20; i++, now += 1_000)
      await send(callOf('getevent', { eventId: i }, Infinity)).catch(() => undefined);
    expect(issued).toBe(1 + ECHO_CAP);
    // A named refusal is no echo: it renews at once.
    const named = tokenLayer(tokens)(async (call) => {
      if (call.token === `token-${1 + ECHO_CAP}`) throw new TokenRejectedError('refused');
      return 'answer';
    });
    expect(await named(callOf('getevent', { eventId: 999 }))).toBe('answer');
    expect(issued).toBe(2 + ECHO_CAP);
    // The minute since the first echoes has passed: words are believed again, up to the cap.
    now += ECHO_WINDOW_MS;
    for (let i = 100; i < 120; i++, now += 1_000)
      await send(callOf('getevent', { eventId: i }, Infinity)).catch(() => undefined);
    expect(issued).toBe(2 + 2 * ECHO_CAP);
  });

  it(`a remembered echo renews nothing for ${ECHO_MEMORY_MS / 60_000} minutes, then is tried once more`, async () => {
    let now = 0;
    let issued = 0;
    const tokens = new TokenManager(async () => `token-${++issued}`, { now: () => now });
    const send = tokenLayer(tokens)(refusedInWords([]));
    const echo = () => send(callOf('getevent', { eventId: 1 }, Infinity)).catch(() => undefined);
    now = 1_000_000; // lru-cache reads an entry set at time 0 as one without a lifetime
    const start = now;
    await echo();
    expect(issued).toBe(2);
    for (; now < start + ECHO_MEMORY_MS; now += 30_000) await echo();
    expect(issued).toBe(2);
    now += 1;
    await echo();
    expect(issued).toBe(3);
  });
});

describe('retry and breaker', () => {
  it('breaker deadlock: a call waiting for a half-open breaker’s probe stops waiting at its deadline', async () => {
    const breaker = createBreaker(10);
    const down: Send = async () => {
      throw new AttemptFailure('server', 'status 503', { status: 503 });
    };
    const failing = retryLayer({ maxRetries: 0, breaker })(down);
    for (let i = 0; i < 20; i++) await failing(callOf('getevent', { eventId: 1 })).catch(() => undefined);
    expect(breaker.isOpen()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const probe = deferred<unknown>();
    const send = retryLayer({ maxRetries: 0, breaker })(() => probe.promise);
    const probing = send(callOf('getevent', { eventId: 2 })); // becomes the half-open probe and hangs
    const waiting = await send(callOf('getevent', { eventId: 3 }, Date.now() + 50)).catch((e: unknown) => e);
    expect((waiting as UpstreamError).code).toBe('UPSTREAM_UNAVAILABLE');
    probe.resolve('late');
    expect(await probing).toBe('late');
  });
  // Fault: the deadline was checked before cockatiel's backoff sleep (up to 2 s, not cancellable),
  // so a call could end up to 2 s after its deadline.
  it('no backoff outlasts the deadline: a call failing again and again ends at its deadline, not after', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5); // cockatiel's jitter, made repeatable
    try {
      const attempts: number[] = [];
      const start = Date.now();
      const down: Send = async () => {
        attempts.push(Date.now() - start);
        throw new AttemptFailure('server', 'status 503', { status: 503 });
      };
      let outcome: unknown;
      void retryLayer({ maxRetries: 6 })(down)(callOf('getevent', { eventId: 1 }, start + 300)).catch(
        (e: unknown) => (outcome = e),
      );
      await vi.advanceTimersByTimeAsync(300);
      expect(outcome).toBeInstanceOf(AttemptFailure);
      expect(attempts.length).toBeGreaterThan(1);
      expect(attempts.every((at) => at < 300)).toBe(true);
    } finally {
      vi.restoreAllMocks();
      vi.useRealTimers();
    }
  });
});

describe('classification', () => {
  const answer = (status: number, body: unknown) => ({
    status,
    headers: {},
    text: body === undefined ? '' : JSON.stringify(body),
  });
  const withToken = { ...callOf('getevent', { eventId: 1 }), token: 't' };
  const classify = (status: number, body: unknown) => {
    try {
      classifyAnswer(withToken, answer(status, body));
      return 'decoded';
    } catch (error) {
      if (!(error instanceof TokenRejectedError)) return (error as UpstreamError).code ?? (error as Error).name;
      // In words alone: what the answer means as a refusal, should the token layer not believe it.
      return error.wordsOnly ? `token in words, else ${error.wordsOnly.refusal.code}` : 'token';
    }
  };

  it.each([
    [401, { error: { code: 'INVALID_TOKEN', message: 'token is invalid' } }, 'token'],
    [200, { error: { code: 'TOKEN_EXPIRED', message: 'Request refused' } }, 'token'],
    [400, { error: { code: 'INVALID_PARAMETER', message: 'bad', field: 'token' } }, 'token'],
    [401, undefined, 'token'],
    // Words alone, at any status that is no throttling or fault: they may echo a client's value.
    [200, { success: false, message: 'Token is expired' }, 'token in words, else UPSTREAM_ERROR'],
    [403, { success: false, message: 'Invalid or expired token' }, 'token in words, else UPSTREAM_ERROR'],
    [401, { error: { message: 'unknown token' } }, 'token in words, else UPSTREAM_ERROR'],
    [
      400,
      { error: { code: 'INVALID_PARAMETER', message: 'no hotel named "invalid token"', field: 'hotelName' } },
      'token in words, else BAD_USER_INPUT',
    ],
    [
      404,
      { error: { code: 'NOT_FOUND', message: 'group code "token is expired" not found', field: 'groupCode' } },
      'token in words, else NOT_FOUND',
    ],
    [503, { error: { code: 'UNAVAILABLE', message: 'token service expired' } }, 'AttemptFailure'],
    [429, { error: { code: 'RATE_LIMITED', message: 'too many invalid token requests' } }, 'AttemptFailure'],
    // Neither: a refusal like any other.
    [401, { error: { message: 'Unauthorized' } }, 'UPSTREAM_ERROR'],
    [200, { success: false, message: 'label1 is too long' }, 'UPSTREAM_ERROR'],
  ] as const)('status %s with %j is %s', (status, body, expected) => {
    expect(classify(status, body)).toBe(expected);
  });

  it('reads Retry-After in seconds, and leaves it undefined when absent', () => {
    const throttled = (headers: Record<string, string>) => {
      try {
        classifyAnswer(withToken, { status: 429, headers, text: '' });
      } catch (error) {
        return (error as AttemptFailure).retryAfterMs;
      }
    };
    expect(throttled({ 'retry-after': '86400' })).toBe(86_400_000);
    expect(throttled({})).toBeUndefined();
  });
});

describe('TokenManager', () => {
  it('serves the held token in its last minutes while one renewal runs, and fails only when no valid token is held', async () => {
    let now = 0;
    let calls = 0;
    let fail = false;
    const tokens = new TokenManager(
      async () => {
        calls++;
        if (fail) throw new Error('authenticate failed');
        return `token-${calls}`;
      },
      { now: () => now },
    );
    expect(await tokens.get(LICENSEE_1001)).toBe('token-1');
    now = 27 * 60_000;
    fail = true;
    expect(await Promise.all([1, 2, 3].map(() => tokens.get(LICENSEE_1001)))).toEqual([
      'token-1',
      'token-1',
      'token-1',
    ]);
    await vi.waitFor(() => expect(calls).toBe(2)); // one renewal for the three callers
    now = 31 * 60_000; // the held token has expired: nothing valid to serve
    await expect(tokens.get(LICENSEE_1001)).rejects.toThrow('authenticate failed');
  });

  it('a caller waits for a token no longer than its deadline', async () => {
    const tokens = new TokenManager(() => new Promise<string>(() => undefined));
    const error = (await tokens.get(LICENSEE_1001, Date.now() + 30).catch((e: unknown) => e)) as UpstreamError;
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
  });
});
