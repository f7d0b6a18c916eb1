import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRest, type Rest } from '../helpers/rest.ts';

let rest: Rest;
beforeAll(async () => {
  rest = await startRest({ rateLimit: 5, rateWindowMs: 1500 });
});
afterAll(() => rest.emulator.close());
beforeEach(() => rest.reset());

describe('rate limit', () => {
  it('processes the limit per rolling window, then answers 429 with Retry-After and counts no refusal', async () => {
    await rest.token(); // authenticate counts: 1
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await rest.call('getevent', { eventId: 5001 }, { version: i % 2 ? 'v1' : 'v102' })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const refused = await rest.call('getevent', { eventId: 5001 });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    await new Promise((r) => setTimeout(r, 1600));
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
