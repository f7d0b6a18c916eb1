import { useOpenTelemetry } from '@envelop/opentelemetry';
import { context, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Plugin } from 'graphql-yoga';
import type { AttemptEvent, UpstreamObserver } from '../upstream/observer.ts';
import { isFailedAttempt } from './metrics/gateway-metrics.ts';

/** Traces of the gateway: a span per GraphQL operation and per upstream request. */
export interface Tracing {
  plugin: Plugin;
  observer: UpstreamObserver;
  shutdown(): Promise<void>;
}

/**
 * Tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set (OTLP over HTTP to `<endpoint>/v1/traces`), or
 * into `exporter` (tests use the in-memory one); undefined otherwise: no tracing at all. The
 * provider is the gateway's own, not registered globally, so two gateways in a process do not mix.
 */
export function createTracing(endpoint: string | undefined, exporter?: SpanExporter): Tracing | undefined {
  if (!endpoint && !exporter) return undefined;
  const processor = exporter
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint!.replace(/\/$/, '')}/v1/traces` }));
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': 'reservation-gateway' }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('reservation-gateway');
  return {
    // Neither the document (inline arguments may hold an email) nor variables nor results: names and types only.
    plugin: useOpenTelemetry(
      { document: false, variables: false, result: false, resolvers: false },
      provider,
    ) as Plugin,
    observer: { attempt: (event) => recordAttempt(tracer, event) },
    shutdown: () => provider.shutdown(),
  };
}

/** One upstream request as a client span: endpoint, version, status and attempt; never parameters or the token. */
function recordAttempt(tracer: Tracer, event: AttemptEvent): void {
  const span = tracer.startSpan(
    `upstream ${event.endpoint}`,
    {
      kind: SpanKind.CLIENT,
      startTime: event.startedAt,
      attributes: {
        'upstream.endpoint': event.endpoint,
        'upstream.version': event.version,
        'upstream.attempt': event.attempt,
        'upstream.licensee': event.licensee,
        ...(typeof event.status === 'number'
          ? { 'http.response.status_code': event.status }
          : { 'error.type': event.status }),
      },
    },
    context.active(),
  );
  if (isFailedAttempt(event.status)) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(event.startedAt + event.durationMs);
}
