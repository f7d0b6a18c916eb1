import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Variations } from '../../src/emulator/variations.ts';
import { ECHO_CAP } from '../../src/upstream/token-echoes.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { listen, wsClient } from '../helpers/subscriptions.ts';

/**
 * A service that revokes tokens early and says so in words alone, and clients whose values echo
 * those words, through the gateway's real doors (HTTP and graphql-ws). The emulator's log counts
 * what each costs: a refused request is logged without a licensee (its token named none).
 */

type Answer = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };

const EXPIRED_IN_WORDS = { status: 200, form: 'message', message: 'Token is expired' } as const;

describe.each(['http', 'graphql-ws'] as const)('over %s', (door) => {
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  let ws: Client | undefined;
  let groupCode: string;

  beforeAll(async () => {
    // No response cache: every operation below must reach the service, or its token would not be tested.
    t = await startGateway(
      { rateLimit: false },
      {
        RESPONSE_CACHE: 'off',
        UPSTREAM_PAGE_TTL_MS: '0',
        // 200 operations, their refusals and authenticates: more than one minute's real budget.
        UPSTREAM_RATE_LIMIT: '10000',
      },
    );
    server = await listen(t);
  });
  afterAll(async () => {
    await ws?.dispose();
    await server.close();
    await t.close();
  });
  beforeEach(async () => {
    t.emulator.state.reset();
    await t.gateway.upstream.clearCache();
    t.gateway.upstream.tokens.echoes.clear();
    const first = await exec('{ event(eventId: 5001) { groupCodes { code } } }');
    groupCode = (first.data?.event as { groupCodes: { code: string }[] }).groupCodes[0]!.code;
  });

  async function exec(query: string): Promise<Answer> {
    if (door === 'http') {
      const res = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Answer;
    }
    ws ??= wsClient(server.wsUrl);
    const client = ws;
    return new Promise<Answer>((resolve, reject) => {
      let result: Answer = {};
      client.subscribe<Record<string, unknown>>(
        { query },
        { next: (value) => (result = value as Answer), error: reject, complete: () => resolve(result) },
      );
    });
  }

  const variations = (v: Variations) => {
    t.emulator.state.variations = v;
  };
  const log = () => t.emulator.state.log;
  const authenticates = () => log().filter((r) => r.endpoint === 'authenticate').length;
  const refused = () => log().filter((r) => r.endpoint !== 'authenticate' && r.licensee === null).length;
  const linkCalls = () => log().filter((r) => r.endpoint === 'getgroupcodelink').length;
  const link = (code: string, attendeeId = 'A-1') =>
    `{ groupCodeLink(eventId: 5001, groupCode: ${JSON.stringify(code)}, attendeeId: "${attendeeId}", registrationEventId: "R-1") }`;

  it('tokens revoked after 10 uses and refused as 200 {"success": false, "message": "Token is expired"}: 200 operations in a row all answered with data, one authenticate per revocation', async () => {
    variations({ tokenRejection: { ...EXPIRED_IN_WORDS, revokeAfterUses: 10 } });
    for (let i = 0; i < 200; i++) {
      const answer = await exec(link(groupCode, `A-${i}`));
      expect(answer.errors, `operation ${i}`).toBeUndefined();
      expect(answer.data?.groupCodeLink, `operation ${i}`).toEqual(expect.stringContaining('http'));
    }
    // Every token served its 10 uses, then was refused once and renewed once.
    expect(refused()).toBeGreaterThanOrEqual(19);
    expect(authenticates()).toBe(refused() + 1);
  });

  it('a client’s value echoed as "token is expired": one authenticate for the first request, none for its repeats', async () => {
    variations({ echoValues: true });
    const before = authenticates();
    const echoesBefore =
      (await t.gateway.metrics.tokenEchoes.get()).values.find((v) => v.labels.endpoint === 'getgroupcodelink')?.value ??
      0;
    expect(await exec(link('token is expired'))).toEqual({ data: { groupCodeLink: null } });
    expect(authenticates() - before).toBe(1);
    const calls = linkCalls();
    for (let i = 0; i < 5; i++) expect(await exec(link('token is expired'))).toEqual({ data: { groupCodeLink: null } });
    // Each repeat reached the service, and renewed nothing.
    expect(linkCalls() - calls).toBe(5);
    expect(authenticates() - before).toBe(1);
    // Operators see the one proven echo.
    const echoes = await t.gateway.metrics.tokenEchoes.get();
    expect(echoes.values.find((v) => v.labels.endpoint === 'getgroupcodelink')?.value).toBe(echoesBefore + 1);
  });

  it(`a flood of distinct echoing values costs at most ${ECHO_CAP} authenticates a minute, and the licensee is served all along`, async () => {
    // (That words are believed again the next minute: test/upstream/layers.test.ts, on a clock moved by hand.)
    variations({ echoValues: true });
    const before = authenticates();
    for (let i = 0; i < 30; i++)
      expect(await exec(link(`token is expired ${i}`))).toEqual({ data: { groupCodeLink: null } });
    expect(authenticates() - before).toBe(ECHO_CAP);
    expect((await exec(link(groupCode))).data?.groupCodeLink).toEqual(expect.stringContaining('http'));
  });

  it.each<NonNullable<Variations['tokenRejection']>>([
    { status: 200, form: 'code' },
    { status: 401, form: 'empty' },
  ])(
    'a refusal by code or status (%o) renews at once, even while echoes have stopped words from renewing',
    async (rejection) => {
      variations({ echoValues: true });
      for (let i = 0; i < ECHO_CAP; i++) await exec(link(`token is expired ${i}`));
      const before = authenticates();
      variations({ tokenRejection: rejection });
      t.emulator.state.revokeTokens();
      expect((await exec(link(groupCode))).data?.groupCodeLink).toEqual(expect.stringContaining('http'));
      expect(authenticates() - before).toBe(1);
    },
  );
});
