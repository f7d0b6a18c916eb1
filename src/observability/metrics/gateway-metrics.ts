import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AttemptEvent, UpstreamObserver } from '../../upstream/observer.ts';

/** What the gauges read when /metrics is scraped: the budget's and the feeds' state now. */
export interface LiveState {
  /** Upstream licensee ids (systemIdentifiers), the `licensee` label. */
  licensees: readonly string[];
  budgetUsed(licensee: string): Promise<number>;
  budgetLimit(licensee: string): number;
  queueLength(licensee: string): number;
  feeds(): readonly { licenseeId: string; members: number; polling: boolean }[];
  /** Whether the upstream breaker is open (calls refused without being sent). */
  breakerOpen(): boolean;
  /** Subscription executions running now (each serving every subscriber of one operation), and their subscribers. */
  subscriptions?(): { executions: number; subscribers: number };
}

/** One upstream failure as the status page lists it: codes and endpoints, nothing of the request. */
export interface RecentError {
  at: number;
  licensee: string;
  endpoint: string;
  status: number | 'network' | 'timeout';
}

const RECENT_ERRORS = 20;

/**
 * The event loop's delay, sampled every 10 ms by Node (perf_hooks): one histogram a process, made
 * by the first gateway that is scraped, shared by every gateway in it (tests run hundreds).
 */
let loopDelay: IntervalHistogram | undefined;
function eventLoopDelay(): IntervalHistogram {
  if (!loopDelay) {
    loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
  }
  return loopDelay;
}

/** An attempt the service did not answer usefully: no answer, 429 or 5xx. */
export const isFailedAttempt = (status: AttemptEvent['status']) =>
  typeof status !== 'number' || status === 429 || status >= 500;

/**
 * The gateway's Prometheus metrics (prom-client, a registry of its own per gateway). Labels are
 * licensee ids, endpoint and operation names, statuses and codes: never a key, token or record.
 */
export class GatewayMetrics implements UpstreamObserver {
  readonly registry = new Registry();
  /** The newest first; for the status page. */
  readonly recentErrors: RecentError[] = [];
  private readonly lastAuthenticateAt = new Map<string, number>();

