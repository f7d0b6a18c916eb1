import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { GraphQLError } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { Logger } from 'pino';
import { OperationRecords, useAuditResult, useAuditTrail } from './audit.ts';
import { authenticatorFor } from './auth/authenticator.ts';
import { createFeedRegistry } from './changes/gateway-feeds.ts';
import type { FeedRegistry } from './changes/registry.ts';
import type { KeySetTiming } from './auth/jwt.ts';
import { RequestPrincipals, useAuthentication } from './auth/plugin.ts';
import type { Principal } from './auth/principal.ts';
import { useScopes } from './auth/scopes.ts';
import type { Config } from './config.ts';
import { corsFor, useCsrfPrevention } from './cross-site.ts';
import { useReadableHttpErrors } from './http-errors.ts';
import { GatewayMetrics } from './metrics/gateway-metrics.ts';
import { useMetrics } from './metrics/plugin.ts';
import { BudgetHistory } from './status/budget-history.ts';
import { useStatusPage } from './status/plugin.ts';
import { useCompiledExecution } from './jit.ts';
import { useLargeResultBulkhead } from './bulkhead.ts';
import { yogaLogging } from './logger.ts';
import { useQueryLimits } from './query-limits.ts';
import { useGatewayResponseCache } from './response-cache/plugin.ts';
import type { CachedType } from './response-cache/ttls.ts';
import { RedisFanout } from './upstream/stores/redis-fanout.ts';
import { createContext, type GatewayContext } from './resolvers/context.ts';
import { schema } from './schema/index.ts';
import { createTracing } from './tracing.ts';
import { useTrustedDocuments } from './trusted-documents.ts';
import { UpstreamClient } from './upstream/client.ts';
import { UpstreamError } from './upstream/errors.ts';
import { observeAll } from './upstream/observer.ts';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TenantLicensee } from './licensees.ts';
import type { RedisConnection } from './redis.ts';
import type { SharedStores } from './upstream/stores/redis-stores.ts';
import { serveWebSockets, type WebSocketTransport } from './websocket.ts';

/** The query GraphiQL opens on; also a typed test operation (codegen reads the same file). */
export const EXAMPLE_QUERY = readFileSync(new URL('./graphiql-example.graphql', import.meta.url), 'utf8');

export interface Gateway {
  yoga: ReturnType<typeof createYoga<Record<string, unknown>, GatewayContext>>;
  upstream: UpstreamClient;
  /** What /metrics serves (and the status page shows). */
  metrics: GatewayMetrics;
  /** The change feeds of `reservationChanged`. */
  changeFeeds: FeedRegistry;
  /** Serves graphql-ws subscriptions at /graphql on the server that listens for `yoga`. */
  acceptWebSockets(server: Server): WebSocketTransport;
  /** Forgets every cached answer (RESPONSE_CACHE); nothing to do when the cache is off. */
  clearResponseCache(): void;
  close(): Promise<void>;
}

/**
 * Builds the gateway (Yoga, schema, upstream client) without listening: main.ts listens, tests
 * call `yoga.fetch`. `config.upstreamBaseUrl` must be set (main.ts starts the emulator when not).
 */
