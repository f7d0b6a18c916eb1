import { createHmac } from 'node:crypto';
import { defaultParamsSerializer } from '@graphql-mesh/hmac-upstream-signature';
import { describe, expect, it } from 'vitest';
import { routerSignature } from '../../src/auth/router-signature.ts';

/**
 * Hive Gateway's http-callback transport nests the request's own extensions (and so its signature)
 * one level down, beside `subscription` (test/e2e/federation-example.test.ts runs it for real).
 */
const SECRET = 'a-router-secret-of-at-least-32-characters';
const query = 'subscription { reservationChanged(eventId: 5002) { kind } }';
const variables = { a: 1 };
const signatureOf = (secret: string) =>
  createHmac('sha256', secret)
    .update(defaultParamsSerializer({ query, variables } as never) ?? '')
    .digest('base64');
const subscription = {
  callbackUrl: 'http://router/callback/1',
  subscriptionId: '1',
  verifier: 'v',
  heartbeatIntervalMs: 5000,
};

describe('a callback subscription’s signature, as Hive Gateway’s http-callback transport sends it', () => {
  const { plugin } = routerSignature(SECRET);
  // As Yoga starts the plugin: the library logs through Yoga's logger.
  plugin.onYogaInit?.({ yoga: { logger: { debug() {}, error() {} } } } as never);
  /** The plugin's check of one operation's parameters, as Yoga asks it. */
  const verify = async (params: object) => plugin.onParams!({ params } as never);

  it('is read one level down and checked against the query and variables', async () => {
    await expect(
      verify({ query, variables, extensions: { subscription, extensions: { 'hmac-signature': signatureOf(SECRET) } } }),
    ).resolves.toBeUndefined();
  });

  it('is refused when forged, when the variables changed, or when no subscription is asked', async () => {
    for (const params of [
      { query, variables, extensions: { subscription, extensions: { 'hmac-signature': signatureOf(`${SECRET}x`) } } },
      {
        query,
        variables: { a: 2 },
        extensions: { subscription, extensions: { 'hmac-signature': signatureOf(SECRET) } },
      },
      { query, variables, extensions: { extensions: { 'hmac-signature': signatureOf(SECRET) } } },
    ])
      await expect(verify(params)).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
  });
});
