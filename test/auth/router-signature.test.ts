import { defaultExecutionRequestSerializer, useHmacUpstreamSignature } from '@graphql-mesh/hmac-upstream-signature';
import { parse } from 'graphql';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHiveGateway } from '../../examples/federation/hive-gateway.ts';
import {
  type RegistrationSubgraph,
  startRegistrationSubgraph,
} from '../../examples/federation/registration-subgraph.ts';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { listen, wsClient } from '../helpers/subscriptions.ts';
import { composeSupergraph } from '../schema/federation/compose.ts';
import { CLIENT_KEYS, licenseesEnv } from './licensees-fixture.ts';

/**
 * ROUTER_HMAC_SECRET: our gateway as a subgraph that only the company graph's router may call.
 * The real Hive Gateway (`hmacSignature` with the same secret) signs each request to us; a request
 * sent straight to our port, unsigned or with a forged signature, is refused with 401
 * UNAUTHENTICATED before its document is read and with no upstream call, on HTTP (POST, GET), SSE
 * and graphql-ws. The client's own key, forwarded by the router, still decides the licensee.
 */

const SECRET = 'router-secret-0123456789abcdef0123456789abcdef';
const EVENTS = '{ mine: event(eventId: 5001) { eventId name } theirs: event(eventId: 6001) { eventId name } }';
const acme = { authorization: `Bearer ${CLIENT_KEYS['acme-web']}` };
const globex = { authorization: `Bearer ${CLIENT_KEYS['globex-web']}` };

let t: TestGateway;
let ours: Awaited<ReturnType<typeof listen>>;
let registrations: RegistrationSubgraph;
let hive: Awaited<ReturnType<typeof startHiveGateway>>;

beforeAll(async () => {
  t = await startGateway(
    { rateLimit: false },
    { GATEWAY_AUTH: 'api-key', ...licenseesEnv(), ROUTER_HMAC_SECRET: SECRET },
  );
  ours = await listen(t);
  registrations = await startRegistrationSubgraph([]);
  const supergraph = composeSupergraph({ reservations: ours.url, registrations: registrations.url });
  hive = await startHiveGateway(supergraph, { hmacSecret: SECRET });
}, 60_000);

afterAll(async () => {
  await hive?.close();
  await registrations?.close();
  await ours?.close();
  await t?.close();
});

beforeEach(async () => {
  await readyToCount(t);
});

/** The query, variables and extensions of a request Hive Gateway would sign with `secret` (the library's own signer). */
async function signed(query: string, secret: string, variables?: Record<string, unknown>) {
  const plugin = useHmacUpstreamSignature({ secret });
  plugin.onYogaInit!({ yoga: { fetchAPI: { TextEncoder, crypto: globalThis.crypto, btoa } } } as never);
  const executionRequest = { document: parse(query), variables, extensions: {} as Record<string, unknown> };
  const log = { child: () => log, debug: () => {} };
  await plugin.onSubgraphExecute!({ subgraphName: 'reservations', executionRequest, log } as never);
  // The query as the router prints it into the request it signs (what the signature covers).
  const { query: sent } = JSON.parse(defaultExecutionRequestSerializer(executionRequest as never)!) as {
    query: string;
  };
  return { query: sent, variables, extensions: executionRequest.extensions };
}

interface Answer {
  status: number;
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post(url: string, body: object, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, ...((await res.json()) as object) };
}

const expectRefused = (answer: Answer) => {
  expect(answer.status).toBe(401);
  expect(answer.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
  expect(answer.data ?? null).toBeNull();
  expect(t.calls()).toEqual([]);
};

describe('through Hive Gateway with hmacSignature', () => {
  it('runs signed operations, the client’s key choosing the licensee', async () => {
    const res = await post(hive.url, { query: EVENTS }, acme);
    expect(res.errors).toBeUndefined();
    expect(res.data).toMatchObject({ mine: { eventId: 5001 }, theirs: null });
  });

  it('a signed request with licensee 2002’s key cannot read licensee 1001’s event', async () => {
    const res = await post(hive.url, { query: EVENTS }, globex);
    expect(res.errors).toBeUndefined();
    expect(res.data).toMatchObject({ mine: null, theirs: { eventId: 6001 } });
  });

  it('still refuses a client without a credential, signed or not', async () => {
    const res = await post(hive.url, { query: EVENTS });
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.data?.mine ?? null).toBeNull();
  });
});

