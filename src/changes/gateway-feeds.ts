import { ErrorCode } from '../error-codes.ts';
import type { RedisConnection } from '../redis/connection.ts';
import type { UpstreamAccount } from '../upstream/account.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { ChangeFeed } from './feed.ts';
import { RedisFeedRegistry } from './redis-registry.ts';
import { type FeedRegistry, LocalFeedRegistry } from './registry.ts';
import { upstreamSource } from './upstream-source.ts';

export interface FeedSettings {
  /** CHANGES_POLL_INTERVAL_MS. */
  intervalMs: number;
  logger?: { warn(details: object, message: string): void };
  /** With replicas (REDIS_URL): one poller per licensee and event across all of them. */
  redis?: RedisConnection;
}

/**
 * How long a feed's lease lasts unrenewed, so how soon another replica takes over from one that
 * died: a poll interval, within 3 to 15 s (renewed every third of it).
 */
export const leaseMsFor = (intervalMs: number) => Math.min(Math.max(intervalMs, 3_000), 15_000);

/**
 * The gateway's change feeds: one poller per licensee and event, polling in the background
 * priority of the licensee's budget and slowing down while that budget is tight.
 */
export function createFeedRegistry(upstream: UpstreamClient, settings: FeedSettings): FeedRegistry {
  const createFeed = (licensee: UpstreamAccount, eventId: number) =>
    new ChangeFeed({
      source: upstreamSource(upstream, licensee, eventId, { priority: 'background', fresh: true }),
      intervalMs: settings.intervalMs,
      serviceNow: () => upstream.serviceNow(),
      // What the feed saw changed, queries must not read from a kept page either.
      onChanges: () => {
        void upstream.drop(licensee, `getreservation|${eventId}`);
        void upstream.drop(licensee, `getreservationpagecount|${eventId}`);
      },
      budgetUsed: async () =>
        (await upstream.budget.used(licensee.systemIdentifier)) /
        upstream.budget.effectiveLimitOf(licensee.systemIdentifier),
      // Codes only: a poll's failure is logged without its parameters or any record.
      onPollError: (error) =>
        settings.logger?.warn(
          {
            licensee: licensee.systemIdentifier,
            eventId,
            code: error instanceof UpstreamError ? error.code : ErrorCode.INTERNAL_SERVER_ERROR,
          },
          'change feed poll failed; polling again at the next interval',
        ),
    });
  return settings.redis
    ? new RedisFeedRegistry(settings.redis, createFeed, {
        leaseMs: leaseMsFor(settings.intervalMs),
        ...(settings.logger ? { logger: settings.logger } : {}),
      })
    : new LocalFeedRegistry(createFeed);
}
