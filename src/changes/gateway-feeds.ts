import type { UpstreamClient } from '../upstream/client.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { ChangeFeed } from './feed.ts';
import { LocalFeedRegistry, type FeedRegistry } from './registry.ts';
import { upstreamSource } from './upstream-source.ts';

export interface FeedSettings {
  /** CHANGES_POLL_INTERVAL_MS. */
  intervalMs: number;
  logger?: { warn(details: object, message: string): void };
}

/**
 * The gateway's change feeds: one poller per licensee and event, polling in the background
 * priority of the licensee's budget and slowing down while that budget is tight.
 */
export function createFeedRegistry(upstream: UpstreamClient, settings: FeedSettings): FeedRegistry {
  return new LocalFeedRegistry(
    (licensee, eventId) =>
      new ChangeFeed({
        source: upstreamSource(upstream, licensee, eventId, { priority: 'background', fresh: true }),
        intervalMs: settings.intervalMs,
        // What the feed saw changed, queries must not read from a kept page either.
        onChanges: () => {
          void upstream.drop(licensee, `getreservation|${eventId}`);
          void upstream.drop(licensee, `getreservationpagecount|${eventId}`);
        },
        budgetUsed: async () => (await upstream.budget.used(licensee.id)) / upstream.budget.effectiveLimitOf(licensee.id),
        // Codes only: a poll's failure is logged without its parameters or any record.
        onPollError: (error) =>
          settings.logger?.warn({ licensee: licensee.id, eventId, code: error instanceof UpstreamError ? error.code : 'INTERNAL_SERVER_ERROR' }, 'change feed poll failed; polling again at the next interval'),
      }),
  );
}
