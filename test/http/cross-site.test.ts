import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * The HTTP surface as a browser or a careless client meets it. (The graphql-http package and its
 * serverAudits are not installed here, so the CSRF rules are tested directly.)
 */

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' });
});
afterAll(() => t.close());
beforeEach(() => t.clearLog());

const send = (path: string, init: RequestInit = {}) => t.gateway.yoga.fetch(`http://yoga${path}`, init);
const errorsOf = async (res: Response) =>
  ((await res.json()) as { errors?: { message: string; extensions?: Record<string, unknown> }[] }).errors ?? [];
const createField =
  'mutation { createCustomField(input: { name: "Planted by another site" }) { customField { customFieldId } } }';
const form = (params: Record<string, string>) => new URLSearchParams(params).toString();

// Fault: Yoga's defaults ran form and multipart POSTs and plain GETs from any page of any site.
describe('cross-site request forgery', () => {
  it('refuses a form POST without a preflight header with 403, and nothing runs', async () => {
    const res = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ query: createField }),
    });
    expect(res.status).toBe(403);
    expect((await errorsOf(res))[0]!.message).toContain('GraphQL-Preflight');
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('refuses a multipart or text/plain POST and a GET without one', async () => {
    const multipart = new FormData();
    multipart.set('operations', JSON.stringify({ query: createField }));
    multipart.set('map', '{}');
    const answers = [
      await send('/graphql', { method: 'POST', body: multipart }),
      await send('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ query: createField }),
      }),
      await send(`/graphql?${form({ query: '{ event(eventId: 5001) { name } }' })}`, {
        headers: { accept: 'application/json' },
      }),
      // An empty header says nothing.
      await send(`/graphql?${form({ query: '{ event(eventId: 5001) { name } }' })}`, {
        headers: { accept: 'application/json', 'graphql-preflight': '' },
      }),
    ];
    expect(answers.map((res) => res.status)).toEqual([403, 403, 403, 403]);
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it.each(['GraphQL-Preflight', 'X-GraphQL-Yoga-CSRF', 'Apollo-Require-Preflight'])(
    'runs a GET or a form POST carrying %s',
    async (header) => {
      const get = await send(`/graphql?${form({ query: '{ event(eventId: 5001) { name } }' })}`, {
        headers: { accept: 'application/json', [header]: '1' },
      });
      expect(get.status).toBe(200);
      expect(await get.json()).toMatchObject({ data: { event: { name: expect.any(String) } } });
      const post = await send('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', [header]: '1' },
        body: form({ query: '{ event(eventId: 5001) { eventId } }' }),
      });
      expect(await post.json()).toEqual({ data: { event: { eventId: 5001 } } });
    },
  );

  it('runs a JSON POST without one (a browser preflights it)', async () => {
    const res = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ event(eventId: 5001) { eventId } }' }),
    });
    expect(await res.json()).toEqual({ data: { event: { eventId: 5001 } } });
  });

  it('still serves GraphiQL to a browser', async () => {
    const res = await send('/graphql', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
  });
});

// Fault: Yoga echoed any Origin with credentials allowed, so any site could read the answers.
describe('CORS from CORS_ORIGINS only', () => {
  const json = (origin: string) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ query: '{ __typename }' }),
  });

  it('allows a listed origin, without credentials', async () => {
    const res = await send('/graphql', json('https://admin.example.com'));
    expect(res.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    // The page can read the request id the audit trail logged (X-Request-Id).
    expect(res.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-request-id');
    const preflight = await send('/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });

  it('gives any other origin no CORS headers', async () => {
    const res = await send('/graphql', json('https://evil.example'));
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await send('/graphql', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows no other site by default; on a loopback HOST, pages on localhost and 127.0.0.1 at any port (local development)', async () => {
    const local = await startGateway();
    try {
      const res = await local.gateway.yoga.fetch('http://yoga/graphql', json('https://app.example.com'));
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      for (const origin of ['http://localhost:3000', 'http://127.0.0.1:5173', 'http://localhost']) {
        const preflight = await local.gateway.yoga.fetch('http://yoga/graphql', {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
          },
        });
        expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
        expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      }
      for (const origin of [
        'http://localhost.evil.example:3000',
        'https://localhost:3000',
        'http://192.168.1.5:3000',
      ]) {
        const refused = await local.gateway.yoga.fetch('http://yoga/graphql', json(origin));
        expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      }
    } finally {
      await local.close();
    }
  });

  it('on a public HOST, or with CORS_ORIGINS set, local pages only through CORS_ORIGINS', async () => {
    const local = json('http://localhost:3000');
    const publicHost = await startGateway(
      { rateLimit: false },
      { HOST: '0.0.0.0', GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: 'yes', ALLOWED_HOSTS: 'yoga' },
    );
    try {
      expect(
        (await publicHost.gateway.yoga.fetch('http://yoga/graphql', local)).headers.get('access-control-allow-origin'),
      ).toBeNull();
    } finally {
      await publicHost.close();
    }
    expect((await send('/graphql', local)).headers.get('access-control-allow-origin')).toBeNull();
  });
});

// Fault: malformed JSON in a query string or form body answered 200 INTERNAL_SERVER_ERROR.
describe('malformed variables or extensions', () => {
  const preflight = { 'graphql-preflight': '1', accept: 'application/json' };

  it.each(['variables', 'extensions'])('a GET with %s that are not JSON is a 400 naming them', async (name) => {
    const res = await send(`/graphql?query={__typename}&${name}={`, { headers: preflight });
    expect(res.status).toBe(400);
    const [error] = await errorsOf(res);
    expect(error!.message).toContain(`The ${name} parameter is not valid JSON`);
    expect(error!.extensions?.code).toBe('BAD_REQUEST');
  });

  it('so is a form body', async () => {
    const res = await send('/graphql', {
      method: 'POST',
      headers: { ...preflight, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'query={ event(eventId: 5001) { name } }&variables={',
    });
    expect(res.status).toBe(400);
    expect((await errorsOf(res))[0]!.message).toContain('The variables parameter is not valid JSON');
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });
});

// Fault: Yoga's 415 and 406 answers had an empty body.
describe('415 and 406 say what to send', () => {
  it('415 for a POST with no or a text/plain content type names application/json', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    // A string body gets text/plain from fetch; bytes get no content type at all.
    const requests: RequestInit[] = [
      { method: 'POST', headers: { 'graphql-preflight': '1' }, body: new TextEncoder().encode(body) },
      { method: 'POST', headers: { 'graphql-preflight': '1', 'content-type': 'text/plain' }, body },
    ];
    for (const request of requests) {
      const res = await send('/graphql', request);
      expect(res.status).toBe(415);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect((await errorsOf(res))[0]!.message).toContain('Content-Type: application/json');
    }
  });

  it('406 for an Accept the gateway cannot serve names the types it can', async () => {
    const res = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/xml' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.status).toBe(406);
    const [error] = await errorsOf(res);
    expect(error!.message).toMatch(
      /Accept header must allow one of .*application\/graphql-response\+json.*application\/json/,
    );
  });
});