export function createGateway(
  config: Config & { upstreamBaseUrl: string },
  logger?: Logger,
  options: { keySetTiming?: KeySetTiming; spanExporter?: SpanExporter; shared?: { redis: RedisConnection; stores: SharedStores } } = {},
): Gateway {
  const { shared } = options;
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test hands an exporter).
  const tracing = createTracing(config.otlpEndpoint, options.spanExporter);
  const upstreamIds = config.licensees.map((licensee) => licensee.upstream.id);
  // The gauges read the budget and the feeds when /metrics is scraped.
  const metrics: GatewayMetrics = new GatewayMetrics({
    licensees: upstreamIds,
    budgetUsed: (licensee) => upstream.budget.used(licensee),
    budgetLimit: (licensee) => upstream.budget.effectiveLimitOf(licensee),
    queueLength: (licensee) => upstream.budget.waiting(licensee),
    feeds: () => changeFeeds.active(),
  });
  const upstream: UpstreamClient = new UpstreamClient({
    baseUrl: config.upstreamBaseUrl,
    ...config.upstream,
    ...(shared ? { stores: shared.stores } : {}),
    logger: logger?.child({ component: 'upstream' }),
    observer: observeAll([metrics, tracing?.observer]),
  });
  const licensees = new Map(config.licensees.map((licensee) => [licensee.id, licensee]));
  const principals = new RequestPrincipals();
  const operations = new OperationRecords();
  const authenticate = authenticatorFor(config.auth, config.licensees, options.keySetTiming);
  // Where resolvers report records they skip (positions only, never the record's content).
  const resolverLog = logger?.child({ component: 'resolvers' });
  const budgetHistory = new BudgetHistory(upstreamIds, (licensee) => upstream.budget.used(licensee), { everyMs: 10_000 });
  budgetHistory.start();
  const changeFeeds = createFeedRegistry(upstream, { intervalMs: config.changesPollIntervalMs, logger: logger?.child({ component: 'changes' }), ...(shared ? { redis: shared.redis } : {}) });
  // Replicas drop each other's answers of what a mutation changed: each keeps its own response cache.
  const invalidations = shared && new RedisFanout<{ licensee: string; types: CachedType[] }>(shared.redis, 'response-cache-invalidations');
  const responseCache = config.responseCache.enabled
    ? useGatewayResponseCache({ ttls: config.responseCache.ttls, ...(invalidations ? { onInvalidated: (licensee, types) => invalidations.publish({ licensee, types }) } : {}) })
    : undefined;
  const unsubscribe = invalidations && responseCache && invalidations.subscribe(({ licensee, types }) => responseCache.invalidate(licensee, types));
  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    // The request acts for its principal's licensee: its token, budget, cache and loaders only.
    context: ({ request }) => {
      const principal = principals.of(request);
      const operation = operations.of(request);
      return { ...createContext(principal, licensees.get(principal.licenseeId)!.upstream, upstream, resolverLog, () => void operation.upstreamCalls++), changeFeeds };
    },
    maskedErrors: { maskError: (error) => maskError(error, logger) },
    graphiql: { title: 'Reservation gateway', defaultQuery: EXAMPLE_QUERY, ...graphiqlCredentialHint(config.auth.mode) },
    // The GraphiQL page (a bundle of ~48 MiB in memory once loaded) is imported when a browser first asks for it.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    logging: logger ? yogaLogging(logger) : false,
    cors: corsFor(config.corsOrigins),
    // GraphQL over HTTP's persisted documents name the document in a body parameter of their own.
    ...(config.trustedDocuments ? { extraParamNames: ['documentId'] } : {}),
    plugins: [
      // First: the refusals of the plugins after it (401, 403, limits) are audited and carry the request id.
      useAuditTrail(operations, { logger: logger?.child({ component: 'audit' }), principalOf: (request) => authenticated(principals, request) }),
      useReadiness(upstream, config.licensees, shared),
      useMetrics(metrics),
      ...(tracing ? [tracing.plugin] : []),
      useStatusPage(metrics, upstreamIds, budgetHistory),
      useAuthentication(authenticate, principals),
      useScopes((context) => (context as GatewayContext).principal),
      useCsrfPrevention(),
      useReadableHttpErrors(),
      // @defer and @stream (issue 10): a long list's edges arrive page by page (resolvers/streamed-window.ts).
      useDeferStream(),
      ...useQueryLimits(config.queryLimits, config.maxUpstreamCallsPerOperation),
      ...(config.trustedDocuments ? [useTrustedDocuments(config.trustedDocuments)] : []),
      // The executor first: the response cache wraps whichever runs (it adds __typename to the
      // document and reads the result's entities), so it must not be replaced after it.
      ...(config.graphqlJit ? useCompiledExecution() : []),
      // After every check above: a cached answer is served only to a request that passed them all.
      ...(responseCache?.plugins ?? []),
      // Outermost around execution: a large operation waits for its turn before it runs.
      useLargeResultBulkhead(),
      // Last: the audit line's error codes are the ones the client receives, after every plugin above set them.
      useAuditResult(operations),
    ],
  });
  return {
    yoga,
    upstream,
    metrics,
    changeFeeds,
    clearResponseCache: () => responseCache?.clear(),
    acceptWebSockets: (server) => serveWebSockets(server, { yoga }, { authenticate, principals, corsOrigins: config.corsOrigins }),
    close: async () => {
      budgetHistory.stop();
      await changeFeeds.close();
      await (await unsubscribe)?.();
      shared?.stores.close();
      await upstream.close();
      await tracing?.shutdown();
    },
  };
}

