import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Rest, startRest } from '../helpers/rest.ts';

/** The rate limit's real time, driven by the tests instead of waiting for it. */
let nowMs = 0;
let rest: Rest;
beforeAll(async () => {
  rest = await startRest({ rateLimit: 5, rateWindowMs: 1500, rateNow: () => nowMs });
});
afterAll(() => rest.emulator.close());
beforeEach(async () => {
  nowMs = 0;
  await rest.reset();
});

describe('rate limit', () => {
  it('processes the limit per rolling window, then answers 429 with Retry-After and counts no refusal', async () => {
    await rest.token(); // authenticate counts: 1
    const statuses = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await rest.call('getevent', { eventId: 5001 }, { version: i % 2 ? 'v1' : 'v102' })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const refused = await rest.call('getevent', { eventId: 5001 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('2'); // 1.5 s, in whole seconds rounded up
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    nowMs = 1600;
    // The refusals were not counted: a full window is free again.
    for (let i = 0; i < 5; i++) expect((await rest.call('getevent', { eventId: 5001 })).status).toBe(200);
    expect((await rest.call('getevent', { eventId: 5001 })).status).toBe(429);
  });

  it('counts per licensee', async () => {
    for (let i = 0; i < 4; i++) await rest.call('getevent', { eventId: 5001 });
    expect((await rest.call('getevent', { eventId: 5001 })).status).toBe(429);
    expect((await rest.call('getevent', { eventId: 6001 }, { licensee: '2002' })).status).toBe(200);
  });

  it('counts 4xx answers and authenticate', async () => {
    await rest.token();
    for (let i = 0; i < 4; i++) expect((await rest.call('getevent', { eventId: 1 })).status).toBe(404);
    expect((await rest.call('getevent', { eventId: 5001 })).status).toBe(429);
    expect((await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: '1001' })).status).toBe(429);
  });

  it('drops Retry-After under the variation', async () => {
    await rest.control('variations', { noRetryAfter: true });
    for (let i = 0; i < 4; i++) await rest.call('getevent', { eventId: 5001 });
    const res = await rest.call('getevent', { eventId: 5001 });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeNull();
  });
});

describe('rate limit at the contract’s 240 per 60 s', () => {
  let contract: Rest;
  beforeAll(async () => {
    contract = await startRest({ rateNow: () => nowMs });
  });
  afterAll(() => contract.emulator.close());

  const passed = async (count: number) => {
    let ok = 0;
    for (let i = 0; i < count; i++) if ((await contract.call('getevent', { eventId: 5001 })).status === 200) ok++;
    return ok;
  };

  // The old test could not tell a rolling window from a fixed one: a fixed window would let a
  // whole new 240 through at 61 s, twice the limit within the last minute.
  it('is a rolling window: 120 at 0 s and 120 at 30 s leave exactly 120 for 61 s', async () => {
    await contract.token(); // authenticate counts as one of the 120 at 0 s
    expect(await passed(119)).toBe(119);
    nowMs = 30_000;
    expect(await passed(120)).toBe(120);
    expect(await passed(1)).toBe(0);
    nowMs = 61_000;
    expect(await passed(121)).toBe(120);
    const refused = await contract.call('getevent', { eventId: 5001 });
    // The oldest counted request left at 30 s: it frees a place at 90 s, 29 s from now.
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '29']);
  });
});
