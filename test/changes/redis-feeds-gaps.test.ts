import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ReservationChange } from '../../src/changes/change.ts';
import { ChangeFeed, type FeedSource } from '../../src/changes/feed.ts';
import { RedisFeedRegistry } from '../../src/changes/redis-registry.ts';
import type { FeedMembership } from '../../src/changes/registry.ts';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import type { UpstreamAccount } from '../../src/upstream/account.ts';
import type { ReservationModel } from '../../src/upstream/records.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { pause, until } from '../helpers/subscriptions.ts';

const serverPath = redisServerOrSkip();

const INTERVAL_MS = 100;
const LEASE_MS = 1_500;
const LICENSEE: UpstreamAccount = { systemIdentifier: '1001', key: 'not-used', timeZone: 'UTC' };
const EVENT = 5001;

/**
 * The reservation service as the feeds see it (as in redis-feeds.test.ts): modification times of
 * whole minutes on its own clock, which runs at real speed from an instant of its own. A
 * replica's baseline read (everything) can be held until the test fails it: a large event's
 * baseline read takes seconds, and may fail.
 */
class Service {
  private readonly records = new Map<number, ReservationModel>();
  private offset = Date.parse('2027-01-05T10:00:00Z') - Date.now();
  private next = 900_001;
  private readonly held = new Map<string, Promise<void>>();
  private readonly pausedPolls = new Map<string, Promise<void>>();
  /** Polls begun and not answered yet, by replica. */
  readonly pollsWaiting = new Map<string, number>();

  constructor(seed: number) {
    for (let i = 0; i < seed; i++) this.create();
  }

  now(): number {
    return Date.now() + this.offset;
  }

  /** Sets the clock this long before its next minute. */
  nextMinuteIn(ms: number): void {
    const now = this.now();
    this.offset += Math.ceil((now + 1) / 60_000) * 60_000 - ms - now;
  }

  create(): number {
    const reservationNumber = this.next++;
    const modifiedDate = new Date(Math.floor(this.now() / 60_000) * 60_000).toISOString();
    const raw = { reservationNumber, status: 'new', modifiedDate, createdDate: modifiedDate };
    this.records.set(reservationNumber, { ...raw, eventId: EVENT, raw } as unknown as ReservationModel);
    return reservationNumber;
  }

  /**
   * The replica's baseline reads wait (after they began) until the returned function fails them, or
   * answers them when called without an error.
   */
  holdBaselines(replica: string): (error?: Error) => void {
    let settle!: { resolve: () => void; reject: (error: Error) => void };
    this.held.set(replica, new Promise<void>((resolve, reject) => (settle = { resolve, reject })));
    return (error) => {
      this.held.delete(replica);
      if (error) settle.reject(error);
      else settle.resolve();
    };
  }

  /** The replica's polls wait (after they read the records) until the returned function is called. */
  pausePolls(replica: string): () => void {
    let release!: () => void;
    this.pausedPolls.set(replica, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.pausedPolls.delete(replica);
      release();
    };
  }

  source(replica: string): FeedSource {
    return {
      read: async (modifiedAfter) => {
        const from = modifiedAfter ? Math.floor(Date.parse(modifiedAfter) / 60_000) * 60_000 : -Infinity;
        const records = [...this.records.values()]
          .filter((record) => Date.parse(record.modifiedDate!) >= from)
          .map((record) => structuredClone(record));
        if (!modifiedAfter) await this.held.get(replica);
        else if (this.pausedPolls.has(replica)) {
          this.pollsWaiting.set(replica, (this.pollsWaiting.get(replica) ?? 0) + 1);
          await this.pausedPolls.get(replica);
          this.pollsWaiting.set(replica, this.pollsWaiting.get(replica)! - 1);
        }
        return records;
      },
    };
  }
}

/**
 * A replica's Redis connection whose pub/sub side the test can break, as a reconnection does: the
 * messages published meanwhile never arrive, and it listens again from a later instant.
 */
function breakable(connection: RedisConnection) {
  let since: number | undefined = Date.now();
  let subscribing: Promise<void> = Promise.resolve();
  const deafened: RedisConnection = {
    commands: connection.commands,
    prefix: connection.prefix,
    replicaId: connection.replicaId,
    connected: () => connection.connected(),
    // A subscription goes live only once the test lets it (a busy Redis answers late).
    subscribe: async (channel, listener) => {
      await subscribing;
      return connection.subscribe(channel, (message) => {
        if (since !== undefined) listener(message);
      });
    },
    publish: (channel, message) => connection.publish(channel, message),
    listeningSince: () => since,
    onReconnect: (listener) => connection.onReconnect(listener),
    close: () => connection.close(),
  };
  return {
    connection: deafened,
    deafen: () => void (since = undefined),
    listenAgain: () => void (since = Date.now()),
    /** Subscriptions asked for from now on go live only when the returned function is called. */
    holdSubscriptions: () => {
      let release!: () => void;
      subscribing = new Promise((resolve) => (release = resolve));
      return release;
    },
  };
}

