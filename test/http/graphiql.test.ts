import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preferredEncoding } from '../../src/http/graphiql.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * Fault: GraphiQL was always on, 9 MB uncompressed, with no Content-Security-Policy,
 * frame-ancestors or X-Content-Type-Options, and took a `?query=` prefill a page of another site
 * could frame (clickjacking). Now GRAPHIQL turns it on or off (on by default on loopback only), its
 * page may run only its own script and may not be framed, every answer carries nosniff and
 * no-referrer, and the page is compressed. (That the page still works under its policy:
 * test/e2e/graphiql.test.ts, in Chromium.)
 */
let on: TestGateway;
let off: TestGateway;
beforeAll(async () => {
  on = await startGateway({ rateLimit: false });
  off = await startGateway({ rateLimit: false }, { GRAPHIQL: 'off' });
});
afterAll(async () => {
  await on?.close();
  await off?.close();
});

const page = (gateway: TestGateway, headers: Record<string, string> = {}, search = '') =>
  gateway.gateway.yoga.fetch(`http://yoga/graphql${search}`, {
    headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', ...headers },
  });

describe('the GraphiQL page', () => {
  it('is sent compressed, with a policy that runs its own script only and lets no site frame it', async () => {
    const res = await page(on, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-encoding')).toBe('br');
    expect(res.headers.get('vary')).toBe('Accept-Encoding');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const compressed = Buffer.from(await res.arrayBuffer());
    const html = brotliDecompressSync(compressed).toString('utf8');
    expect(compressed.length).toBeLessThan(html.length / 3);
    expect(html).toContain('<title>Reservation gateway</title>');

    const policy = Object.fromEntries(
      res.headers
        .get('content-security-policy')!
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    expect(policy['frame-ancestors']).toEqual(["'none'"]);
    expect(policy['default-src']).toEqual(["'none'"]);
    expect(policy['connect-src']).toEqual(["'self'"]);
    // The one inline script, by its hash: no 'unsafe-inline', no 'unsafe-eval', nothing from elsewhere.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
      (match) => `'sha256-${createHash('sha256').update(match[1]!, 'utf8').digest('base64')}'`,
    );
    expect(scripts).toHaveLength(1);
    expect(policy['script-src']).toEqual(scripts);
  });

  it('is gzip for a client that takes only gzip, and plain for one that takes neither', async () => {
    const gzip = await page(on, { 'accept-encoding': 'br;q=0, gzip' });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).toString('utf8')).toContain(
      '<title>Reservation gateway</title>',
    );
    const plain = await page(on, { 'accept-encoding': 'identity' });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toContain('<title>Reservation gateway</title>');
  });

  it('prefilled from ?query=, is the same page under the same policy: no other site can frame it to have it run', async () => {
    const res = await page(
      on,
      {},
      `?query=${encodeURIComponent('mutation { cancelReservation(reservationNumber: 1) { status } }')}`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('with GRAPHIQL=off, is not served: a browser is told so, and a query in the URL is a GraphQL request as any other', async () => {
    const res = await page(off);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toContain('GraphiQL is off on this gateway (GRAPHIQL=off)');
    const query = await page(off, { 'graphql-preflight': '1' }, '?query=%7B__typename%7D');
    expect(query.headers.get('content-type') ?? '').not.toContain('text/html');
  });
});

describe('every answer', () => {
  it('carries nosniff and no-referrer, refusals included', async () => {
    const answers = [
      await on.gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      }),
      await on.gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ nope }"}',
      }),
      await on.gateway.yoga.fetch('http://yoga/health'),
      await on.gateway.yoga.fetch('http://yoga/metrics'),
      await on.gateway.yoga.fetch('http://yoga/nowhere'),
      // The operators' port too: its pages, a refusal and what it does not serve.
      await on.gateway.operators.fetch('http://yoga/metrics', {}, { req: { socket: { remoteAddress: '127.0.0.1' } } }),
      await on.gateway.operators.fetch('http://yoga/metrics', {}, { req: { socket: { remoteAddress: '10.0.0.2' } } }),
      await on.gateway.operators.fetch('http://yoga/graphql'),
    ];
    for (const res of answers) {
      expect(res.headers.get('x-content-type-options'), res.url).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), res.url).toBe('no-referrer');
    }
  });

  it('in HTML carries a strict policy: the status page runs its own script and style by their hashes', async () => {
    const res = await on.gateway.operators.fetch(
      'http://yoga/status',
      {},
      { req: { socket: { remoteAddress: '127.0.0.1' } } },
    );
    expect(res.status).toBe(200);
    const policy = res.headers.get('content-security-policy')!;
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(policy).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(policy).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('preferredEncoding', () => {
  it('takes br, then gzip, as Accept-Encoding allows', () => {
    expect(preferredEncoding('gzip, deflate, br')).toBe('br');
    expect(preferredEncoding('gzip;q=1.0, br;q=0')).toBe('gzip');
    expect(preferredEncoding('*')).toBe('br');
    expect(preferredEncoding('*, br;q=0')).toBe('gzip');
    expect(preferredEncoding('deflate')).toBeUndefined();
    expect(preferredEncoding(null)).toBeUndefined();
  });
});
