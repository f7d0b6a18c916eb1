import { ErrorCode } from '../error-codes.ts';
import type { RedisConnection } from '../redis/connection.ts';
import type { UpstreamAccount } from '../upstream/account.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { RateLimitedError, UpstreamError } from '../upstream/errors.ts';
import { ChangeFeed } from './feed.ts';
import { reviseKeptPages } from './kept-pages.ts';
import { RedisFeedRegistry } from './redis-registry.ts';
import { type FeedRegistry, LocalFeedRegistry } from './registry.ts';
import { upstreamSource } from './upstream-source.ts';

export interface FeedSettings {
  /** CHANGES_POLL_INTERVAL_MS. */
  intervalMs: number;
  logger?: { warn(details: object, message: string): void };
  /** With replicas (REDIS_URL): one poller per licensee and event across all of them. */
  redis?: RedisConnection;
  /**
   * Told of a licensee's changes read upstream, before its subscribers are: whole answers kept
   * of its reservations (the response cache) must not outlive them.
   */
  onChanges?: (licensee: UpstreamAccount) => void;
}

/**
 * How long a feed's lease lasts unrenewed, so how soon another replica takes over from one that
 * died: a poll interval, within 3 to 15 s (renewed every third of it).
 */
export const leaseMsFor = (intervalMs: number) => Math.min(Math.max(intervalMs, 3_000), 15_000);

/** The waits before a failed page of a feed's baseline read is read again: then its subscribers are told. */
const BASELINE_RETRIES_MS = [1_000, 2_000, 4_000, 8_000];
/** A spent budget's Retry-After is waited at most this long per retry. */
const LONGEST_BASELINE_WAIT_MS = 15_000;
/**
 * Once the feed polls (its subscribers hear the changes), the rest of a baseline read refused for a
 * spent budget waits its turn this many times (each its Retry-After, up to a window): about 20
 * minutes at the service's one-minute window. A baseline of many pages in the background lane of a
 * spent budget takes minutes (S9), and failing it would end every subscriber for nothing.
 */
const PATIENT_BASELINE_ATTEMPTS = 20;
const LONGEST_PATIENT_WAIT_MS = 60_000;

/**
 * A baseline page that failed for a passing cause (the service unreachable or answering 5xx, our
 * credentials refused while a revoked token is replaced, the budget spent) is read again, up to
 * four times (about 15 s, or the budget's Retry-After); once the feed polls, a spent budget is
 * waited out far longer (PATIENT_BASELINE_ATTEMPTS); an unknown event or a refused parameter fails at once.
 */
export function baselineRetryMs(error: unknown, attempt: number, polling = false): number | undefined {
  if (!(error instanceof UpstreamError)) return undefined;
  if (error.code === ErrorCode.RATE_LIMITED) {
    const retryAfterMs = (error.details.retryAfterSeconds ?? 0) * 1_000;
    if (polling && attempt <= PATIENT_BASELINE_ATTEMPTS)
      return Math.min(Math.max(retryAfterMs, 1_000), LONGEST_PATIENT_WAIT_MS);
    if (attempt > BASELINE_RETRIES_MS.length) return undefined;
    return Math.min(Math.max(retryAfterMs, BASELINE_RETRIES_MS[attempt - 1]!), LONGEST_BASELINE_WAIT_MS);
  }
  if (attempt > BASELINE_RETRIES_MS.length) return undefined;
  return error.code === ErrorCode.UPSTREAM_UNAVAILABLE || error.code === ErrorCode.UPSTREAM_ERROR
    ? BASELINE_RETRIES_MS[attempt - 1]
    : undefined;
}

/**
 * The gateway's change feeds: one poller per licensee and event, polling in the background
 * priority of the licensee's budget and slowing down while that budget is tight.
 */
export function createFeedRegistry(upstream: UpstreamClient, settings: FeedSettings): FeedRegistry {
  const createFeed = (licensee: UpstreamAccount, eventId: number) =>
    new ChangeFeed({
      source: upstreamSource(upstream, licensee, eventId, {
        priority: 'background',
        wholePriority: 'bulk',
        fresh: true,
      }),
      intervalMs: settings.intervalMs,
      serviceNow: () => upstream.serviceNow(),
      baselineRetryMs,
      // What the feed saw changed is applied to the event's kept pages (kept-pages.ts): a read after
      // it is answered fresh without a call, or, where a page cannot be revised, reads the service
      // (its copy answering marked stale when the budget cannot). The pages first: the counts
      // stand when every new record went to a kept last page with room for it.
      onChanges: (changes) => {
        settings.onChanges?.(licensee);
        const revise = reviseKeptPages(changes);
        void upstream
          .refresh(licensee, `getreservation|${eventId}`, revise)
          .then(() => upstream.refresh(licensee, `getreservationpagecount|${eventId}`, revise));
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
            ...(error instanceof RateLimitedError && error.why ? { why: error.why } : {}),
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
