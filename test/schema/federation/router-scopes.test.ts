import '../../../examples/federation/quiet-apollo.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@apollo/composition';
import {
  createGatewayRuntime,
  createInlineSigningKeyProvider,
  extractFromHeader,
  type GatewayPlugin,
  useJWT,
} from '@graphql-hive/gateway';
import { parse } from 'graphql';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RESERVATIONS_SUBGRAPH } from '../../../examples/federation/subgraph-names.ts';
import { subgraphSdl } from '../../../src/schema/index.ts';
import { licenseesEnv } from '../../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../../helpers/gateway.ts';

/*
 * A company router with its own JWT authentication reads the scopes our subgraph SDL declares
 * (`@requiresScopes`, src/schema/scopes.ts) and refuses before it plans: Hive Gateway's runtime
 * with its `useJWT` (the token's payload in its context, forwarded to subgraphs) and its generic
 * auth (`genericAuth`, which takes the scopes from the payload's `scope`, space-separated). Our
 * gateway, behind it, checks the same token again (GATEWAY_AUTH=jwt).
 */

const SECRET = 'a-router-test-secret-of-32-bytes-at-least';
const ISSUER = 'https://id.example.com/';
const AUDIENCE = 'reservation-gateway';

const sign = (scope: string) =>
  new SignJWT({ licensee: 'acme', scope, client_id: 'acme-app' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

let t: TestGateway;
let subgraph: Server;
/** Requests our gateway received, of any kind. */
let received = 0;
let router: ReturnType<typeof createGatewayRuntime>;

beforeAll(async () => {
  t = await startGateway(
    { rateLimit: false },
    { ...licenseesEnv(), GATEWAY_AUTH: 'jwt', JWT_SECRET: SECRET, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE },
  );
  subgraph = createServer((request, response) => {
    received++;
    void t.gateway.yoga(request, response);
  });
  await new Promise<void>((resolve) => subgraph.listen(0, '127.0.0.1', resolve));
  const composed = composeServices([
    {
      name: RESERVATIONS_SUBGRAPH,
      url: `http://127.0.0.1:${(subgraph.address() as AddressInfo).port}/graphql`,
      typeDefs: parse(subgraphSdl()),
    },
  ]);
  if (composed.errors) throw new Error(composed.errors.map((error) => error.message).join('\n'));
  router = createGatewayRuntime({
    supergraph: composed.supergraphSdl,
    logging: false,
    plugins: () => [
      useJWT({
        tokenLookupLocations: [extractFromHeader({ name: 'authorization', prefix: 'Bearer' })],
        signingKeyProviders: [createInlineSigningKeyProvider(SECRET)],
        tokenVerification: { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] },
        forward: { payload: true },
        // Its context (`jwt`) typed narrower than the runtime's plugin list takes; Hive's own CLI adds it so.
      }) as GatewayPlugin,
    ],
    genericAuth: {
      mode: 'protect-granular',
      resolveUserFn: (context) => (context as { jwt?: { payload?: Record<string, unknown> } }).jwt?.payload,
    },
    // The client's token, to our subgraph: it checks the token itself (docs/federating.md).
    propagateHeaders: {
      fromClientToSubgraphs: ({ request, subgraphName }) =>
        subgraphName === RESERVATIONS_SUBGRAPH ? { authorization: request.headers.get('authorization') ?? '' } : {},
    },
  });
}, 60_000);

afterAll(async () => {
  await router?.dispose();
  subgraph?.closeAllConnections();
  await new Promise<void>((resolve) => (subgraph ? subgraph.close(() => resolve()) : resolve()));
  await t?.close();
});

beforeEach(() => {
  received = 0;
  t.clearLog();
});

async function throughRouter(query: string, scope: string) {
  const response = await router.fetch('http://router/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await sign(scope)}` },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}

const ENDPOINTS = '{ webhookEndpoints { totalCount } }';

describe('Hive Gateway with JWT authentication, over our subgraph SDL', () => {
  it('refuses a token without webhooks:manage the webhook management fields, before any request reaches us', async () => {
    const refused = await throughRouter(ENDPOINTS, 'read write');
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHORIZED_FIELD_OR_TYPE' }) }),
    ]);
    expect(received).toBe(0);
    // Nor may a token with webhooks:manage alone read an event.
    const reading = await throughRouter('{ event(eventId: 5001) { name } }', 'webhooks:manage');
    expect(reading.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED_FIELD_OR_TYPE');
    expect(received).toBe(0);
    expect(t.calls()).toEqual([]);
  });

  it('serves a token with webhooks:manage, which our gateway checks again', async () => {
    expect(await throughRouter(ENDPOINTS, 'webhooks:manage')).toEqual({
      data: { webhookEndpoints: { totalCount: 0 } },
    });
    expect(received).toBe(1);
    expect(await throughRouter('{ event(eventId: 5001) { eventId } }', 'read')).toEqual({
      data: { event: { eventId: 5001 } },
    });
  });
});
