import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateUpstreamCalls } from '../../src/operations/cost.ts';
import { LICENSEES_JSON, licenseesEnv, sha256 } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/*
 * recoverWebhookEndpoint reads, for each event it recovers, the pages of what changed since
 * `since`: its estimate counts them, so an operation's cost limit (QUERY_MAX_UPSTREAM_CALLS)
 * refuses a recovery of many events before any call, and `eventIds` recovers them in parts.
 */

const HOOKS_KEY = 'recover-cost-hooks-key-6a7b8c9d0e1f2a3b';
const hooks = { authorization: `Bearer ${HOOKS_KEY}` };
const LIMIT = 20;
const RECOVER = /* GraphQL */ `
  mutation ($id: ID!, $since: DateTime!, $eventIds: [Int!]) {
    recoverWebhookEndpoint(id: $id, since: $since, eventIds: $eventIds) {
      endpoint { enabled }
      queued
      userErrors { field message }
    }
  }
`;
const estimate = (eventIds?: number[]) =>
  estimateUpstreamCalls(parse(RECOVER), { id: 'ep_x', since: '2027-03-01T00:00:00Z', eventIds });

describe('the cost of recovering a webhook endpoint', () => {
  it('grows with the events it reads: one page of changes each, the most an endpoint may have when none is named', () => {
    expect([1, 2, 5, 40].map((n) => estimate(Array.from({ length: n }, (_, i) => 5001 + i)))).toEqual([1, 2, 5, 40]);
    // Each event is read once, however often it is named.
    expect(estimate([5001, 5001, 5001])).toBe(1);
    expect(estimate()).toBe(100);
  });

  describe(`through a gateway whose QUERY_MAX_UPSTREAM_CALLS is ${LIMIT}`, () => {
    let t: TestGateway;
    let receiver: ReturnType<typeof createServer>;
    let endpointId: string;

    beforeAll(async () => {
      receiver = createServer((_request, response) => response.writeHead(204).end());
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const licensees = {
        licensees: LICENSEES_JSON.licensees.map((licensee) =>
          licensee.id === 'acme'
            ? {
                ...licensee,
                clients: [{ name: 'acme-hooks', apiKeySha256: sha256(HOOKS_KEY), scopes: ['webhooks:manage'] }],
              }
            : licensee,
        ),
      };
      t = await startGateway(
        { rateLimit: false },
        {
          ...licenseesEnv(licensees),
          GATEWAY_AUTH: 'api-key',
          WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
          QUERY_MAX_UPSTREAM_CALLS: String(LIMIT),
          CHANGES_POLL_INTERVAL_MS: '3600000',
        },
      );
      const created = await t.exec<{ createWebhookEndpoint: { endpoint: { id: string } } }, never>(
        `mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks", eventIds: [5001, 5003] }) { endpoint { id } } }`,
        undefined,
        hooks,
      );
      endpointId = created.data!.createWebhookEndpoint.endpoint.id;
    });
    afterAll(async () => {
      await t?.close();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    });

    /** A minute ago on the service's clock (`since` is in its time; the emulator's runs ahead). */
    const since = () => new Date(t.gateway.upstream.serviceNow() - 60_000).toISOString();

    it('refuses a recovery of every event (counted as 100) before any call, and serves one of the events named', async () => {
      t.clearLog();
      const whole = await t.exec(RECOVER, { id: endpointId, since: since() }, hooks);
      expect(whole.errors).toEqual([
        expect.objectContaining({
          extensions: expect.objectContaining({ code: 'QUERY_TOO_COSTLY', maxCalls: LIMIT }),
        }),
      ]);
      expect(t.calls()).toEqual([]);

      const part = await t.exec(RECOVER, { id: endpointId, since: since(), eventIds: [5003] }, hooks);
      expect(part.data).toEqual({ recoverWebhookEndpoint: { endpoint: { enabled: true }, queued: 0, userErrors: [] } });
      // Only the event named was read for its changes (the endpoint's feeds read their baselines,
      // and poll no more within the test: CHANGES_POLL_INTERVAL_MS).
      const changesRead = t.calls().filter((call) => call.params.modifiedAfterDate !== undefined);
      expect(changesRead.map((call) => `${call.endpoint} ${call.params.eventId}`)).toEqual(['getreservation 5003']);
    });

    it('answers a user error, reading nothing, for an event that is not the endpoint’s', async () => {
      t.clearLog();
      const wrong = await t.exec(RECOVER, { id: endpointId, since: since(), eventIds: [5002] }, hooks);
      expect(wrong.data).toEqual({
        recoverWebhookEndpoint: {
          endpoint: null,
          queued: null,
          userErrors: [
            {
              field: ['eventIds'],
              message: 'Not events of this endpoint: 5002. Name some of its events, or leave eventIds out for all.',
            },
          ],
        },
      });
      expect(t.calls()).toEqual([]);
    });
  });
});
