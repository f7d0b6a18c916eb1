import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { labelledOperationNames } from '../../src/observability/metrics/plugin.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { operationCounts, samples } from '../helpers/metrics.ts';
import { control } from '../helpers/upstream.ts';

/*
 * /metrics in Prometheus' text format, on the operators' port (OPS_PORT). After a known set of operations, the upstream
 * request counts it shows equal the emulator's log; nothing secret or personal is in it.
 */
const OPS_TOKEN = 'operators-token-0123456789abcdef';
let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { OPS_TOKEN, OPERATION_NAMES: 'EventName,Hotels,Reservations,Bad' });
});
afterAll(() => t.close());

async function scrape(gateway = t): Promise<{ status: number; type: string | null; text: string }> {
  const res = await gateway.gateway.operators.fetch('http://yoga/metrics', {
    headers: { authorization: `Bearer ${OPS_TOKEN}` },
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('/metrics', () => {
  it('counts upstream requests by endpoint exactly as the emulator logged them, and the operations by name and outcome', async () => {
    await t.exec('query EventName { event(eventId: 5002) { name } }');
    await t.exec('query EventName { event(eventId: 5002) { name } }'); // cached: no request
    await t.exec('query Hotels { event(eventId: 5003) { hotels { hotelId name } } }');
    await t.exec(
      'query Reservations { event(eventId: 5002) { reservations(first: 3) { edges { node { reservationNumber } } } } }',
    );
    const refused = await t.exec(
      'query Bad { event(eventId: 5002) { reservations(after: "garbage!") { totalCount } } }',
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    const { status, type, text } = await scrape();
    expect(status).toBe(200);
    expect(type).toContain('text/plain');
    const logged = new Map<string, number>();
    for (const entry of t.emulator.state.log) logged.set(entry.endpoint, (logged.get(entry.endpoint) ?? 0) + 1);
    const counted = new Map<string, number>();
    for (const { labels, value } of samples(text, 'gateway_upstream_requests_total')) {
      expect(labels).toMatchObject({ licensee: '1001', status: '200' });
      counted.set(labels.endpoint!, (counted.get(labels.endpoint!) ?? 0) + value);
    }
    expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(logged));
    expect(counted.get('authenticate')).toBe(1);

    const operations = operationCounts(samples(text, 'gateway_graphql_operations_total'));
    expect(operations).toEqual(
      expect.arrayContaining([
        ['EventName', 'query', 'ok', 2],
        ['Hotels', 'query', 'ok', 1],
        ['Bad', 'query', 'BAD_USER_INPUT', 1],
      ]),
    );
    expect(samples(text, 'gateway_refusals_total')).toEqual([{ labels: { code: 'BAD_USER_INPUT' }, value: 1 }]);
    const cache = Object.fromEntries(
      samples(text, 'gateway_upstream_cache_reads_total')
        .filter(({ labels }) => labels.endpoint === 'getevent')
        .map(({ labels, value }) => [labels.result, value]),
    );
    // Misses are the requests sent; the second EventName (at least) is a hit.
    expect(cache.miss).toBe(logged.get('getevent'));
    expect(cache.hit).toBeGreaterThanOrEqual(1);
    expect(samples(text, 'gateway_upstream_authenticates_total')).toEqual([
      { labels: { licensee: '1001', status: '200' }, value: 1 },
    ]);
    expect(samples(text, 'gateway_upstream_budget_limit')).toEqual([{ labels: { licensee: '1001' }, value: 228 }]);
    expect(samples(text, 'gateway_upstream_queue_length')).toEqual([{ labels: { licensee: '1001' }, value: 0 }]);
    expect(samples(text, 'gateway_upstream_request_duration_seconds_count').length).toBeGreaterThan(0);
    // The five operations above (the refused one is still a 200 over application/json).
    expect(samples(text, 'gateway_http_responses_total').find(({ labels }) => labels.path === '/graphql')).toEqual({
      labels: { path: '/graphql', status: '200' },
      value: 5,
    });
    expect(samples(text, 'gateway_upstream_breaker_open')).toEqual([{ labels: {}, value: 0 }]);
    expect(samples(text, 'gateway_upstream_token_failures_total')).toEqual([]);
    expect(samples(text, 'gateway_event_loop_delay_seconds').map(({ labels }) => labels.quantile)).toEqual([
      '0.5',
      '0.99',
      '1',
    ]);
    for (const { value } of samples(text, 'gateway_event_loop_delay_seconds')) expect(value).toBeGreaterThanOrEqual(0);
    for (const name of [
      'gateway_upstream_budget_used',
      'gateway_upstream_token_age_seconds',
      'gateway_change_pollers',
      'gateway_change_subscribers',
      'gateway_graphql_operation_duration_seconds_count',
    ]) {
      expect(samples(text, name).length, name).toBeGreaterThan(0);
    }
  });

  it('carries no key, token or personal data', async () => {
    const read = await t.exec(
      '{ event(eventId: 5002) { reservations(first: 2) { edges { node { contact { email lastName } } } } } }',
    );
    expect(read.errors).toBeUndefined();
    const { text } = await scrape();
    const token = await t.gateway.upstream.tokens.get({
      systemIdentifier: '1001',
      key: 'demo-key-1001',
      timeZone: 'UTC',
    });
    expect(text).not.toContain('demo-key-1001');
    expect(text).not.toContain(token);
    expect(text).not.toMatch(/@|email|lastName/);
  });
});

describe('operation names as labels', () => {
  it('counts a name neither in OPERATION_NAMES nor in the trusted documents as `other`, and one without a name as `anonymous`', async () => {
    await t.exec('query EventName { event(eventId: 5001) { name } }');
    for (let i = 0; i < 3; i++) await t.exec(`query Chosen${i}ByAClient { event(eventId: 5001) { name } }`);
    await t.exec('{ event(eventId: 5001) { name } }');
    const { text } = await scrape();
    const names = new Set(samples(text, 'gateway_graphql_operations_total').map(({ labels }) => labels.operation));
    expect(names).toContain('EventName');
    expect(names).toContain('other');
    expect(names).toContain('anonymous');
    expect([...names].filter((name) => name!.startsWith('Chosen'))).toEqual([]);
    const other = samples(text, 'gateway_graphql_operations_total').filter(
      ({ labels }) => labels.operation === 'other',
    );
    expect(other.reduce((sum, { value }) => sum + value, 0)).toBe(3);
  });

  it('labels the operations of the trusted documents by their names', async () => {
    const event = 'query TrustedEvent { event(eventId: 5001) { name } }';
    const hex = createHash('sha256').update(event, 'utf8').digest('hex');
    const path = join(mkdtempSync(join(tmpdir(), 'trusted-')), 'persisted-documents.json');
    writeFileSync(path, JSON.stringify({ [`sha256:${hex}`]: event }));
    const trusted = await startGateway({ rateLimit: false }, { OPS_TOKEN, TRUSTED_DOCUMENTS_FILE: path });
    try {
      const res = await trusted.gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ documentId: `sha256:${hex}` }),
      });
      expect(res.status).toBe(200);
      const { text } = await scrape(trusted);
      expect(samples(text, 'gateway_graphql_operations_total').map(({ labels }) => labels.operation)).toEqual([
        'TrustedEvent',
      ]);
    } finally {
      await trusted.close();
    }
    expect(
      labelledOperationNames(['Listed'], ['query A { x } mutation B { y }', 'subscription C { z } { w }']),
    ).toEqual(new Set(['Listed', 'A', 'B', 'C']));
  });
});