interface Replica {
  name: string;
  redis: RedisConnection;
  feeds: RedisFeedRegistry;
  deafen(): void;
  listenAgain(): void;
  holdSubscriptions(): () => void;
}

describe.skipIf(!serverPath)('change feeds on Redis: what a replica did not hear is still told', () => {
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
    const prefix = `gaps${++runs}:`;
    replicas = await Promise.all(
      names.map(async (name) => {
        const { connection, deafen, listenAgain, holdSubscriptions } = breakable(
          await openRedis({ url: redis.url, prefix }),
        );
        const serviceNow = () => service.now();
        const createFeed = () =>
          new ChangeFeed({
            source: service.source(name),
            intervalMs: INTERVAL_MS,
            budgetUsed: async () => 0,
            serviceNow,
          });
        const feeds = new RedisFeedRegistry(connection, createFeed, { leaseMs: LEASE_MS });
        return { name, redis: connection, feeds, deafen, listenAgain, holdSubscriptions };
      }),
    );
  }

  const join = (replica: Replica, told: number[]): Promise<FeedMembership> =>
    replica.feeds.join(LICENSEE, EVENT, (changes: readonly ReservationChange[]) => {
      for (const { reservation } of changes) told.push(reservation.reservationNumber);
    });
  const polling = () =>
    replicas.filter((replica) => replica.feeds.active().some((feed) => feed.polling)).map((replica) => replica.name);

  it('a replica that takes over from one whose baseline read failed tells what changed since its subscriber came', async () => {
    await start(['A', 'B']);
    // A polls, and its baseline read takes a while.
    const failA = service.holdBaselines('A');
    const first = join(replicas[0]!, []);
    first.catch(() => {});
    await until(() => polling().includes('A'), 5_000);
    // B's subscriber comes meanwhile: B waits for A's first state.
    const told: number[] = [];
    const second = join(replicas[1]!, told);
    // Changes after B's subscriber came, in the minute before the one B's own baseline read begins in.
    service.nextMinuteIn(300);
    const made = [service.create(), service.create()];
    await pause(400);
    // A's baseline read fails (the service's faults): A told nothing, wrote nothing, and lets go.
    const fault = new Error('503');
    failA(fault);
    await expect(first).rejects.toBe(fault);
    const membership = await second;
    await until(() => made.every((number) => told.includes(number)), 5_000);

    expect(told.filter((number) => made.includes(number)).sort()).toEqual(made);
    expect(polling()).toEqual(['B']);
    membership.leave();
  });

  it('a follower whose topic broke (a reconnection) catches up with what the holder published meanwhile, told once', async () => {
    await start(['A', 'B']);
    const toldA: number[] = [];
    await join(replicas[0]!, toldA);
    await until(() => polling().length === 1, 5_000);
    const followerTold: number[] = [];
    await join(replicas[1]!, followerTold);
    // A polls for both; B hears A's changes on the topic. (A's first poll tells the seed's records,
    // modified in the minute its subscriber came; when A publishes them after B's subscriber came,
    // B catches up with a poller of its own first, which stops once it has.)
    await until(() => polling().length === 1, 5_000);
    expect(polling()).toEqual(['A']);
    const [follower, holderTold] = [replicas[1]!, toldA];

    const before = service.create();
    await until(() => followerTold.includes(before), 5_000);
    // The follower's pub/sub connection breaks: what the holder publishes meanwhile is lost to it.
    follower.deafen();
    const missed = [service.create(), service.create()];
    await until(() => missed.every((number) => holderTold.includes(number)), 5_000);
    follower.listenAgain();
    const after = service.create();
    await until(() => [...missed, after].every((number) => followerTold.includes(number)), 5_000);
    // The follower's own poller stops once it caught up: one poller again.
    await until(() => polling().length === 1, 5_000);

    expect(followerTold.filter((number) => number >= before).sort()).toEqual([before, ...missed, after]);
    expect(polling()).toEqual(['A']);
  });

  it('a replica that polled for itself while deaf to the topic goes on polling until a read begun after it listens again', async () => {
    await start(['A', 'B']);
    const toldA: number[] = [];
    await join(replicas[0]!, toldA);
    await until(() => polling().length === 1, 5_000);
    const told: number[] = [];
    await join(replicas[1]!, told);
    // As above: B may first catch up with what A published after B's subscriber came.
    await until(() => polling().length === 1, 5_000);
    expect(polling()).toEqual(['A']);
    // B stops hearing the topic (its pub/sub connection is down): it polls for its own subscriber.
    replicas[1]!.deafen();
    await until(() => polling().length === 2, 5_000);
    // A change B's poller has not read yet (its poll in flight read before it) and A tells while B is deaf.
    const release = service.pausePolls('B');
    await until(() => (service.pollsWaiting.get('B') ?? 0) > 0, 5_000);
    const missed = service.create();
    await until(() => toldA.includes(missed), 5_000);
    // B hears the topic again and follows A; its poll in flight then ends, without the change.
    replicas[1]!.listenAgain();
    await pause(2 * LEASE_MS);
    release();
    await until(() => told.includes(missed), 5_000);
    await until(() => polling().length === 1, 5_000);

    expect(told.filter((number) => number === missed)).toHaveLength(1);
    expect(polling()).toEqual(['A']);
  });

  it('a follower whose subscription went live late tells what the holder published after its first subscriber came', async () => {
    await start(['A', 'B']);
    const toldA: number[] = [];
    await join(replicas[0]!, toldA);
    await until(() => polling().length === 1, 5_000);
    // B's first subscriber comes; B's subscription to the topic goes live only later (a busy Redis).
    const release = replicas[1]!.holdSubscriptions();
    const told: number[] = [];
    const second = join(replicas[1]!, told);
    // Meanwhile A polls and publishes a change made after B's subscriber came: B is not listening yet.
    const made = service.create();
    // Published, and written after: A's state knows it.
    const seenKey = `${replicas[0]!.redis.prefix}changes:${LICENSEE.systemIdentifier}:${EVENT}:seen`;
    for (let i = 0; !(await replicas[0]!.redis.commands.hexists(seenKey, String(made))); i++) {
      if (i > 250) throw new Error('A never wrote the change to its state');
      await pause(20);
    }
    expect(toldA).toContain(made);
    release();
    const membership = await second;
    const after = service.create();
    await until(() => told.includes(made) && told.includes(after), 5_000);
    // B's catch-up poller stops once it read past the instant it listened from: one poller again.
    await until(() => polling().length === 1, 5_000);

    expect(told.filter((number) => number === made || number === after).sort()).toEqual([made, after]);
    expect(polling()).toEqual(['A']);
    membership.leave();
  });

  it('a replica that holds a feed keeps its lease through a long baseline read: no second baseline read elsewhere', async () => {
    await start(['A', 'B']);
    const answerA = service.holdBaselines('A');
    const toldA: number[] = [];
    const first = join(replicas[0]!, toldA);
    await until(() => polling().includes('A'), 5_000);
    const told: number[] = [];
    const second = join(replicas[1]!, told);
    // Longer than the lease: A's read goes on, and B waits for A's first state rather than reading too.
    await pause(2 * LEASE_MS);
    expect(polling()).toEqual(['A']);
    answerA();
    await first;
    const membership = await second;
    const made = service.create();
    await until(() => told.includes(made) && toldA.includes(made), 5_000);

    expect(polling()).toEqual(['A']);
    membership.leave();
  });

  it('a connection says since when it listens: not while Redis is away, and from a later instant once back, subscribed again', async () => {
    const connection = await openRedis({ url: redis.url, prefix: `gaps${++runs}:` });
    const heard: string[] = [];
    try {
      await connection.subscribe('topic', (message) => heard.push(message));
      const first = connection.listeningSince!();
      expect(first).toBeTypeOf('number');
      await redis.stop();
      await until(() => connection.listeningSince!() === undefined, 5_000);
      await redis.start();
      await until(() => connection.listeningSince!() !== undefined, 10_000);
      expect(connection.listeningSince!()).toBeGreaterThan(first!);
      // Subscribed again by itself: a message published now arrives.
      await until(() => connection.connected(), 10_000);
      const publisher = await openRedis({ url: redis.url, prefix: connection.prefix });
      try {
        for (let i = 0; heard.length === 0 && i < 50; i++) {
          await publisher.publish('topic', 'back');
          await pause(100);
        }
      } finally {
        await publisher.close();
      }
      expect(heard[0]).toBe('back');
    } finally {
      await connection.close();
    }
  });
});
