import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ReservationChange } from '../../src/changes/change.ts';
import { ChangeFeed, type FeedSource } from '../../src/changes/feed.ts';
import { RedisFeedRegistry } from '../../src/changes/redis-registry.ts';
import { type FeedMembership, NO_FOOTPRINT } from '../../src/changes/registry.ts';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import type { UpstreamAccount } from '../../src/upstream/account.ts';
import type { ReservationModel } from '../../src/upstream/records.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { pause, until } from '../helpers/subscriptions.ts';

const serverPath = redisServerOrSkip();

const INTERVAL_MS = 100;
/** Renewed every 500 ms: a busy machine's pauses do not let it lapse. */
const LEASE_MS = 1_500;
const LICENSEE: UpstreamAccount = { systemIdentifier: '1001', key: 'not-used', timeZone: 'UTC' };
const EVENT = 5002;

/**
 * The reservation service as the feeds see it: records with a modification time of whole minutes
 * on its own clock (which moves 20 s per write), read with `modifiedAfterDate`. It notes which
 * replica read, and whether it was a baseline (everything) or a poll.
 */
class Service {
  private readonly records = new Map<number, ReservationModel>();
  private clock = Date.parse('2027-01-05T10:00:00Z');
  private next = 800_001;
  readonly reads: { replica: string; kind: 'baseline' | 'poll' }[] = [];

  constructor(seed: number) {
    for (let i = 0; i < seed; i++) this.create();
  }

  /** A new reservation; its number. */
  create(): number {
    const reservationNumber = this.next++;
    this.write(reservationNumber, 'new', this.stamp());
    return reservationNumber;
  }

  /** A change to a reservation made earlier. */
  change(reservationNumber: number, status: 'accepted' | 'cancelled' = 'accepted'): void {
    this.write(reservationNumber, status, this.records.get(reservationNumber)!.createdDate!);
  }

  source(replica: string): FeedSource {
    return {
      read: async (modifiedAfter) => {
        this.reads.push({ replica, kind: modifiedAfter ? 'poll' : 'baseline' });
        const from = modifiedAfter ? Math.floor(Date.parse(modifiedAfter) / 60_000) * 60_000 : -Infinity;
        return [...this.records.values()]
          .filter((record) => Date.parse(record.modifiedDate!) >= from)
          .map((record) => structuredClone(record));
      },
    };
  }

  private write(reservationNumber: number, status: string, createdDate: string): void {
    const modifiedDate = this.stamp();
    const raw = { reservationNumber, status, modifiedDate, createdDate };
    this.records.set(reservationNumber, { ...raw, eventId: EVENT, raw } as unknown as ReservationModel);
  }

  private stamp(): string {
    this.clock += 20_000;
    return new Date(Math.floor(this.clock / 60_000) * 60_000).toISOString();
  }
}

/** One replica: its own Redis connection and feed registry, polling the shared service. */
interface Replica {
  name: string;
  redis: RedisConnection;
  feeds: RedisFeedRegistry;
}

/** A subscriber: the changes it was told, as `number:status`, in order. */
interface Subscriber {
  told: string[];
  membership: FeedMembership;
}

