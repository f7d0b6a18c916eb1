import { createRequire } from 'node:module';
import type * as EnvelopOpenTelemetry from '@envelop/opentelemetry';
import type * as Api from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
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
  // Loaded only when tracing is on: the OTLP exporter brings the metrics SDK and protobufjs, some
  // 7 MiB of heap and 200 modules that a gateway without OTEL_EXPORTER_OTLP_ENDPOINT never uses.
  // One module system for all of them (CommonJS), so they share one copy of @opentelemetry/api.
  const require = createRequire(import.meta.url);
  const { useOpenTelemetry } = require('@envelop/opentelemetry') as typeof EnvelopOpenTelemetry;
  const api = require('@opentelemetry/api') as typeof Api;
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;
  const { Resource } = require('@opentelemetry/resources') as typeof Resources;
  const { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase;
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
    observer: { attempt: (event) => recordAttempt(api, tracer, event) },
    shutdown: () => provider.shutdown(),
  };
}

/** One upstream request as a client span: endpoint, version, status and attempt; never parameters or the token. */
function recordAttempt(api: typeof Api, tracer: Api.Tracer, event: AttemptEvent): void {
  const { context, SpanKind, SpanStatusCode } = api;
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
