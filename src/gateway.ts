import type { Server } from 'node:http';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ExecutionResult } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { Credentials } from './auth/authenticator.ts';
import { useCredentialExpiry } from './auth/credential-expiry.ts';
import type { KeySetTiming } from './auth/jwt.ts';
import { RequestPrincipals, useAuthentication } from './auth/plugin.ts';
import type { Principal } from './auth/principal.ts';
import { routerSignature } from './auth/router-signature.ts';
import { useScopes } from './auth/scopes.ts';
import { createFeedRegistry, leaseMsFor } from './changes/gateway-feeds.ts';
import type { FeedRegistry } from './changes/registry.ts';
import { type Config, ConfigError, isLoopback, loadConfig, type ReloadableFile } from './config/environment.ts';
import type { Licensee } from './config/licensees.ts';
import { MemoryCallbackStore, RedisCallbackStore } from './deliveries/callback-store.ts';
import { CallbackDeliveries } from './deliveries/callbacks.ts';
import { OutboundClient } from './deliveries/outbound.ts';
import { type CallbackAdoption, useSubscriptionCallbacks } from './deliveries/plugin.ts';
import { resumeFrom } from './deliveries/resume.ts';
import { useRequestBodyLimit } from './http/body-limit.ts';
import { corsFor, type PageOrigins, useCsrfPrevention } from './http/cross-site.ts';
import { useGraphiql } from './http/graphiql.ts';
import { useAllowedHosts } from './http/hosts.ts';
import { useInputBounds } from './http/input-bounds.ts';
import { useNothingElse, useOperatorsElsewhere, useOperatorsOnly } from './http/operators.ts';
import { useReadableHttpErrors } from './http/readable-errors.ts';
import { useReadiness } from './http/readiness.ts';
import { useSecurityHeaders } from './http/security-headers.ts';
import { SseStreams } from './http/sse.ts';
import { useStreamedLargeAnswers } from './http/streamed-answers.ts';
import { serveWebSockets, type WebSocketTransport } from './http/websocket.ts';
import { useAuditTrail } from './observability/audit.ts';
import { yogaLogging } from './observability/logger.ts';
import { GatewayMetrics } from './observability/metrics/gateway-metrics.ts';
import { labelledOperationNames, useMetrics, useMetricsPage } from './observability/metrics/plugin.ts';
import { BudgetHistory } from './observability/status/budget-history.ts';
import { useStatusPage } from './observability/status/plugin.ts';
import { createTracing } from './observability/tracing.ts';
import { automaticPersistedQueries, MemoryPersistedQueryStore } from './operations/automatic-persisted-queries.ts';
import { useBatchLimits } from './operations/batching.ts';
import { useLargeResultBulkhead } from './operations/bulkhead.ts';
import { idempotencyStore, useIdempotency } from './operations/idempotency.ts';
import { useCompiledExecution } from './operations/jit.ts';
import { maskError } from './operations/mask-error.ts';
import { OperationRecords, useOperationRecords, useOperationResults } from './operations/operation-record.ts';
import { paramsRefusalsAsResults } from './operations/params-refusals.ts';
import { boundedParseCaches, useQueryLimits } from './operations/query-limits.ts';
import { useRequestErrorCodes } from './operations/request-error-codes.ts';
import { useCacheControl } from './operations/response-cache/cache-control.ts';
import { useGatewayResponseCache } from './operations/response-cache/plugin.ts';
import { ReplicaDrops } from './operations/response-cache/replica-drops.ts';
import { useRouterCacheAliases } from './operations/response-cache/router-aliases.ts';
import { SharedSubscriptions } from './operations/shared-subscriptions.ts';
import { useStaleMarks } from './operations/stale-marks.ts';
import { MemorySubscriptionSlots, useSubscriptionLimit } from './operations/subscription-limit.ts';
import { trustedDocuments } from './operations/trusted-documents.ts';
import { useWellFormedText } from './operations/well-formed-text.ts';
import { useWriteApplied } from './operations/write-applied.ts';
import type { RedisConnection } from './redis/connection.ts';
import { RedisPersistedQueryStore } from './redis/persisted-queries.ts';
import { RedisSubscriptionSlots } from './redis/subscription-slots.ts';
import { createContext, freshReadAsked, type GatewayContext } from './resolvers/context.ts';
import { schema } from './schema/index.ts';
import { UpstreamClient } from './upstream/client.ts';
import { observeAll } from './upstream/observer.ts';
import type { SharedStores } from './upstream/stores/redis-stores.ts';
import { createWebhooks, type GatewayWebhooks } from './webhooks/gateway-webhooks.ts';

