import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { CLIENT_KEYS, licenseesEnv } from './licensees-fixture.ts';

/** GATEWAY_AUTH=jwt: HS256 with JWT_SECRET, RS256/ES256 with a JWKS served on 127.0.0.1:0. */
const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';
const ISSUER = 'https://id.example.com/';
const AUDIENCE = 'reservation-gateway';
const EVENTS = '{ mine: event(eventId: 6001) { eventId } theirs: event(eventId: 5001) { eventId } }';
const MUTATION = 'mutation { upsertAttendee(input: { attendeeId: "A-1", registrationEventId: "R-1" }) { created } }';
const now = () => Math.floor(Date.now() / 1000);

interface Claims {
  licensee?: unknown;
  scope?: string;
  iss?: string;
  aud?: string;
  exp?: number;
  client_id?: string;
  azp?: string;
  sub?: string;
}

function sign(claims: Claims, key: Uint8Array | CryptoKey, header: { alg: string; kid?: string }): Promise<string> {
  const { iss = ISSUER, aud = AUDIENCE, exp = now() + 300, ...rest } = claims;
  return new SignJWT({ ...rest })
    .setProtectedHeader(header)
    .setIssuer(iss)
    .setAudience(aud)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(key);
}
const hs256 = (claims: Claims, secret = SECRET) => sign(claims, new TextEncoder().encode(secret), { alg: 'HS256' });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('JWT with JWT_SECRET (HS256)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway(
      { rateLimit: false },
      { ...licenseesEnv(), GATEWAY_AUTH: 'jwt', JWT_SECRET: SECRET, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE },
    );
  });
  afterAll(() => t.close());
  beforeEach(() => t.clearLog());

  it("lets a token of licensee globex in, and it sees globex's events only", async () => {
    const answer = await t.exec(
      EVENTS,
      undefined,
      bearer(await hs256({ licensee: 'globex', scope: 'read', client_id: 'globex-app' })),
    );
    expect(answer).toMatchObject({ status: 200, data: { mine: { eventId: 6001 }, theirs: null } });
    expect(new Set(t.emulator.state.log.map((entry) => entry.licensee))).toEqual(new Set(['2002']));
  });

  // Fault: before client authentication anyone who reached the port acted for the licensee.
  it.each([
    ['no credential', async () => ({}), /needs a token/],
    [
      'an expired token',
      async () => bearer(await hs256({ licensee: 'acme', scope: 'read', exp: now() - 120 })),
      /has expired/,
    ],
    [
      'a token signed with another secret',
      async () => bearer(await hs256({ licensee: 'acme', scope: 'read' }, 'another-secret-of-at-least-32-bytes!!')),
      /signature does not verify/,
    ],
    [
      'a token for another audience',
      async () => bearer(await hs256({ licensee: 'acme', scope: 'read', aud: 'another-service' })),
      /"aud"/,
    ],
    [
      'a token of another issuer',
      async () => bearer(await hs256({ licensee: 'acme', scope: 'read', iss: 'https://evil.example.com/' })),
      /"iss"/,
    ],
    [
      'a token naming a licensee not in the file',
      async () => bearer(await hs256({ licensee: 'initech', scope: 'read write' })),
      /"licensee" claim does not name a licensee/,
    ],
    [
      'a token naming the licensee by its systemIdentifier',
      async () => bearer(await hs256({ licensee: '2002', scope: 'read' })),
      /"licensee" claim/,
    ],
    ['a token without a licensee', async () => bearer(await hs256({ scope: 'read' })), /"licensee" claim/],
    [
      'an unsigned token (alg none)',
      async () =>
        bearer(
          `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ licensee: 'acme', iss: ISSUER, aud: AUDIENCE, exp: now() + 60 })).toString('base64url')}.`,
        ),
      /algorithm is not accepted|not a valid JWT/,
    ],
    ['an API key as Bearer', async () => bearer(CLIENT_KEYS['acme-ops']), /not a valid JWT/],
    ['an API key in X-Api-Key', async () => ({ 'x-api-key': CLIENT_KEYS['acme-ops'] }), /X-Api-Key is not accepted/],
    ['a Basic credential', async () => ({ authorization: 'Basic YWNtZTpzZWNyZXQ=' }), /scheme "Basic" is not accepted/],
    ['a bare Bearer', async () => ({ authorization: 'Bearer ' }), /exactly one credential/],
  ])('refuses %s with 401 UNAUTHENTICATED and makes no upstream call', async (_case, headers, message) => {
    const answer = await t.exec(EVENTS, undefined, await headers());
    expect(answer.status).toBe(401);
    expect(answer.errors).toEqual([
      { message: expect.stringMatching(message), extensions: { code: 'UNAUTHENTICATED' } },
    ]);
    expect(t.emulator.state.log).toEqual([]);
  });

  it('takes the scopes from scope: read may query, not mutate (FORBIDDEN, no upstream call); read write may', async () => {
    const reader = await t.exec(MUTATION, undefined, bearer(await hs256({ licensee: 'acme', scope: 'read profile' })));
    expect(reader.errors).toEqual([expect.objectContaining({ extensions: { code: 'FORBIDDEN' } })]);
    const scopeless = await t.exec(EVENTS, undefined, bearer(await hs256({ licensee: 'globex' })));
    expect(scopeless.errors).toEqual([
      expect.objectContaining({ message: expect.stringContaining('"read" scope'), extensions: { code: 'FORBIDDEN' } }),
    ]);
    expect(t.emulator.state.log).toEqual([]);
    const writer = await t.exec(MUTATION, undefined, bearer(await hs256({ licensee: 'acme', scope: 'read write' })));
    expect(writer.errors).toBeUndefined();
    expect(
      t.emulator.state.log.filter((entry) => entry.endpoint === 'postattendee').map((entry) => entry.licensee),
    ).toEqual(['1001']);
  });
});