describe.skipIf(!serverPath)('change feeds across replicas on Redis', () => {
  let redis: TestRedis;
  let service: Service;
  let replicas: Replica[] = [];
  let runs = 0;

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
  });
  afterEach(async () => {
    await Promise.all(
      replicas.map(async ({ feeds, redis }) => {
        await feeds.close();
        await redis.close();
      }),
    );
    replicas = [];
  });
  afterAll(async () => {
    await redis?.close();
  });

  async function start(names: string[]): Promise<void> {
    service = new Service(30);
    const prefix = `feeds${++runs}:`;
    replicas = await Promise.all(
      names.map(async (name) => {
        const connection = await openRedis({ url: redis.url, prefix });
        const createFeed = () =>
          new ChangeFeed({ source: service.source(name), intervalMs: INTERVAL_MS, budgetUsed: async () => 0 });
        return { name, redis: connection, feeds: new RedisFeedRegistry(connection, createFeed, { leaseMs: LEASE_MS }) };
      }),
    );
  }

  async function subscribe(replica: Replica): Promise<Subscriber> {
    const told: string[] = [];
    const membership = await replica.feeds.join(LICENSEE, EVENT, (changes: readonly ReservationChange[]) => {
      for (const { reservation } of changes) told.push(`${reservation.reservationNumber}:${reservation.status}`);
    });
    return { told, membership };
  }

  const polling = () =>
    replicas.filter((replica) => replica.feeds.active().some((feed) => feed.polling)).map((replica) => replica.name);
  const pollsSince = (mark: number) =>
    new Set(
      service.reads
        .slice(mark)
        .filter((read) => read.kind === 'poll')
        .map((read) => read.replica),
    );

  /** Writes one change per step to a record of its own (creations, then changes of the seed), each step after a poll. */
  async function writeChanges(count: number, expected: string[]): Promise<void> {
    for (let i = 0; i < count; i++) {
      if (i % 2 === 0) expected.push(`${service.create()}:new`);
      else {
        const reservationNumber = 800_001 + expected.length;
        service.change(reservationNumber);
        expected.push(`${reservationNumber}:accepted`);
      }
      await pause(INTERVAL_MS * 1.5);
    }
  }

  /** Waits until every subscriber was told `count` changes (and a little longer, for any extra). */
  async function toldAll(subscribers: Subscriber[], count: number): Promise<void> {
    await until(() => subscribers.every((s) => s.told.length >= count), 10_000);
    await pause(4 * INTERVAL_MS);
  }

  it('one replica polls for all; every subscriber on every replica is told each change once, all in the same order', async () => {
    await start(['A', 'B', 'C']);
    const subscribers = [
      await subscribe(replicas[0]!),
      await subscribe(replicas[0]!),
      await subscribe(replicas[1]!),
      await subscribe(replicas[2]!),
    ];
    await until(() => polling().length === 1, 5_000);
    const [poller] = polling();
    const mark = service.reads.length;
    const expected: string[] = [];
    await writeChanges(12, expected);
    await toldAll(subscribers, expected.length);

    // Each change once, and the one poller's order everywhere.
    expect([...subscribers[0]!.told].sort()).toEqual([...expected].sort());
    for (const subscriber of subscribers) expect(subscriber.told).toEqual(subscribers[0]!.told);
    // One baseline read for the four subscribers, and every poll from the one holder.
    expect(service.reads.filter((read) => read.kind === 'baseline')).toHaveLength(1);
    expect([...pollsSince(mark)]).toEqual([poller]);
    expect(polling()).toEqual([poller]);
    // Each replica reports its own subscribers.
    expect(replicas.map((replica) => replica.feeds.active()[0]?.members)).toEqual([2, 1, 1]);
  });

  it('when the polling replica’s subscribers leave, another takes over from the written state: nothing lost, nothing twice, no second baseline', async () => {
    await start(['A', 'B', 'C']);
    const first = await subscribe(replicas[0]!);
    await until(() => polling().length === 1, 5_000);
    const others = await Promise.all([subscribe(replicas[1]!), subscribe(replicas[2]!)]);
    expect(polling()).toEqual(['A']);
    const expected: string[] = [];
    await writeChanges(4, expected);
    await toldAll([first, ...others], expected.length);

    // A's only subscriber leaves: A releases the lease; changes written meanwhile still arrive.
    first.membership.leave();
    expected.push(`${service.create()}:new`);
    await until(() => polling().length === 1 && polling()[0] !== 'A', 5_000);
    await writeChanges(4, expected);
    await toldAll(others, expected.length);

    for (const subscriber of others) expect([...subscriber.told].sort()).toEqual([...expected].sort());
    expect(service.reads.filter((read) => read.kind === 'baseline')).toHaveLength(1);
    expect(replicas[0]!.feeds.active()).toEqual([]);
    // Issue 28: the replica whose subscribers left holds nothing of the feed (no listener, timer or known record).
    expect(replicas[0]!.feeds.footprint()).toEqual(NO_FOOTPRINT);
    expect(replicas[1]!.feeds.footprint()).toMatchObject({ feeds: 1, members: 1, listeners: 1, closers: 1 });
  });

  it('while Redis is away each replica polls for its own subscribers; once back, one polls again, and each change was told once', async () => {
    await start(['A', 'B']);
    const subscribers = [await subscribe(replicas[0]!), await subscribe(replicas[1]!)];
    await until(() => polling().length === 1, 5_000);
    const expected: string[] = [];
    await writeChanges(2, expected);

    await redis.stop();
    await until(() => polling().length === 2, 5_000);
    await writeChanges(4, expected);
    await toldAll(subscribers, expected.length);
    for (const subscriber of subscribers) expect([...subscriber.told].sort()).toEqual([...expected].sort());

    // Back, empty (no persistence): one holder again, going on from its own poller.
    await redis.start();
    await until(() => polling().length === 1, 10_000);
    const mark = service.reads.length;
    await writeChanges(4, expected);
    await toldAll(subscribers, expected.length);

    for (const subscriber of subscribers) expect([...subscriber.told].sort()).toEqual([...expected].sort());
    expect(pollsSince(mark).size).toBe(1);
  });

  it('an unknown event fails the join on every replica, and leaves nothing behind', async () => {
    await start(['A', 'B']);
    const missing = new Error('no such event');
    const failing = (replica: Replica) =>
      new RedisFeedRegistry(
        replica.redis,
        () =>
          new ChangeFeed({
            source: { read: () => Promise.reject(missing) },
            intervalMs: INTERVAL_MS,
            budgetUsed: async () => 0,
          }),
        { leaseMs: LEASE_MS },
      );
    const [a, b] = replicas.map(failing) as [RedisFeedRegistry, RedisFeedRegistry];
    const joins = await Promise.allSettled([a.join(LICENSEE, 999, () => {}), b.join(LICENSEE, 999, () => {})]);
    expect(joins.map((join) => join.status === 'rejected' && join.reason)).toEqual([missing, missing]);
    expect([...a.active(), ...b.active()]).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });
});
