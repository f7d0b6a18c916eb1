import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { UpstreamAccount } from '../../src/upstream/account.ts';
import type { Send, UpstreamCall } from '../../src/upstream/call.ts';
import { type AnyEndpoint, ENDPOINTS } from '../../src/upstream/endpoints.ts';
import { Readiness } from '../../src/upstream/readiness.ts';
import type { Breaker } from '../../src/upstream/resilience.ts';
import { type AuthenticateAttempts, TokenManager } from '../../src/upstream/tokens.ts';
import { LICENSEE_1001, LICENSEE_2002 } from '../helpers/upstream.ts';

/** Readiness on vitest's fake clock: what it answers when, and how many authenticates it asks for. */

const closedBreaker = { isOpen: () => false } as Breaker;

/** A Readiness over a TokenManager whose authenticate is `authenticate`; records each attempt mode. */
function readinessWith(authenticate: () => Promise<string>) {
  const asked: AuthenticateAttempts[] = [];
  const tokens = new TokenManager(
    (_licensee: UpstreamAccount, attempts: AuthenticateAttempts) => {
      asked.push(attempts);
      return authenticate();
    },
    { now: Date.now },
  );
  return { readiness: new Readiness({ tokens, breaker: closedBreaker, now: Date.now }), asked };
}

function callFor(licensee: UpstreamAccount): UpstreamCall {
  return {
    licensee,
    name: 'getevent',
    endpoint: ENDPOINTS.getevent as unknown as AnyEndpoint,
    params: { eventId: 1 },
    deadline: Date.now() + 5_000,
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Readiness', () => {
  it('answers false within 1 s while the token fetch never settles', async () => {
    const { readiness } = readinessWith(() => new Promise<string>(() => undefined));
    let answer: boolean | undefined;
    void readiness.ready(LICENSEE_1001).then((ready) => (answer = ready));
    await vi.advanceTimersByTimeAsync(999);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answer).toBe(false);
  });

  it('asks for a token at most once per 30 s: none more at 29 s, one at 31 s', async () => {
    const { readiness, asked } = readinessWith(() => Promise.reject(new Error('wrong key')));
    expect(await readiness.ready(LICENSEE_1001)).toBe(false);
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(29_000);
    expect(await readiness.ready(LICENSEE_1001)).toBe(false);
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await readiness.ready(LICENSEE_1001)).toBe(false);
    expect(asked).toHaveLength(2);
  });

  // Fault: readiness took the authenticate path with retries: one probe made three authenticates.
  it('asks for its token with a single attempt, never the retrying one', async () => {
    const { readiness, asked } = readinessWith(async () => 'token');
    expect(await readiness.ready(LICENSEE_1001)).toBe(true);
    expect(asked).toEqual(['once']);
  });

  // Fault: one flag for all licensees: a call that succeeded for one made every other look ready.
  it('keeps the outcome of the last call per licensee', async () => {
    const { readiness, asked } = readinessWith(() => Promise.reject(new Error('wrong key')));
    const answered: Send = async () => 'answer';
    const refused: Send = async () => {
      throw new Error('refused');
    };
    await readiness.layer(answered)(callFor(LICENSEE_1001));
    await readiness
      .layer(refused)(callFor(LICENSEE_2002))
      .catch(() => undefined);
    expect(await readiness.ready(LICENSEE_2002)).toBe(false);
    expect(await readiness.ready(LICENSEE_1001)).toBe(true);
    expect(asked).toHaveLength(1); // only 2002, which had no successful call, asked for a token
  });
});