// Review fault: the client name fell back to `sub` (a person's id or email), written at info in the audit line.
describe('JWT client names in the audit line', () => {
  let emulator: Emulator;
  let gateway: Gateway;
  const lines: string[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, rateLimit: false });
    const logger = createLogger('trace', { write: (line: string) => void lines.push(line) });
    const env = {
      LOG_LEVEL: 'trace',
      ...licenseesEnv(),
      GATEWAY_AUTH: 'jwt',
      JWT_SECRET: SECRET,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
    };
    gateway = createGateway({ ...loadConfig(env), upstreamBaseUrl: emulator.url }, logger);
  });
  afterAll(async () => {
    await gateway.close();
    await emulator.close();
  });

  it('names the client by client_id, else azp, else "jwt", and never logs sub', async () => {
    const person = 'ada.lovelace@example.com';
    const tokens = [
      await hs256({ licensee: 'acme', scope: 'read', client_id: 'acme-portal', azp: 'other', sub: person }),
      await hs256({ licensee: 'acme', scope: 'read', azp: 'acme-mobile', sub: person }),
      await hs256({ licensee: 'acme', scope: 'read', sub: person }),
    ];
    lines.length = 0;
    for (const token of tokens) {
      const res = await gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(token) },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(res.status).toBe(200);
    }
    const audit = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.component === 'audit');
    expect(audit.map((line) => line.client)).toEqual(['acme-portal', 'acme-mobile', 'jwt']);
    expect(lines.filter((line) => line.includes(person))).toEqual([]);
  });
});

