import type { Registry } from 'prom-client';
import type { FeedMembership, FeedRegistry } from '../changes/registry.ts';
import { AddressPolicy } from '../deliveries/address-policy.ts';
import { OutboundClient } from '../deliveries/outbound.ts';
import type { RedisConnection } from '../redis/connection.ts';
import { RedisFanout } from '../redis/fanout.ts';
import { RedisLease } from '../redis/lease.ts';
import { OutageLog } from '../redis/outage-log.ts';
import type { UpstreamAccount } from '../upstream/account.ts';
import { WebhookDeliveries } from './deliveries.ts';
import { MemoryDeliveryStore } from './delivery-store.ts';
import { type EndpointStore, MemoryEndpointStore, RedisEndpointStore } from './endpoint-store.ts';
import { type ManagementAudit, WebhookManagement } from './management.ts';
import { WebhookMetrics } from './metrics.ts';
import { RedisDeliveryStore } from './redis-delivery-store.ts';
import { SecretBox } from './secret-box.ts';

/**
 * The gateway's webhooks: the endpoint store and the delivery queue (in Redis when shared, else in
 * memory), the dispatcher on the one outbound path (15 s for a whole attempt, 2 KB of an answer
 * read), and the feeds that run for endpoints. An event with an enabled endpoint joins the event's
 * one change feed like a subscriber (one poll for subscribers and endpoints together, at the feed's
 * background priority within the licensee's budget), and its changes become deliveries.
 *
 * With Redis, one replica at a time (the holder of the `webhooks` lease) joins those feeds and
 * queues their changes (each change once); every replica delivers from the shared queue, each
 * delivery claimed by one of them (redis-delivery-store.ts). A management mutation on any replica
 * is announced (`webhook-endpoints`), so the queueing replica joins or leaves feeds at once. While
 * Redis is away the holder keeps its role and its feeds, and keeps what they tell until Redis is
 * back (deliveries.ts); when the role moves, the old holder's feeds overlap the new one's for a lease.
 */
export interface WebhookSettings {
  allowHttpHosts: string[];
  disableAfterMs: number;
  /** How long an attempt may take (WEBHOOK_TIMEOUT_MS); a claim on Redis lasts twice as long. */
  timeoutMs?: number;
  /** WEBHOOK_SECRET_KEY: endpoint secrets are sealed in Redis with these keys (the first seals); none: kept in clear. */
  secretKeys?: readonly string[];
  /** The licensees, by systemIdentifier: whose feeds may be joined. */
  licensees: readonly UpstreamAccount[];
  feeds: FeedRegistry;
  redis?: RedisConnection;
  /** How often each replica looks at the endpoints again (others' changes; feeds that failed to start). */
  resyncMs?: number;
  /**
   * With Redis: how long the replica that queues the changes holds that role unrenewed (the change
   * feeds' lease, `leaseMsFor` the poll interval): a dead one's changes are queued by another after it.
   */
  leaseMs?: number;
  logger?: ManagementAudit & { warn(details: object, message: string): void };
  /** The gateway's metrics registry: the webhook metrics join it. */
  registry?: Registry;
}

export interface GatewayWebhooks {
  management: WebhookManagement;
  deliveries: WebhookDeliveries;
  endpoints: EndpointStore;
  /** The feeds joined for endpoints now (licensee|event), this replica's. */
  joined(): string[];
  /** Whether this replica joins the feeds and queues their changes (without Redis: always). */
  delivering(): boolean;
  /** The licensees after a reload: a removed one's feeds are left, an added one's endpoints served. */
  licenseesChanged(accounts: readonly UpstreamAccount[]): void;
  close(): Promise<void>;
}