  readonly upstreamRequests = new Counter({
    name: 'gateway_upstream_requests_total',
    help:
      'Requests sent to the reservation service (each attempt), by licensee, endpoint, version and ' +
      'HTTP status (or network/timeout).',
    labelNames: ['licensee', 'endpoint', 'version', 'status'] as const,
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Time from sending a request to the reservation service to its answer, by endpoint and version.',
    labelNames: ['endpoint', 'version'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly authenticates = new Counter({
    name: 'gateway_upstream_authenticates_total',
    help: 'Authenticate requests sent, by licensee and HTTP status.',
    labelNames: ['licensee', 'status'] as const,
    registers: [this.registry],
  });
  readonly tokenRenewals = new Counter({
    name: 'gateway_upstream_token_renewals_total',
    help: 'Tokens obtained for a licensee that already had one (renewals before expiry, or after a rejection).',
    labelNames: ['licensee'] as const,
    registers: [this.registry],
  });
  readonly tokenFailures = new Counter({
    name: 'gateway_upstream_token_failures_total',
    help: 'Authenticates that ended without a token after their retries (a first token, a renewal or a readiness probe), by licensee.',
    labelNames: ['licensee'] as const,
    registers: [this.registry],
  });
  readonly tokenEchoes = new Counter({
    name: 'gateway_upstream_token_echoes_total',
    help: 'Refusals in words alone ("token is expired" in a message) that a fresh token got again: the words were the data, by licensee and endpoint.',
    labelNames: ['licensee', 'endpoint'] as const,
    registers: [this.registry],
  });
  readonly cacheReads = new Counter({
    name: 'gateway_upstream_cache_reads_total',
    help: 'Calls of cached endpoints, by result: hit (answered without a request) or miss.',
    labelNames: ['licensee', 'endpoint', 'result'] as const,
    registers: [this.registry],
  });
  readonly operations = new Counter({
    name: 'gateway_graphql_operations_total',
    help: 'GraphQL operations, by operation name, type and outcome (ok, or the first error code).',
    labelNames: ['operation', 'type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly operationDuration = new Histogram({
    name: 'gateway_graphql_operation_duration_seconds',
    help: 'Time to answer a GraphQL operation (a subscription: until its stream began), by operation name and type.',
    labelNames: ['operation', 'type'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly refusals = new Counter({
    name: 'gateway_refusals_total',
    help: 'Errors answered to clients, by code (RATE_LIMITED, QUERY_TOO_COSTLY, UNAUTHENTICATED, …).',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly subscriptionExecutions = new Counter({
    name: 'gateway_subscription_executions_total',
    help: 'Payloads executed for subscriptions: one per change for all subscribers of one operation (document, variables, licensee and scopes), however many they are.',
    registers: [this.registry],
  });

  readonly configReloads = new Counter({
    name: 'gateway_config_reloads_total',
    help: 'Reloads of a configuration file (LICENSEES_FILE, TRUSTED_DOCUMENTS_FILE), by file and outcome: success, or failure (the file was refused whole and the one before it kept serving).',
    labelNames: ['file', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly configLoadedAt = new Gauge({
    name: 'gateway_config_last_reload_success_timestamp_seconds',
    help: 'When a configuration file (LICENSEES_FILE, TRUSTED_DOCUMENTS_FILE) was last read whole and put in service (at start, or by a reload), in seconds since the epoch.',
    labelNames: ['file'] as const,
    registers: [this.registry],
  });

  readonly httpResponses = new Counter({
    name: 'gateway_http_responses_total',
    help: 'HTTP responses sent, by path (/graphql, /health, /ready, /metrics, /status, /status.json or other) and status code (a stream counts once, with the status it began with).',
    labelNames: ['path', 'status'] as const,
    registers: [this.registry],
  });

  constructor(live: LiveState) {
    const perLicensee = (name: string, help: string, read: (licensee: string) => number | Promise<number>) =>
      new Gauge({
        name,
        help,
        labelNames: ['licensee'] as const,
        registers: [this.registry],
        async collect() {
          const values: [string, number][] = [];
          for (const licensee of live.licensees) values.push([licensee, await read(licensee)]);
          // The licensees served now only: one a reload removed has no line left.
          this.reset();
          for (const [licensee, value] of values) this.set({ licensee }, value);
        },
      });
    const countFeeds = (count: (feed: { members: number; polling: boolean }) => number) => (licensee: string) =>
      live
        .feeds()
        .filter((feed) => feed.licenseeId === licensee)
        .reduce((sum, feed) => sum + count(feed), 0);
    perLicensee(
      'gateway_upstream_budget_used',
      'Requests counted in the licensee’s current rate window (in flight included).',
      (licensee) => live.budgetUsed(licensee),
    );
    perLicensee(
      'gateway_upstream_budget_limit',
      'Requests the licensee may send per rate window (the margin taken off).',
      (licensee) => live.budgetLimit(licensee),
    );
    perLicensee('gateway_upstream_queue_length', 'Calls waiting for the licensee’s budget.', (licensee) =>
      live.queueLength(licensee),
    );
    perLicensee(
      'gateway_upstream_token_age_seconds',
      'Age of the licensee’s token (since its last authenticate answered 200); -1 before the first.',
      (licensee) => this.tokenAgeSeconds(licensee),
    );
    perLicensee(
      'gateway_change_pollers',
      'Change feeds this replica polls for the licensee (one per event subscribed to; with replicas ' +
        'on Redis, one replica polls each).',
      countFeeds((feed) => (feed.polling ? 1 : 0)),
    );
    perLicensee(
      'gateway_change_subscribers',
      'Members of the licensee’s change feeds: one per subscription execution (subscribers of one operation share one: gateway_subscription_subscribers counts them) and one per event webhooks follow.',
      countFeeds((feed) => feed.members),
    );
    new Gauge({
      name: 'gateway_event_loop_delay_seconds',
      help: 'How late the event loop ran its timers since the previous scrape (sampled every 10 ms), by quantile (0.5, 0.99, 1 the worst); 0 before anything was sampled.',
      labelNames: ['quantile'] as const,
      registers: [this.registry],
      collect() {
        const delay = eventLoopDelay();
        // Nanoseconds; the sampling resolution (10 ms) is part of each measured interval, so it is taken off.
        const seconds = (ns: number) => (delay.count ? Math.max(0, ns / 1e9 - 0.01) : 0);
        this.set({ quantile: '0.5' }, seconds(delay.percentile(50)));
        this.set({ quantile: '0.99' }, seconds(delay.percentile(99)));
        this.set({ quantile: '1' }, seconds(delay.max));
        delay.reset();
      },
    });
    new Gauge({
      name: 'gateway_subscription_groups',
      help: 'Subscription executions running now, each feeding every subscriber of one operation (document, variables, licensee and scopes).',
      registers: [this.registry],
      collect() {
        this.set(live.subscriptions?.().executions ?? 0);
      },
    });
    new Gauge({
      name: 'gateway_subscription_subscribers',
      help: 'Subscribers of the subscription executions running now, on every door.',
      registers: [this.registry],
      collect() {
        this.set(live.subscriptions?.().subscribers ?? 0);
      },
    });
    new Gauge({
      name: 'gateway_upstream_breaker_open',
      help: 'Whether the breaker in front of the reservation service is open (1): calls are refused without being sent.',
      registers: [this.registry],
      collect() {
        this.set(live.breakerOpen() ? 1 : 0);
      },
    });
  }

  attempt(event: AttemptEvent): void {
    const status = String(event.status);
    this.upstreamRequests.inc({ licensee: event.licensee, endpoint: event.endpoint, version: event.version, status });
    this.upstreamDuration.observe({ endpoint: event.endpoint, version: event.version }, event.durationMs / 1000);
    if (event.endpoint === 'authenticate') {
      this.authenticates.inc({ licensee: event.licensee, status });
      if (event.status === 200) {
        if (this.lastAuthenticateAt.has(event.licensee)) this.tokenRenewals.inc({ licensee: event.licensee });
        this.lastAuthenticateAt.set(event.licensee, event.startedAt + event.durationMs);
      }
    }
    if (isFailedAttempt(event.status)) {
      this.recentErrors.unshift({
        at: event.startedAt,
        licensee: event.licensee,
        endpoint: event.endpoint,
        status: event.status,
      });
      this.recentErrors.length = Math.min(this.recentErrors.length, RECENT_ERRORS);
    }
  }

  tokenFailure(event: { licensee: string }): void {
    this.tokenFailures.inc({ licensee: event.licensee });
  }

  tokenEcho(event: { licensee: string; endpoint: string }): void {
    this.tokenEchoes.inc({ licensee: event.licensee, endpoint: event.endpoint });
  }

  cacheRead(event: { licensee: string; endpoint: string; hit: boolean }): void {
    this.cacheReads.inc({ licensee: event.licensee, endpoint: event.endpoint, result: event.hit ? 'hit' : 'miss' });
  }

  /** Seconds since the licensee's last successful authenticate; -1 when none yet. */
  tokenAgeSeconds(licensee: string, now = Date.now()): number {
    const at = this.lastAuthenticateAt.get(licensee);
    return at === undefined ? -1 : Math.max(0, Math.round((now - at) / 1000));
  }
}