export interface Gateway {
  /** The clients' door (PORT): GraphQL, GraphiQL and the probes. */
  yoga: ReturnType<typeof createYoga<Record<string, unknown>, GatewayContext>>;
  /** The operators' door (OPS_PORT): /metrics, /status, /status.json and the probes; nothing else. */
  operators: ReturnType<typeof createYoga>;
  upstream: UpstreamClient;
  /** What /metrics serves (and the status page shows). */
  metrics: GatewayMetrics;
  /** The change feeds of `reservationChanged`. */
  changeFeeds: FeedRegistry;
  /** Subscription executions running now, and their subscribers on every door (shared-subscriptions.ts). */
  subscriptions(): { executions: number; subscribers: number };
  /** The subscriptions this replica delivers through router callbacks. */
  callbacks: CallbackDeliveries;
  /** Webhook endpoints, their deliveries, and the feeds joined for them (docs/webhooks.md). */
  webhooks: GatewayWebhooks;
  /** Serves graphql-ws subscriptions at /graphql on the server that listens for `yoga`. */
  acceptWebSockets(server: Server): WebSocketTransport;
  /**
   * Reads LICENSEES_FILE and TRUSTED_DOCUMENTS_FILE again (`files`: those that changed; all on
   * SIGHUP) and puts them in service whole, or changes nothing and says why (docs/operating.md,
   * "Reloads"). Never throws.
   */
  reload(files?: readonly ReloadableFile[], env?: Record<string, string | undefined>): void;
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
  options: {
    keySetTiming?: KeySetTiming;
    spanExporter?: SpanExporter;
    shared?: { redis: RedisConnection; stores: SharedStores };
  } = {},
): Gateway {
  const { shared } = options;
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test hands an exporter).
  const tracing = createTracing(config.otlpEndpoint, options.spanExporter);
  // The licensees as LICENSEES_FILE reads now: a reload (`reload` below) changes these in place,
  // so every reader (gauges, status page, readiness, contexts) sees the new ones at once.
  const served = [...config.licensees];
  const upstreamIds = served.map((licensee) => licensee.account.systemIdentifier);
  // The gauges read the budget and the feeds when /metrics is scraped.
  const metrics: GatewayMetrics = new GatewayMetrics({
    licensees: upstreamIds,
    budgetUsed: (licensee) => upstream.budget.used(licensee),
    budgetLimit: (licensee) => upstream.budget.effectiveLimitOf(licensee),
    queueLength: (licensee) => upstream.budget.waiting(licensee),
    feeds: () => changeFeeds.active(),
    breakerOpen: () => upstream.breakerOpen(),
    subscriptions: () => subscriptions(),
  });
  const upstream: UpstreamClient = new UpstreamClient({
    baseUrl: config.upstreamBaseUrl,
    ...config.upstream,
    ...(shared ? { stores: shared.stores } : {}),
    logger: logger?.child({ component: 'upstream' }),
    observer: observeAll([metrics, tracing?.observer]),
  });
  const licenseeIds = served.map((licensee) => licensee.id);
  // TRUSTED_DOCUMENTS_FILE's documents as it reads now (a reload replaces them).
  let manifest = config.trustedDocuments;
  const licensees = new Map(served.map((licensee) => [licensee.id, licensee]));
  /** Licensees a reload removed, by id: only requests authenticated before it still act for them. */
  const retired = new Map<string, Licensee>();
  const licenseeIdOf = new Map(served.map((licensee) => [licensee.account.systemIdentifier, licensee.id]));
  const principals = new RequestPrincipals();
  const operations = new OperationRecords();
  const localQueries = new MemoryPersistedQueryStore();
  const persistedQueries = shared ? new RedisPersistedQueryStore(shared.redis, localQueries) : localQueries;
  // Idempotency-Key answers: in Redis when shared (any replica replays them), sealed with WEBHOOK_SECRET_KEY.
  const idempotency = idempotencyStore(config.webhooks.secretKeys, shared?.redis);
  const licenseeOfRequest = (request: Request) => principals.of(request).licenseeId;
  // With Redis a principal's subscriptions are counted across replicas (each alone while Redis is away).
  const localSlots = new MemorySubscriptionSlots(config.subscriptionsPerClient);
  const sharedSlots = shared && new RedisSubscriptionSlots(shared.redis, config.subscriptionsPerClient, localSlots);
  const auditLogger = logger?.child({ component: 'audit' });
  const credentials = new Credentials(config.auth, served, options.keySetTiming);
  const { authenticate } = credentials;
  // ROUTER_HMAC_SECRET: only operations the federation router signed run, on every door.
  const signature = config.routerHmacSecret ? routerSignature(config.routerHmacSecret) : undefined;
  // Where resolvers report records they skip (positions only, never the record's content).
  const resolverLog = logger?.child({ component: 'resolvers' });
  const budgetHistory = new BudgetHistory(upstreamIds, (licensee) => upstream.budget.used(licensee), {
    everyMs: 10_000,
  });
  budgetHistory.start();
  const changeFeeds = createFeedRegistry(upstream, {
    intervalMs: config.changesPollIntervalMs,
    logger: logger?.child({ component: 'changes' }),
    ...(shared ? { redis: shared.redis } : {}),
    // A change someone else made drops the whole answers holding reservations, on every replica, as
    // our own mutation's does: kept 5 s, they answered from before a change the feed had told.
    onChanges: (account) => {
      const licensee = licenseeIdOf.get(account.systemIdentifier);
      if (licensee === undefined) return;
      responseCache.invalidate(licensee, ['Reservation']);
      void drops?.publish({ licensee, types: ['Reservation'] }).catch(() => undefined);
    },
  });
  // Webhooks: endpoints in Redis when shared; events with an enabled endpoint join their feed.
  const webhooks = createWebhooks({
    ...config.webhooks,
    licensees: served.map((licensee) => licensee.account),
    feeds: changeFeeds,
    registry: metrics.registry,
    leaseMs: leaseMsFor(config.changesPollIntervalMs),
    ...(shared ? { redis: shared.redis } : {}),
    ...(logger ? { logger: logger.child({ component: 'webhooks' }) } : {}),
  });
  // Router callbacks: recorded in Redis (any replica adopts those of a replica that died), else here.
  const callbacks = new CallbackDeliveries(
    new OutboundClient(config.subscriptionCallbackUrls),
    shared ? new RedisCallbackStore(shared.redis, leaseMsFor(config.changesPollIntervalMs)) : new MemoryCallbackStore(),
    logger?.child({ component: 'callbacks' }),
  );
  // Replicas drop each other's answers of what a mutation changed: each keeps its own response cache.
  // With RESPONSE_CACHE=off nothing is kept, but each answer is measured as if it were (Cache-Control).
  let drops: ReplicaDrops | undefined;
  const responseCache = useGatewayResponseCache({
    ttls: config.responseCache.ttls,
    keep: config.responseCache.enabled,
    ...(shared && config.responseCache.enabled
      ? {
          onInvalidated: (licensee, types) => drops!.publish({ licensee, types }),
          heardEveryDrop: (licensee) => drops!.heardEvery(licensee),
        }
      : {}),
  });
  if (shared && config.responseCache.enabled) {
    drops = new ReplicaDrops(
      shared.redis,
      licenseeIds,
      ({ licensee, types }) => responseCache.invalidate(licensee, types),
      () => responseCache.clear(),
      logger?.child({ component: 'response-cache' }),
    );
    void drops.listen();
  }
  // The plugins in the order a request meets them. Envelop runs each hook in this order (and wraps
  // execution outside-in), so an entry's place is part of what it does: each says why it sits there.
  const readiness = () =>
    useReadiness(
      upstream,
      served,
      shared &&
        (() => ({
          connected: shared.redis.connected(),
          budget: shared.stores.budget.isShared() ? 'shared' : 'local share',
        })),
    );
  const sseStreams = new SseStreams(config.subscriptionKeepAliveMs);
  // Labelled in the metrics by name: OPERATION_NAMES and the trusted documents' (those of a reload added).
  const operationNames = labelledOperationNames(config.operationNames, manifest?.values());
  // The pages of other sites that may use the gateway through a browser: CORS and sockets alike.
  const pages: PageOrigins = { corsOrigins: config.corsOrigins, localDevelopment: isLoopback(config.host) };
  const mask = (error: unknown) => maskError(error, logger);
  const httpDoor: Plugin[] = [
    // First: every request and operation has its record (id, cost, outcome), refusals of every plugin after it included.
    useOperationRecords(operations),
    // nosniff and no-referrer on every answer, a policy on every HTML one, whichever plugin made it.
    useSecurityHeaders(),
    // Probes answer before authentication: they need no client credential.
    // Probes answer any Host too (orchestrators call the instance's address); nothing after them does.
    readiness(),
    useAllowedHosts(config.allowedHosts),
    // The operators' pages live on OPS_PORT only: 404 here, whatever the address or token.
    useOperatorsElsewhere(),
    ...(tracing ? [tracing.plugin] : []),
    // The page holds no data: it loads without a credential, which it then sends with each operation.
    useGraphiql({ enabled: config.graphiql, endpoint: '/graphql', mode: config.auth.mode }),
    // Who asks, before anything of the document is read; the scopes checked once the operation is known.
    useAuthentication(authenticate, principals),
    useScopes((context) => (context as GatewayContext).principal),
    // A form or a GET without a preflight header runs nothing (a page of another site could send it).
    useCsrfPrevention(),
    // Yoga's own HTTP refusals reworded, with the code clients branch on.
    useReadableHttpErrors({ maxRequestBytes: config.http.maxRequestBytes }),
    // MAX_REQUEST_BYTES, after every plugin that picks a request parser: it wraps the one picked.
    useRequestBodyLimit(config.http.maxRequestBytes),
    // MAX_INPUT_DEPTH and MAX_INPUT_NODES, as soon as any parser has read the request: before Yoga's
    // own parameter checks and every later reader of the variables (persisted queries, cost, cache keys).
    useInputBounds(config.inputBounds),
    // With ROUTER_HMAC_SECRET: the router's signature, once the input is bounded and before any plugin reads the document.
    ...(signature ? [signature.plugin] : []),
    // A subscription's SSE stream, kept alive by one timer for all of them (SUBSCRIPTION_KEEPALIVE_MS).
    sseStreams.plugin(),
    // An answer holding a long list (a page of reservations) is written as it is serialised, in pieces.
    useStreamedLargeAnswers(),
  ];
  // Only the manifest's documents run, when TRUSTED_DOCUMENTS_FILE is set; else any document, by hash once sent.
  const documents = manifest
    ? trustedDocuments({ get: (id) => manifest?.get(id) })
    : automaticPersistedQueries(persistedQueries, licenseeOfRequest);
  const documentChecks: Plugin[] = [
    // A batch: at most MAX_BATCH_OPERATIONS operations, whose estimates together are held to
    // QUERY_MAX_UPSTREAM_CALLS, before any of them runs (each then passes every check below alone).
    useBatchLimits({
      maxOperations: config.maxBatchOperations,
      maxUpstreamCalls: config.maxUpstreamCallsPerOperation,
      maxDocumentBytes: config.queryLimits.bytes,
      maxTokens: config.queryLimits.tokens,
      documentOf: documents.documentOf,
    }),
    // @defer and @stream: a long list's edges arrive page by page (connections/streamed-window.ts).
    useDeferStream(),
    // Depth, aliases, directives, tokens and upstream cost: refused before any upstream call.
    ...useQueryLimits(config.queryLimits, config.maxUpstreamCallsPerOperation),
    documents.plugin,
    // Before anything runs: an expired credential runs nothing more, and its streams end at the expiry.
    useCredentialExpiry(principalOfContext, credentials),
    // A lone surrogate in the variables runs nothing: before a subscription takes a slot or any call is made.
    useWellFormedText(),
    // A principal's live subscriptions are capped on every door, released when each ends.
    useSubscriptionLimit(sharedSlots ?? localSlots, config.subscriptionsPerClient, principalOfContext),
    // After every check: the router's callback URL is checked only for a subscription every rule let through.
    useSubscriptionCallbacks(callbacks, { enabled: config.subscriptionCallbackUrls.length > 0 }),
  ];
  /** An operation's context: it acts for the principal's licensee, its token, budget, cache and calls only. */
  const contextOf = (principal: Principal, account: GatewayContext['account'], onSent?: () => void, fresh = false) => {
    const context = createContext(principal, account, upstream, resolverLog, onSent, fresh);
    // Set, not spread into a copy: a copy of the context per request costs more than it seems.
    context.changeFeeds = changeFeeds;
    context.webhooks = webhooks.management;
    return context;
  };
  const subscriptions = () => ({
    executions: sharedSubscriptions.executions,
    subscribers: sharedSubscriptions.subscribers,
  });
  // Subscribers of one operation share one execution per change, in a context of the group's own.
  const sharedSubscriptions = new SharedSubscriptions({
    contextFor: (first) => contextOf(first.principal, first.account, undefined, first.freshReads === true),
    onExecuted: () => metrics.subscriptionExecutions.inc(),
  });
  const execution: Plugin[] = [
    // The executor first: the response cache wraps whichever runs (it adds __typename to the
    // document and reads the result's entities), so it must not be replaced after it.
    ...(config.graphqlJit ? useCompiledExecution() : []),
    // A subscription joins the one execution of its operation (it passed every check above, alone).
    sharedSubscriptions.plugin(),
    // A router's own response-cache aliases, renamed so that ours does not take them for its metadata.
    useRouterCacheAliases(),
    // A mutation's Idempotency-Key: after every check (a refused one claims no key), before the response
    // cache and the bulkhead (a repeat waits for no turn); its answer is kept once masked and marked.
    useIdempotency(idempotency, operations),
    // After every check above: a cached answer is served only to a request that passed them all.
    ...responseCache.plugins,
    // Every answer says how long a router or CDN may keep it: as long as the response cache would.
    useCacheControl(responseCache),
    // Marks each answer (or payload of one) holding data of a kept copy the budget made us serve;
    // the response cache keeps no such answer (it asks the operation's calls, whatever the order).
    useStaleMarks(),
    // Outermost around execution: a large operation waits for its turn (and its bytes) before it runs.
    useLargeResultBulkhead(config.inflight),
    // A mutation's errors below its root field say its write took effect; masked here first (envelop masks after every plugin).
    useWriteApplied(mask),
    // graphql-js's request errors get their code before any plugin below records one.
    useRequestErrorCodes(),
    // Last: the codes recorded, audited and counted are the ones the client receives, after every plugin above set them.
    useOperationResults(operations),
    useAuditTrail(operations, { logger: auditLogger, principalOf: (request) => authenticated(principals, request) }),
    useMetrics(metrics, operationNames, operations),
  ];
  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    // The request acts for its principal's licensee: its token, budget, cache and calls only.
    context: (initial) => {
      const { request } = initial;
      const principal = principals.of(request);
      // Each operation of a batch counts its own upstream calls (its own audit line).
      const operation = operations.ofOperation(initial, request);
      return contextOf(
        principal,
        (licensees.get(principal.licenseeId) ?? retired.get(principal.licenseeId)!).account,
        () => void operation.upstreamCalls++,
        freshReadAsked(initial.params, request),
      );
    },
    maskedErrors: { maskError: mask },
    // Served by useGraphiql, after the Host check (Yoga's own page answers before any plugin).
    graphiql: false,
    // useRequestBodyLimit enforces MAX_REQUEST_BYTES instead (its comment says why).
    maxRequestBodySize: false,
    parserAndValidationCache: boundedParseCaches(),
    // JSON arrays of operations (a router's subgraph batching); useBatchLimits refuses more first, naming the setting.
    batching: { limit: config.maxBatchOperations },
    logging: logger ? yogaLogging(logger) : false,
    cors: corsFor(pages),
    // GraphQL over HTTP's persisted documents name the document in a body parameter of their own.
    ...(config.trustedDocuments ? { extraParamNames: ['documentId'] } : {}),
    // A refusal in onParams is the operation's result, so every door answers, audits and counts it alike.
    plugins: paramsRefusalsAsResults([...httpDoor, ...documentChecks, ...execution], mask),
  });
  const operators = createYoga({
    schema,
    healthCheckEndpoint: '/health',
    landingPage: false,
    graphiql: false,
    // No page of another site may read these (Yoga's default would let any origin).
    cors: false,
    logging: logger ? yogaLogging(logger.child({ component: 'operators' })) : false,
    plugins: [
      useSecurityHeaders(),
      // The probes answer here too, without the token: a sidecar or a node agent may ask this port.
      readiness(),
      // Without OPS_TOKEN this port is on a loopback OPS_HOST: a page of another site rebinding its
      // name to 127.0.0.1 must still not read it, so the Host must be one of this machine's names.
      ...(config.opsToken
        ? []
        : [useAllowedHosts(config.opsAllowedHosts, "this machine's own names while OPS_TOKEN is unset")]),
      useOperatorsOnly(config.opsToken),
      useMetricsPage(metrics),
      useStatusPage(metrics, upstreamIds, budgetHistory),
      useNothingElse(),
    ],
  });
  const reloadLogger = logger?.child({ component: 'config' });
  const loadedAt = (file: ReloadableFile) => metrics.configLoadedAt.set({ file }, Date.now() / 1000);
  for (const file of Object.keys(config.files) as ReloadableFile[]) loadedAt(file);
  /** Puts a new licensees file in service: what a credential it no longer holds opened ends now. */
  const serve = (next: readonly Licensee[]) => {
    const before = new Set(licenseeIds);
    // A request authenticated just before finishes as it started, for the licensee it was let in for.
    for (const licensee of served) retired.set(licensee.id, licensee);
    served.splice(0, served.length, ...next);
    upstreamIds.splice(0, upstreamIds.length, ...next.map((licensee) => licensee.account.systemIdentifier));
    licenseeIds.splice(0, licenseeIds.length, ...next.map((licensee) => licensee.id));
    licensees.clear();
    licenseeIdOf.clear();
    for (const licensee of next) {
      licensees.set(licensee.id, licensee);
      licenseeIdOf.set(licensee.account.systemIdentifier, licensee.id);
    }
    credentials.replace(next);
    webhooks.licenseesChanged(next.map((licensee) => licensee.account));
    void drops?.follow(licenseeIds.filter((id) => !before.has(id)));
  };
  /** Files whose change waits for a reload that succeeds (another file's problem held it back). */
  const pending = new Set<ReloadableFile>();
  const reload = (files?: readonly ReloadableFile[], env: Record<string, string | undefined> = process.env) => {
    const configured = Object.keys(config.files) as ReloadableFile[];
    const asked = new Set([...(files ?? configured), ...pending]);
    let next: Config;
    try {
      next = loadConfig(env);
    } catch (error) {
      // Each file named by a problem is refused whole; the old one keeps serving.
      const problems =
        error instanceof ConfigError
          ? error.message
              .split('\n')
              .slice(1)
              .map((line) => line.trim())
          : [];
      for (const file of configured) {
        const own = problems.filter((problem) => problem.startsWith(file));
        if (own.length === 0 && (error instanceof ConfigError || !asked.has(file))) continue;
        const why = own.length > 0 ? own.join('; ') : `it could not be read (${(error as Error).message})`;
        metrics.configReloads.inc({ file, outcome: 'failure' });
        reloadLogger?.error(
          { file, path: config.files[file], problems: own },
          `${file} was not reloaded (the one before it keeps serving): ${why}`,
        );
      }
      for (const file of asked) pending.add(file);
      return;
    }
    pending.clear();
    for (const file of asked) {
      if (file === 'LICENSEES_FILE') serve(next.licensees);
      if (file === 'TRUSTED_DOCUMENTS_FILE' && next.trustedDocuments) {
        manifest = next.trustedDocuments;
        for (const name of labelledOperationNames([], manifest.values())) operationNames.add(name);
      }
      metrics.configReloads.inc({ file, outcome: 'success' });
      loadedAt(file);
      reloadLogger?.info({ file, path: config.files[file] }, `${file} reloaded`);
    }
  };
  // A recorded subscription is opened again as its router first asked (from its cursor), through the same envelope.
  callbacks.adoptOrphans(async (record) => {
    const init = {
      method: 'POST',
      headers: {
        ...record.request.headers,
        'content-type': 'application/json',
        accept: 'application/json;callbackSpec=1.0',
      },
      // From where the router's deliveries stood: what changed while no replica held it comes now.
      body: JSON.stringify(resumeFrom(record.request.params, record.cursor)),
    };
    const adoption: CallbackAdoption = { callbackAdoption: record };
    const response = await yoga.fetch(record.request.url, init, { ...adoption });
    return (await response.json()) as ExecutionResult;
  });
  return {
    yoga,
    operators,
    upstream,
    metrics,
    changeFeeds,
    subscriptions,
    callbacks,
    webhooks,
    reload,
    clearResponseCache: () => responseCache.clear(),
    acceptWebSockets: (server) =>
      serveWebSockets(server, yoga, {
        authenticate,
        pages,
        allowedHosts: config.allowedHosts,
        maxMessageBytes: config.http.maxRequestBytes,
        inputBounds: config.inputBounds,
        keepAliveMs: config.subscriptionKeepAliveMs,
        mask,
        ...(logger ? { logger: logger.child({ component: 'websocket' }) } : {}),
      }),
    close: async () => {
      budgetHistory.stop();
      await callbacks.close();
      await webhooks.close();
      sharedSlots?.close();
      await changeFeeds.close();
      await drops?.close();
      shared?.stores.close();
      await upstream.close();
      // The last spans go to the collector; one that is down loses them, not the clean exit.
      await tracing?.shutdown().catch((error: unknown) => {
        logger?.warn(
          { err: error instanceof Error ? error : String(error) },
          'tracing: the last spans were not exported',
        );
      });
    },
  };
}

/** The principal an operation acts for, as the context holds it. */
const principalOfContext = (context: unknown) => (context as Partial<GatewayContext> | undefined)?.principal;

/** The request's principal, or undefined for a request the authentication refused (or never saw). */
function authenticated(principals: RequestPrincipals, request: Request): Principal | undefined {
  try {
    return principals.of(request);
  } catch {
    return undefined;
  }
}
