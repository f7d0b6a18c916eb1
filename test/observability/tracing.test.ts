import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/*
 * OpenTelemetry traces (here into the in-memory exporter): a span per operation and per
 * upstream request, with endpoint, version, status and attempt, and nothing secret or personal.
 */
const exporter = new InMemorySpanExporter();
let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, {}, { gateway: { spanExporter: exporter } });
});
afterAll(() => t.close());

describe('traces', () => {
  it('has a span per operation and one per upstream request, without token, key or personal data', async () => {
    const res = await t.exec(
      'query Contacts { event(eventId: 5002) { name reservations(first: 2, filter: { contactEmail: "someone@example.com" }) { edges { node { contact { email } } } } } }',
    );
    expect(res.errors).toBeUndefined();
    const spans = exporter.getFinishedSpans();
    const operation = spans.filter((span) => span.name === 'query.Contacts');
    expect(operation).toHaveLength(1);
    expect(operation[0]!.attributes).toMatchObject({
      'graphql.execute.operationName': 'Contacts',
      'graphql.execute.operationType': 'query',
    });

    const upstream = spans.filter((span) => span.name.startsWith('upstream '));
    expect(upstream.map((span) => span.attributes['upstream.endpoint']).sort()).toEqual(
      t.emulator.state.log.map((entry) => entry.endpoint).sort(),
    );
    expect(upstream.find((span) => span.name === 'upstream getevent')?.attributes).toEqual({
      'upstream.endpoint': 'getevent',
      'upstream.version': 'v102',
      'upstream.attempt': 1,
      'upstream.licensee': '1001',
      'http.response.status_code': 200,
    });

    const everything = JSON.stringify(
      spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })),
    );
    const token = await t.gateway.upstream.tokens.get({
      systemIdentifier: '1001',
      key: 'demo-key-1001',
      timeZone: 'UTC',
    });
    expect(everything).not.toContain(token);
    expect(everything).not.toContain('demo-key-1001');
    expect(everything).not.toContain('example.com');
  });

  it('is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const { createTracing } = await import('../../src/observability/tracing.ts');
    expect(createTracing(undefined)).toBeUndefined();
    const on = createTracing('http://127.0.0.1:4318');
    expect(on).toBeDefined();
    await on?.shutdown();
  });
});