describe('straight to our port', () => {
  it('refuses an unsigned POST with 401 UNAUTHENTICATED and no upstream call', async () => {
    expectRefused(await post(ours.url, { query: EVENTS }, acme));
  });

  it('refuses an unsigned GET', async () => {
    const res = await fetch(`${ours.url}?query=${encodeURIComponent(EVENTS)}`, {
      headers: { accept: 'application/graphql-response+json', 'graphql-preflight': '1', ...acme },
    });
    expectRefused({ status: res.status, ...((await res.json()) as object) });
  });

  it('refuses a signature made with another secret, a signature of another query, and garbage', async () => {
    expectRefused(await post(ours.url, await signed(EVENTS, 'another-secret-0123456789abcdef0123456789'), acme));
    const other = await signed('{ event(eventId: 5001) { eventId } }', SECRET);
    expectRefused(await post(ours.url, { ...other, query: (await signed(EVENTS, SECRET)).query }, acme));
    expectRefused(
      await post(ours.url, { query: EVENTS, extensions: { 'hmac-signature': 'bm90IGEgc2lnbmF0dXJl' } }, acme),
    );
    expectRefused(await post(ours.url, { query: EVENTS, extensions: { 'hmac-signature': '%%%' } }, acme));
  });

  it('signs its variables too: changed variables are refused', async () => {
    const query = 'query E($id: Int!) { event(eventId: $id) { eventId } }';
    const good = await signed(query, SECRET, { id: 5001 });
    const ok = await post(ours.url, good, acme);
    expect(ok.errors).toBeUndefined();
    expect(ok.data).toEqual({ event: { eventId: 5001 } });
    await readyToCount(t);
    expectRefused(await post(ours.url, { ...good, variables: { id: 5002 } }, acme));
  });

  it('runs a request signed with the secret (the router’s, as the library signs it)', async () => {
    const res = await post(ours.url, await signed(EVENTS, SECRET), acme);
    expect(res.errors).toBeUndefined();
    expect(res.data).toMatchObject({ mine: { eventId: 5001 } });
  });

  it('refuses an unsigned or forged request over SSE', async () => {
    for (const body of [{ query: EVENTS }, await signed(EVENTS, 'another-secret-0123456789abcdef0123456789')]) {
      const res = await fetch(ours.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...acme },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status).toBe(401);
      expect(text).toContain('"code":"UNAUTHENTICATED"');
      expect(text).not.toContain('"data":{');
      expect(t.calls()).toEqual([]);
    }
    const ok = await fetch(ours.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...acme },
      body: JSON.stringify(await signed(EVENTS, SECRET)),
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('"eventId":5001');
  });

  describe('over graphql-ws', () => {
    let client: Client;
    beforeAll(() => {
      client = wsClient(ours.wsUrl, { Authorization: acme.authorization });
    });
    afterAll(() => client.dispose());

    const run = (payload: Record<string, unknown>) =>
      new Promise<Answer>((resolve, reject) => {
        let last: Answer | undefined;
        client.subscribe(payload as never, {
          next: (result) => void (last = { status: 0, ...(result as object) }),
          error: (error) => (Array.isArray(error) ? resolve({ status: 0, errors: error }) : reject(error)),
          complete: () => resolve(last ?? { status: 0 }),
        });
      });

    it('refuses an unsigned or forged operation with UNAUTHENTICATED and no upstream call; runs a signed one', async () => {
      for (const payload of [{ query: EVENTS }, await signed(EVENTS, 'another-secret-0123456789abcdef0123456789')]) {
        const res = await run(payload);
        expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
        expect(res.data ?? null).toBeNull();
        expect(t.calls()).toEqual([]);
      }
      const ok = await run(await signed(EVENTS, SECRET));
      expect(ok.errors).toBeUndefined();
      expect(ok.data).toMatchObject({ mine: { eventId: 5001 } });
    });
  });
});