/** What the alert rules in deploy/prometheus/alerts.yaml watch: token failures, the breaker and 5xx answers. */
describe('/metrics when the service fails', () => {
  it('counts an authenticate that ends without a token, and HTTP responses by path and status (the 503 of /ready apart from /graphql)', async () => {
    const wrong = await startGateway(
      { rateLimit: false },
      { OPS_TOKEN, UPSTREAM_KEY: 'wrong-secret-key', UPSTREAM_SYSTEM_IDENTIFIER: '1001' },
    );
    try {
      const answer = await wrong.exec('{ event(eventId: 5002) { name } }');
      expect(answer.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
      expect((await wrong.gateway.yoga.fetch('http://yoga/ready')).status).toBe(503);
      // The query's authenticate, and readiness' own probe (which /ready may answer before it ends): each ended without a token.
      await vi.waitFor(async () => {
        const failures = samples((await scrape(wrong)).text, 'gateway_upstream_token_failures_total');
        expect(failures).toEqual([{ labels: { licensee: '1001' }, value: wrong.count('authenticate') }]);
      });
      expect(wrong.count('authenticate')).toBeGreaterThanOrEqual(2);
      const { text } = await scrape(wrong);
      expect(samples(text, 'gateway_http_responses_total').filter(({ labels }) => labels.status !== '200')).toEqual([
        { labels: { path: '/ready', status: '503' }, value: 1 },
      ]);
      const unknown = await wrong.gateway.yoga.fetch('http://yoga/no/such/path?x=1');
      const after = samples((await scrape(wrong)).text, 'gateway_http_responses_total');
      expect(after.find(({ labels }) => labels.path === 'other')).toEqual({
        labels: { path: 'other', status: String(unknown.status) },
        value: 1,
      });
      expect(text).not.toContain('wrong-secret-key');
    } finally {
      await wrong.close();
    }
  });

  it('reads 0 for the breaker while the service answers, 1 once enough calls have failed', async () => {
    const failing = await startGateway({ rateLimit: false }, { OPS_TOKEN, UPSTREAM_DEADLINE_MS: '2000' });
    try {
      expect((await failing.exec('{ event(eventId: 5001) { name } }')).errors).toBeUndefined();
      await control(failing.emulator, 'faults', { rules: [{ endpoint: '*', errorRate: 1, errorStatus: 503 }] });
      const breakerOpen = async () => samples((await scrape(failing)).text, 'gateway_upstream_breaker_open')[0]?.value;
      expect(await breakerOpen()).toBe(0);
      for (let i = 0; i < 20 && (await breakerOpen()) === 0; i++) {
        const answer = await failing.exec(`{ event(eventId: ${5002 + i}) { name } }`);
        expect(answer.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      }
      expect(await breakerOpen()).toBe(1);
    } finally {
      await failing.close();
    }
  }, 60_000);
});
