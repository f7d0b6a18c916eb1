import type { GatewayMetrics, RecentError } from '../metrics/gateway-metrics.ts';
import { isFailedAttempt } from '../metrics/gateway-metrics.ts';
import type { BudgetHistory, BudgetSample } from './budget-history.ts';

/** What the status page shows of one licensee; every number is read from the /metrics registry. */
export interface LicenseeStatus {
  licensee: string;
  budgetUsed: number;
  budgetLimit: number;
  history: readonly BudgetSample[];
  queueLength: number;
  tokenAgeSeconds: number;
  /** Hits ÷ reads of cached endpoints; null before any read. */
  cacheHitRatio: number | null;
  upstreamRequests: number;
  upstreamFailures: number;
  /** Failures (no answer, 429, 5xx) ÷ requests; null before any request. */
  upstreamErrorRate: number | null;
  pollers: number;
  subscribers: number;
  /** Webhook endpoints' health (docs/webhooks.md): how many are enabled and disabled, deliveries waiting, the oldest waiting's age. */
  webhooks: { enabled: number; disabled: number; backlog: number; oldestPendingSeconds: number };
}

export interface StatusSnapshot {
  at: number;
  licensees: LicenseeStatus[];
  recentErrors: readonly RecentError[];
}

type Values = { labels: Partial<Record<string, string | number>>; value: number }[];

const sum = (values: Values, keep: (labels: Values[number]['labels']) => boolean) =>
  values.filter(({ labels }) => keep(labels)).reduce((total, { value }) => total + value, 0);

/** The status page's data, from the same registry /metrics serves (so the two always agree). */
export async function statusSnapshot(
  metrics: GatewayMetrics,
  history: BudgetHistory,
  licensees: readonly string[],
): Promise<StatusSnapshot> {
  await history.sample();
  const gauge = async (name: string) => ((await metrics.registry.getSingleMetric(name)?.get())?.values ?? []) as Values;
  const [used, limit, queue, tokenAge, pollers, subscribers, enabled, disabled, backlog, oldest] = await Promise.all(
    [
      'gateway_upstream_budget_used',
      'gateway_upstream_budget_limit',
      'gateway_upstream_queue_length',
      'gateway_upstream_token_age_seconds',
      'gateway_change_pollers',
      'gateway_change_subscribers',
      'gateway_webhook_endpoints_enabled',
      'gateway_webhook_endpoints_disabled',
      'gateway_webhook_queue_depth',
      'gateway_webhook_oldest_pending_seconds',
    ].map(gauge),
  );
  const requests = (await metrics.upstreamRequests.get()).values as Values;
  const cache = (await metrics.cacheReads.get()).values as Values;
  const of = (values: Values | undefined, licensee: string) =>
    sum(values ?? [], (labels) => labels.licensee === licensee);
  return {
    at: Date.now(),
    licensees: licensees.map((licensee) => {
      const mine = (labels: Values[number]['labels']) => labels.licensee === licensee;
      const upstreamRequests = sum(requests, mine);
      const upstreamFailures = sum(requests, (labels) => mine(labels) && isFailedAttempt(statusOf(labels.status)));
      const hits = sum(cache, (labels) => mine(labels) && labels.result === 'hit');
      const reads = sum(cache, mine);
      return {
        licensee,
        budgetUsed: of(used, licensee),
        budgetLimit: of(limit, licensee),
        history: history.of(licensee),
        queueLength: of(queue, licensee),
        tokenAgeSeconds: of(tokenAge, licensee),
        cacheHitRatio: reads > 0 ? hits / reads : null,
        upstreamRequests,
        upstreamFailures,
        upstreamErrorRate: upstreamRequests > 0 ? upstreamFailures / upstreamRequests : null,
        pollers: of(pollers, licensee),
        subscribers: of(subscribers, licensee),
        webhooks: {
          enabled: of(enabled, licensee),
          disabled: of(disabled, licensee),
          backlog: of(backlog, licensee),
          oldestPendingSeconds: Math.round(
            Math.max(0, ...(oldest ?? []).filter(({ labels }) => mine(labels)).map(({ value }) => value)),
          ),
        },
      };
    }),
    recentErrors: metrics.recentErrors,
  };
}

function statusOf(label: string | number | undefined): number | 'network' | 'timeout' {
  return label === 'network' || label === 'timeout' ? label : Number(label);
}
