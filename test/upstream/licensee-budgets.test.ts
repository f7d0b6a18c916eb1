import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KEYS, LICENSEES_JSON, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * Each licensee's rateLimit from LICENSEES_FILE is its own budget. Fault: the file's rateLimit was
 * parsed but the budget applied UPSTREAM_RATE_LIMIT to every licensee, so a licensee given a small
 * limit was never held to it.
 */
const SMALL_LIMIT = 3; // less the 5 % margin: 2 sends a window, the authenticate and one call
const file = {
  licensees: LICENSEES_JSON.licensees.map((licensee) =>
    licensee.systemIdentifier === '2002' ? { ...licensee, rateLimit: SMALL_LIMIT } : licensee,
  ),
};

let t: TestGateway;
beforeAll(async () => {
  // A window far longer than the test and its deadline: 2002's next call is refused, not served later.
  t = await startGateway(
    { rateLimit: false },
    { ...licenseesEnv(file), UPSTREAM_RATE_WINDOW_MS: '600000', UPSTREAM_DEADLINE_MS: '5000' },
  );
});
afterAll(() => t.close());

const acme = { authorization: `Bearer ${CLIENT_KEYS['acme-web']}` };
const globex = { authorization: `Bearer ${CLIENT_KEYS['globex-web']}` };

describe('per-licensee rate budgets', () => {
  it("Licensee 2002 with a spent budget (its own small rateLimit) gets RATE_LIMITED while 1001's queries keep their usual latency", async () => {
    const budget = t.gateway.upstream.budget;
    // 2002's authenticate and first call spend its two sends of the window.
    expect(await t.exec('{ event(eventId: 6001) { eventId } }', undefined, globex)).toMatchObject({
      data: { event: { eventId: 6001 } },
    });
    await t.gateway.upstream.clearCache();
    t.gateway.clearResponseCache();

    // Its next call cannot have a slot before its deadline: it is refused at once.
    const refused = await t.exec('{ event(eventId: 6001) { eventId } }', undefined, globex);
    expect(budget.waiting('2002')).toBe(0);

    // 1001 is served, more times than 2002's whole budget, while 2002's call is still queued.
    for (let i = 0; i < 2 * SMALL_LIMIT; i++) {
      await t.gateway.upstream.clearCache();
      t.gateway.clearResponseCache();
      expect(await t.exec('{ event(eventId: 5001) { eventId } }', undefined, acme)).toMatchObject({
        status: 200,
        data: { event: { eventId: 5001 } },
      });
      expect(budget.waiting('1001')).toBe(0);
    }

    const answer = refused;
    expect(answer.data).toEqual({ event: null });
    expect(answer.errors).toEqual([
      expect.objectContaining({
        extensions: expect.objectContaining({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) }),
      }),
    ]);
    // 2002 never sent more than its limit allows; 1001 sent every call it was asked for.
    const sent = (licensee: string) => t.emulator.state.log.filter((entry) => entry.licensee === licensee).length;
    expect(sent('2002')).toBe(2);
    expect(sent('1001')).toBe(1 + 2 * SMALL_LIMIT);
  });
});