/** The request's principal, or undefined for a request the authentication refused (or never saw). */
function authenticated(principals: RequestPrincipals, request: Request): Principal | undefined {
  try {
    return principals.of(request);
  } catch {
    return undefined;
  }
}

/**
 * With client authentication on, GraphiQL opens its headers pane with a placeholder credential to
 * replace. The pane is not persisted (GraphiQL's default), so a key is not left in localStorage.
 */
function graphiqlCredentialHint(mode: Config['auth']['mode']): { headers?: string; defaultEditorToolsVisibility?: 'headers' } {
  if (mode === 'none') return {};
  const credential = mode === 'jwt' ? 'Bearer <your JWT>' : 'Bearer <your API key>';
  return { headers: JSON.stringify({ Authorization: credential }, null, 2), defaultEditorToolsVisibility: 'headers' };
}

/**
 * `/ready`: answered from the upstream layer's state within a second (token held, last success,
 * breaker) for every licensee at once, listed by id; 503 unless all are ready. With REDIS_URL it
 * also names Redis: whether it is reached and whether the budget is shared or this replica's
 * fallback share. A lost Redis does not make the gateway unready: it keeps serving on its share.
 */
function useReadiness(upstream: UpstreamClient, licensees: readonly TenantLicensee[], shared?: { redis: RedisConnection; stores: SharedStores }): Plugin {
  return {
    async onRequest({ url, endResponse, fetchAPI }) {
      if (url.pathname !== '/ready') return;
      const each = await Promise.all(licensees.map(async (licensee) => ({ id: licensee.id, ready: await upstream.ready(licensee.upstream) })));
      const ready = each.every((licensee) => licensee.ready);
      const redis = shared ? { redis: { connected: shared.redis.connected(), budget: shared.stores.budget.isShared() ? 'shared' : 'local share' } } : {};
      endResponse(new fetchAPI.Response(JSON.stringify({ ready, licensees: each, ...redis }), { status: ready ? 200 : 503, headers: { 'content-type': 'application/json' } }));
    },
  };
}

/**
 * The gateway's own coded errors pass through with their extensions.code (and retryAfterSeconds or
 * field); GraphQL's own request errors pass as they are; anything else becomes INTERNAL_SERVER_ERROR
 * with no detail, and is logged.
 */
export function maskError(error: unknown, logger?: Logger): Error {
  // Duck-typed: the executor's errors may come from another copy of graphql's classes.
  const graphqlError = error instanceof GraphQLError || (error instanceof Error && error.name === 'GraphQLError') ? (error as GraphQLError) : undefined;
  const original = graphqlError?.originalError ?? error;
  if (original instanceof UpstreamError) {
    const { field, retryAfterSeconds } = original.details;
    return new GraphQLError(original.message, {
      nodes: graphqlError?.nodes,
      path: graphqlError?.path,
      extensions: { code: original.code, ...(field ? { field } : {}), ...(retryAfterSeconds ? { retryAfterSeconds } : {}) },
    });
  }
  if (graphqlError && (!graphqlError.originalError || graphqlError.originalError.name === 'GraphQLError')) return graphqlError;
  logger?.error({ err: original instanceof Error ? original : String(original) }, 'unexpected error');
  return new GraphQLError('Unexpected error.', { nodes: graphqlError?.nodes, path: graphqlError?.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}
