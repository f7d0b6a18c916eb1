import type { UpstreamAccount } from '../upstream/account.ts';
import type { ReservationModel } from '../upstream/records.ts';
import { ChangeFeed, type ChangeListener } from './feed.ts';

/** A subscriber's place in a feed. */
export interface FeedMembership {
  /** The latest modification the feed has seen, on the service's clock (ms; -Infinity for none). */
  latestModification(): number;
  /** Leaves the feed; the last member to leave stops its poller. */
  leave(): void;
}

/**
 * What the feeds of this replica hold now (tests, the status page): with no subscriber left, every
 * count is zero. `known` is the records (number and hash) the pollers remember.
 */
export interface FeedFootprint {
  feeds: number;
  members: number;
  listeners: number;
  closers: number;
  timers: number;
  known: number;
}

export const NO_FOOTPRINT: FeedFootprint = { feeds: 0, members: 0, listeners: 0, closers: 0, timers: 0, known: 0 };

/** The sum of footprints. */
export const addFootprints = (a: FeedFootprint, b: Partial<FeedFootprint>): FeedFootprint => ({
  feeds: a.feeds + (b.feeds ?? 0),
  members: a.members + (b.members ?? 0),
  listeners: a.listeners + (b.listeners ?? 0),
  closers: a.closers + (b.closers ?? 0),
  timers: a.timers + (b.timers ?? 0),
  known: a.known + (b.known ?? 0),
});

/**
 * Where subscribers find the one feed of a licensee's event: in memory (LocalFeedRegistry, one
 * poller per licensee and event in this process), or across replicas on Redis (RedisFeedRegistry,
 * one poller for all of them).
 */
export interface FeedRegistry {
  /**
   * Joins (starting it for the first member, after its baseline read); rejects when the baseline
   * read fails. `closed` is told when the registry closes (the gateway shuts down), to end the stream.
   */
  join(
    licensee: UpstreamAccount,
    eventId: number,
    listener: ChangeListener,
    closed?: () => void,
  ): Promise<FeedMembership>;
  /**
   * The feeds with subscribers on this replica (metrics, status page): `polling` when this replica
   * polls it (with replicas, one of them does), `polls` its polls since it began.
   */
  active(): { licenseeId: string; eventId: number; members: number; polls: number; polling: boolean }[];
  /**
   * Whether the event has a feed (here, or with replicas on any of them): only then is our own
   * write worth a read of what it changed.
   */
  watching(licensee: UpstreamAccount, eventId: number): Promise<boolean>;
  /**
   * Our own write changed these records (as the service holds them now): the event's feed tells
   * them at once, on every replica, and not again when a poll later reads them.
   */
  publish(licensee: UpstreamAccount, eventId: number, records: readonly ReservationModel[]): Promise<void>;
  /** The events of a licensee with a feed on this replica. */
  eventsWatched(licensee: UpstreamAccount): number[];
  /** What the feeds hold now (see FeedFootprint). */
  footprint(): FeedFootprint;
  /** Stops every poller and ends every member's stream. */
  close(): void | Promise<void>;
}

interface Running {
  feed: ChangeFeed;
  started: Promise<void>;
  members: number;
  /** Each member's `closed`. */
  closers: Set<() => void>;
  licenseeId: string;
  eventId: number;
}

export class LocalFeedRegistry implements FeedRegistry {
  private readonly feeds = new Map<string, Running>();

  constructor(private readonly createFeed: (licensee: UpstreamAccount, eventId: number) => ChangeFeed) {}

  async join(
    licensee: UpstreamAccount,
    eventId: number,
    listener: ChangeListener,
    closed: () => void = () => {},
  ): Promise<FeedMembership> {
    const key = `${licensee.systemIdentifier}|${eventId}`;
    let running = this.feeds.get(key);
    if (!running) {
      const feed = this.createFeed(licensee, eventId);
      running = {
        feed,
        started: feed.start(),
        members: 0,
        closers: new Set(),
        licenseeId: licensee.systemIdentifier,
        eventId,
      };
      this.feeds.set(key, running);
    }
    const joined = running;
    joined.members++;
    const unlisten = joined.feed.listen(listener);
    joined.closers.add(closed);
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      unlisten();
      joined.closers.delete(closed);
      if (--joined.members > 0) return;
      joined.feed.stop();
      if (this.feeds.get(key) === joined) this.feeds.delete(key);
    };
    try {
      await joined.started;
    } catch (error) {
      // A failed baseline read leaves no feed behind: the next subscriber tries afresh.
      if (this.feeds.get(key) === joined) this.feeds.delete(key);
      leave();
      throw error;
    }
    return { latestModification: () => joined.feed.latestModification(), leave };
  }

  active() {
    return [...this.feeds.values()].map(({ licenseeId, eventId, members, feed }) => ({
      licenseeId,
      eventId,
      members,
      polls: feed.pollCount(),
      polling: true,
    }));
  }

  footprint(): FeedFootprint {
    let sum = NO_FOOTPRINT;
    for (const { feed, members, closers } of this.feeds.values())
      sum = addFootprints(sum, { feeds: 1, members, closers: closers.size, ...feed.footprint() });
    return sum;
  }

  async watching(licensee: UpstreamAccount, eventId: number): Promise<boolean> {
    return this.feeds.has(`${licensee.systemIdentifier}|${eventId}`);
  }

  eventsWatched(licensee: UpstreamAccount): number[] {
    return [...this.feeds.values()]
      .filter((running) => running.licenseeId === licensee.systemIdentifier)
      .map((running) => running.eventId);
  }

  async publish(licensee: UpstreamAccount, eventId: number, records: readonly ReservationModel[]): Promise<void> {
    const running = this.feeds.get(`${licensee.systemIdentifier}|${eventId}`);
    if (!running) return;
    // After the baseline read: a record told before it would be known to it anyway.
    await running.started.catch(() => {});
    running.feed.record(records);
  }

  close(): void {
    const running = [...this.feeds.values()];
    this.feeds.clear();
    for (const { feed, closers } of running) {
      feed.stop();
      for (const closed of [...closers]) closed();
    }
  }
}