export function createWebhooks(settings: WebhookSettings): GatewayWebhooks {
  const { feeds, redis, logger } = settings;
  const box = settings.secretKeys?.length ? new SecretBox(settings.secretKeys) : undefined;
  const endpoints = redis ? new RedisEndpointStore(redis, box) : new MemoryEndpointStore();
  const timeoutMs = settings.timeoutMs ?? 15_000;
  // A claim outlasts one attempt (its timeout, and as much again for recording it).
  const queue = redis ? new RedisDeliveryStore(redis, 2 * timeoutMs) : new MemoryDeliveryStore();
  const policy = new AddressPolicy({ allowHttpHosts: settings.allowHttpHosts });
  const client = new OutboundClient(policy, { timeoutMs, deadlineMs: timeoutMs, maxResponseBytes: 2_048 });
  // The licensees' ids as served now: a reload changes them in place (licenseesChanged).
  const served = settings.licensees.map((account) => account.systemIdentifier);
  const metrics =
    settings.registry &&
    new WebhookMetrics(settings.registry, {
      licensees: served,
      endpoints,
      backlog: (endpointId) => queue.backlog(endpointId),
    });
  const deliveries = new WebhookDeliveries({
    endpoints,
    queue,
    send: (url, body, headers) => client.post(url, body, headers),
    disableAfterMs: settings.disableAfterMs,
    // Shared by replicas: what another queued, or let go by dying, is seen within a second.
    // Its loss and return logged once each, like the other users of Redis: the poll would log each second.
    ...(redis
      ? {
          pollMs: 1_000,
          outage: new OutageLog(logger, {
            lost: 'Redis unreachable: webhook deliveries wait until it is back',
            back: 'Redis reachable again: webhook deliveries go on',
          }),
          keeping: new OutageLog(logger, {
            lost: 'Redis unreachable: webhook changes are kept until it is back',
            back: 'Redis reachable again: the webhook changes kept meanwhile are queued',
          }),
        }
      : {}),
    ...(logger ? { logger } : {}),
    ...(metrics
      ? {
          attempted: (licenseeId, outcome) => metrics.attempted(licenseeId, outcome),
          dropped: (licenseeId, count) => metrics.dropped(licenseeId, count),
        }
      : {}),
  });
  // From the start: a shared queue may hold deliveries no replica is left to send (retries waiting
  // through a restart of every replica); without this look they waited for the next change told.
  deliveries.wake();
  const accounts = new Map(settings.licensees.map((account) => [account.systemIdentifier, account]));
  const memberships = new Map<string, FeedMembership>();
  /** Per licensee, the sync under way: syncs run one after another, so none acts on a stale view. */
  const syncing = new Map<string, Promise<void>>();
  let leading = !redis;
  /** Until when (ms) a replica that lost the role to another keeps its feeds (see `tick`). */
  let keepFeedsUntil = 0;
  const joining = () => leading || Date.now() < keepFeedsUntil;
  let closed = false;

  /** Joins the feeds of the licensee's watched events and leaves the others (only while delivering, or handing over). */
  const sync = (licenseeId: string): Promise<void> => {
    const next = (syncing.get(licenseeId) ?? Promise.resolve()).then(() => syncNow(licenseeId));
    const settled = next.catch(() => undefined);
    syncing.set(licenseeId, settled);
    void settled.then(() => {
      if (syncing.get(licenseeId) === settled) syncing.delete(licenseeId);
    });
    return next;
  };
  const syncNow = async (licenseeId: string) => {
    const account = accounts.get(licenseeId);
    if (!account || closed) return;
    const watched = joining() ? new Set(await endpoints.eventsWatched(licenseeId)) : new Set<number>();
    for (const [key, membership] of memberships)
      if (key.startsWith(`${licenseeId}|`) && !watched.has(Number(key.slice(licenseeId.length + 1)))) {
        memberships.delete(key);
        membership.leave();
      }
    for (const eventId of watched) {
      const key = `${licenseeId}|${eventId}`;
      if (memberships.has(key)) continue;
      try {
        // Never rejects: what cannot be queued now is kept and queued when the stores answer.
        const membership = await feeds.join(account, eventId, (changes) => void deliveries.tell(licenseeId, changes));
        if (closed || !joining()) membership.leave();
        else memberships.set(key, membership);
      } catch (error) {
        // An event the service does not answer for now: the next resync tries again.
        logger?.warn({ err: error, licensee: licenseeId, eventId }, 'webhook feed could not start');
      }
    }
  };
  const syncAll = () => Promise.all([...accounts.keys()].map((licenseeId) => sync(licenseeId).catch(() => undefined)));

  // With replicas, a change made on one is announced, so the delivering replica follows it at once.
  const announcements = redis && new RedisFanout<{ licensee: string }>(redis, 'webhook-endpoints');
  const unsubscribe = announcements?.subscribe(({ licensee }) => void sync(licensee).catch(() => undefined));
  const management = new WebhookManagement({
    endpoints,
    queue,
    deliveries,
    policy,
    changed: (licenseeId) => {
      void sync(licenseeId).catch(() => undefined);
      void announcements?.publish({ licensee: licenseeId }).catch(() => undefined);
    },
    ...(logger ? { audit: logger } : {}),
  });

  const resyncMs = settings.resyncMs ?? 30_000;
  const leaseMs = settings.leaseMs ?? resyncMs;
  const lease = redis && new RedisLease(redis, 'webhooks', leaseMs);
  const tick = async () => {
    if (lease) {
      let holds: boolean;
      try {
        // Ours is extended; one that lapsed while Redis was away is taken back, unless another took it.
        holds = (await lease.acquire()).held;
      } catch {
        // Redis away: the role stays as it was. The holder's feeds go on, their changes kept until
        // Redis is back: leaving them would lose what changes meanwhile. Should another replica
        // take the role (Redis away from this one only), a change both tell is queued once.
        holds = leading;
      }
      if (holds !== leading) {
        leading = holds;
        // Lost to another replica: these feeds go on for a lease, so that the other's, joining
        // meanwhile, overlap them rather than leave a gap (a change told by both is queued once).
        if (!holds) keepFeedsUntil = Date.now() + leaseMs;
        logger?.info(
          { delivering: holds },
          holds ? 'webhooks: this replica queues the changes' : 'webhooks: another replica queues the changes',
        );
      }
    }
    await syncAll();
  };
  // Renewed each third of the lease: the holder keeps it while alive.
  const timer = setInterval(() => void tick(), lease ? Math.min(leaseMs / 3, resyncMs) : resyncMs);
  timer.unref();
  void tick();

  return {
    management,
    deliveries,
    endpoints,
    joined: () => [...memberships.keys()],
    delivering: () => leading,
    licenseesChanged: (next) => {
      accounts.clear();
      for (const account of next) accounts.set(account.systemIdentifier, account);
      served.splice(0, served.length, ...next.map((account) => account.systemIdentifier));
      for (const [key, membership] of memberships)
        if (!accounts.has(key.slice(0, key.lastIndexOf('|')))) {
          memberships.delete(key);
          membership.leave();
        }
      void syncAll();
    },
    close: async () => {
      closed = true;
      clearInterval(timer);
      await (await unsubscribe?.catch(() => undefined))?.().catch(() => undefined);
      for (const membership of memberships.values()) membership.leave();
      memberships.clear();
      await deliveries.close();
      if (lease && leading) await lease.release().catch(() => undefined);
      await client.close();
    },
  };
}