describe('JWT with JWT_JWKS_URL (RS256, ES256)', () => {
  let t: TestGateway;
  let jwks: Server;
  let published: JWK[] = [];
  let fetches = 0;
  const keys: Record<string, { privateKey: CryptoKey; publicKey: CryptoKey }> = {};

  beforeAll(async () => {
    keys.rsa = await generateKeyPair('RS256');
    keys.ec = await generateKeyPair('ES256');
    keys.rotated = await generateKeyPair('RS256');
    published = [
      { ...(await exportJWK(keys.rsa.publicKey)), kid: 'rsa', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(keys.ec.publicKey)), kid: 'ec', alg: 'ES256', use: 'sig' },
    ];
    jwks = createServer((_req, res) => {
      fetches += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
    // No cooldown: a token with a new kid makes the gateway fetch the key set again at once.
    t = await startGateway(
      { rateLimit: false },
      { ...licenseesEnv(), GATEWAY_AUTH: 'jwt', JWT_JWKS_URL: url, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE },
      { gateway: { keySetTiming: { cooldownMs: 0 } } },
    );
  });
  afterAll(async () => {
    await t.close();
    jwks.closeAllConnections();
    await new Promise((resolve) => jwks.close(resolve));
  });
  beforeEach(() => t.clearLog());

  it('accepts RS256 and ES256 tokens, fetching the key set once and keeping it', async () => {
    const rsa = await sign({ licensee: 'acme', scope: 'read' }, keys.rsa!.privateKey, { alg: 'RS256', kid: 'rsa' });
    const ec = await sign({ licensee: 'globex', scope: 'read' }, keys.ec!.privateKey, { alg: 'ES256', kid: 'ec' });
    expect(await t.exec('{ event(eventId: 5001) { eventId } }', undefined, bearer(rsa))).toMatchObject({
      status: 200,
      data: { event: { eventId: 5001 } },
    });
    expect(await t.exec('{ event(eventId: 6001) { eventId } }', undefined, bearer(ec))).toMatchObject({
      status: 200,
      data: { event: { eventId: 6001 } },
    });
    expect(await t.exec('{ event(eventId: 5001) { eventId } }', undefined, bearer(rsa))).toMatchObject({ status: 200 });
    expect(fetches).toBe(1);
  });

  it('fetches the key set again when a token names a key it does not hold (key rotation)', async () => {
    const before = fetches;
    published = [
      ...published,
      { ...(await exportJWK(keys.rotated!.publicKey)), kid: 'rotated', alg: 'RS256', use: 'sig' },
    ];
    const token = await sign({ licensee: 'globex', scope: 'read' }, keys.rotated!.privateKey, {
      alg: 'RS256',
      kid: 'rotated',
    });
    expect(await t.exec('{ event(eventId: 6001) { eventId } }', undefined, bearer(token))).toMatchObject({
      status: 200,
      data: { event: { eventId: 6001 } },
    });
    expect(fetches).toBe(before + 1);
  });

  it('refuses an HS256 token, an expired one, an unknown key, and a token of another audience', async () => {
    const refused = [
      await hs256({ licensee: 'acme', scope: 'read' }),
      await sign({ licensee: 'acme', scope: 'read', exp: now() - 120 }, keys.rsa!.privateKey, {
        alg: 'RS256',
        kid: 'rsa',
      }),
      await sign({ licensee: 'acme', scope: 'read' }, (await generateKeyPair('RS256')).privateKey, {
        alg: 'RS256',
        kid: 'stranger',
      }),
      await sign({ licensee: 'acme', scope: 'read', aud: 'another-service' }, keys.rsa!.privateKey, {
        alg: 'RS256',
        kid: 'rsa',
      }),
    ];
    for (const token of refused) {
      const answer = await t.exec('{ event(eventId: 5001) { eventId } }', undefined, bearer(token));
      expect(answer.status).toBe(401);
      expect(answer.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED' });
    }
    expect(t.emulator.state.log).toEqual([]);
  });
});

// Review fault: a token without kid matched both RS256 keys of a rotating key set; jose's
// JWKSMultipleMatchingKeys fell through to 503 UPSTREAM_UNAVAILABLE, even for an unsigned junk token.
describe('JWT with a key set holding two RS256 keys (rotation) and a token without kid', () => {
  let t: TestGateway;
  let jwks: Server;
  let older: CryptoKeyPair;
  let newer: CryptoKeyPair;

  beforeAll(async () => {
    older = await generateKeyPair('RS256');
    newer = await generateKeyPair('RS256');
    const published = [
      { ...(await exportJWK(older.publicKey)), kid: 'older', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(newer.publicKey)), kid: 'newer', alg: 'RS256', use: 'sig' },
    ];
    jwks = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
    t = await startGateway(
      { rateLimit: false },
      { ...licenseesEnv(), GATEWAY_AUTH: 'jwt', JWT_JWKS_URL: url, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE },
    );
  });
  afterAll(async () => {
    await t.close();
    jwks.closeAllConnections();
    await new Promise((resolve) => jwks.close(resolve));
  });
  beforeEach(() => t.clearLog());

  it('accepts a token signed with either key', async () => {
    for (const pair of [older, newer]) {
      const token = await sign({ licensee: 'acme', scope: 'read' }, pair.privateKey, { alg: 'RS256' });
      expect(await t.exec('{ event(eventId: 5001) { eventId } }', undefined, bearer(token))).toMatchObject({
        status: 200,
        data: { event: { eventId: 5001 } },
      });
    }
  });

  it.each([
    ['an unsigned junk token', async () => 'eyJhbGciOiJSUzI1NiJ9.e30.AAAA'],
    [
      'a token signed with a key not in the set',
      async () =>
        sign({ licensee: 'acme', scope: 'read' }, (await generateKeyPair('RS256')).privateKey, { alg: 'RS256' }),
    ],
  ])('refuses %s with 401 UNAUTHENTICATED, not 503', async (_case, token) => {
    const answer = await t.exec('{ event(eventId: 5001) { eventId } }', undefined, bearer(await token()));
    expect(answer.status).toBe(401);
    expect(answer.errors).toEqual([
      { message: expect.stringMatching(/signature does not verify/), extensions: { code: 'UNAUTHENTICATED' } },
    ]);
    expect(t.emulator.state.log).toEqual([]);
  });
});

describe('JWT with a key set out of reach', () => {
  it('answers 503 UPSTREAM_UNAVAILABLE, not 401: the client did nothing wrong', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/jwks.json`;
    await new Promise((resolve) => closed.close(resolve));
    const t = await startGateway(
      { rateLimit: false },
      { ...licenseesEnv(), GATEWAY_AUTH: 'jwt', JWT_JWKS_URL: url, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE },
    );
    try {
      const { privateKey } = await generateKeyPair('RS256');
      const answer = await t.exec(
        '{ event(eventId: 5001) { eventId } }',
        undefined,
        bearer(await sign({ licensee: 'acme', scope: 'read' }, privateKey, { alg: 'RS256', kid: 'k' })),
      );
      expect(answer.status).toBe(503);
      expect(answer.errors).toEqual([
        { message: expect.stringContaining('JWT_JWKS_URL'), extensions: { code: 'UPSTREAM_UNAVAILABLE' } },
      ]);
      expect(t.emulator.state.log).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
