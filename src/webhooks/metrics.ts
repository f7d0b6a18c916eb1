import { Counter, Gauge, type Registry } from 'prom-client';
import type { EndpointStore } from './endpoint-store.ts';

/**
 * The webhook metrics, registered on the gateway's registry (docs/operating.md). Labels are
 * licensee ids, endpoint ids and outcomes: never a URL or a secret.
 */

/** What an attempt came to: delivered, failed and to be tried again, failed for good, or the endpoint gone (410). */
export type AttemptOutcome = 'delivered' | 'retrying' | 'failed' | 'gone';

export interface WebhookMetricsSource {
  licensees: readonly string[];
  endpoints: EndpointStore;
  /** Deliveries waiting for an endpoint, and when the oldest was queued (ms). */
  backlog(endpointId: string): Promise<{ pending: number; oldestCreatedAt: number | undefined }>;
}

export class WebhookMetrics {
  private readonly attempts: Counter<'licensee' | 'outcome'>;
  private readonly droppedChanges: Counter<'licensee'>;

  constructor(registry: Registry, source: WebhookMetricsSource) {
    this.attempts = new Counter({
      name: 'gateway_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered, retrying (failed, tried again), failed (the last attempt failed), gone (410).',
      labelNames: ['licensee', 'outcome'] as const,
      registers: [registry],
    });
    this.droppedChanges = new Counter({
      name: 'gateway_webhook_changes_dropped_total',
      help: 'Reservation changes never queued as webhooks: more were kept than the bound (10,000 per licensee) while the queue was unreachable (Redis away), the oldest dropped first.',
      labelNames: ['licensee'] as const,
      registers: [registry],
    });
    // One read of every endpoint's backlog per scrape, shared by the gauges below.
    let reading:
      | Promise<{ licensee: string; endpoint: string; enabled: boolean; pending: number; oldest?: number }[]>
      | undefined;
    const read = () => {
      reading ??= (async () => {
        const rows = [];
        for (const licensee of source.licensees)
          for (const endpoint of await source.endpoints.list(licensee)) {
            const { pending, oldestCreatedAt } = await source.backlog(endpoint.id);
            rows.push({
              licensee,
              endpoint: endpoint.id,
              enabled: endpoint.enabled,
              pending,
              ...(oldestCreatedAt === undefined ? {} : { oldest: oldestCreatedAt }),
            });
          }
        return rows;
      })()
        // Redis away: the gauges read nothing this scrape rather than failing the page.
        .catch(() => [])
        .finally(() => setTimeout(() => (reading = undefined), 1_000).unref());
      return reading;
    };
    new Gauge({
      name: 'gateway_webhook_queue_depth',
      help: 'Webhook deliveries waiting (this replica’s queue), per licensee.',
      labelNames: ['licensee'] as const,
      registers: [registry],
      async collect() {
        const rows = await read();
        // The licensees served now only: one a reload removed has no line left.
        this.reset();
        for (const licensee of source.licensees)
          this.set(
            { licensee },
            rows.filter((row) => row.licensee === licensee).reduce((sum, row) => sum + row.pending, 0),
          );
      },
    });
    new Gauge({
      name: 'gateway_webhook_oldest_pending_seconds',
      help: 'Age of the oldest webhook delivery waiting for each endpoint (0 when none waits).',
      labelNames: ['licensee', 'endpoint'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const now = Date.now();
        for (const row of await read())
          this.set(
            { licensee: row.licensee, endpoint: row.endpoint },
            row.oldest === undefined ? 0 : (now - row.oldest) / 1_000,
          );
      },
    });
    new Gauge({
      name: 'gateway_webhook_endpoints_enabled',
      help: 'Webhook endpoints enabled (deliveries go out to them), per licensee.',
      labelNames: ['licensee'] as const,
      registers: [registry],
      async collect() {
        const rows = await read();
        // The licensees served now only: one a reload removed has no line left.
        this.reset();
        for (const licensee of source.licensees)
          this.set({ licensee }, rows.filter((row) => row.licensee === licensee && row.enabled).length);
      },
    });
    new Gauge({
      name: 'gateway_webhook_endpoints_disabled',
      help: 'Webhook endpoints disabled (by their client, a 410, or failing for too long), per licensee.',
      labelNames: ['licensee'] as const,
      registers: [registry],
      async collect() {
        const rows = await read();
        // The licensees served now only: one a reload removed has no line left.
        this.reset();
        for (const licensee of source.licensees)
          this.set({ licensee }, rows.filter((row) => row.licensee === licensee && !row.enabled).length);
      },
    });
  }

  attempted(licensee: string, outcome: AttemptOutcome): void {
    this.attempts.inc({ licensee, outcome });
  }

  dropped(licensee: string, count: number): void {
    this.droppedChanges.inc({ licensee }, count);
  }
}
