import type { RedisConnection } from '../redis/connection.ts';
import { RedisFanout } from '../redis/fanout.ts';
import { RedisLease } from '../redis/lease.ts';
import type { UpstreamAccount } from '../upstream/account.ts';
import type { ReservationModel } from '../upstream/records.ts';
import { instantOf, type ReservationChange, type SeenRecord, seenAfter } from './change.ts';
import type { ChangeFeed, ChangeListener, FeedStart, FeedState } from './feed.ts';
import { addFootprints, type FeedFootprint, type FeedMembership, type FeedRegistry, NO_FOOTPRINT } from './registry.ts';

/*
 * The change feeds of several replicas on one Redis (docs/architecture.md, "Replicas on Redis"):
 * one poller per licensee and event across all of them, and every subscriber on every replica served.
 *
 * - The replica holding the feed's lease polls, tells its own subscribers, publishes each change
 *   on the feed's fan-out topic and writes what its feed knows (the latest modification and a
 *   hash per record) to Redis, only while the lease is still its own.
 * - The others listen to the topic. Each keeps trying for the lease, so when the holder stops
 *   (its last subscriber left: it releases; it died: the lease lapses) one of them takes over
 *   within a third of the lease and goes on from the written state: it polls from the last
 *   published modification, and knows every record as the old holder did, so nothing changed in
 *   between is lost and nothing already told is a change again.
 * - The holder notes when it last published before it publishes: a replica whose first subscriber
 *   came before its subscription to the topic went live, and the holder published meanwhile,
 *   catches up with a baseline read from its subscriber's arrival. The holder renews its lease
 *   through a long baseline read, so no other replica starts one of the same event meanwhile.
 * - While Redis is away, each replica with subscribers polls the feed itself (in its fallback
 *   share of the budget), keeps what it told, and publishes that once it holds the lease again.
 * - A replica tells each change (record and content) to its subscribers once, whichever way it
 *   came, so the overlaps around a switch reach nobody twice.
 */

/** KEYS: lease, state, seen. ARGV: owner, kept (ms), latest, baseline, replace ('1': the seen map is replaced), then number/record pairs. 0 when the lease is not ours. */
const WRITE_STATE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[5] == '1' then redis.call('DEL', KEYS[3]) end
redis.call('HSET', KEYS[2], 'latest', ARGV[3], 'baseline', ARGV[4])
for i = 6, #ARGV, 2000 do
  redis.call('HSET', KEYS[3], unpack(ARGV, i, math.min(i + 1999, #ARGV)))
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
`;

type ScriptClient = RedisConnection['commands'] & {
  feedWriteState(args: (string | number)[]): Promise<number>;
};

/** While the holder's last-published state has not been written, a replica waiting to follow looks again this soon. */
const WAITING_MS = 100;
/** Changes told while Redis was away, kept to publish once it is back (the oldest go first). */
const MAX_UNSHARED = 10_000;
/** Our own writes' records kept while another replica polls (see SharedFeed.own). */
const MAX_OWN_HEARD = 1_000;
/** Changes remembered per feed to tell each only once. */
const MAX_TOLD = 20_000;
/** The pub/sub connection subscribes again just after it is back: counted as listening this much later. */
const RESUBSCRIBED_MS = 250;

export interface SharedFeedSettings {
  /** How long a lease lasts unrenewed: a replica that dies is replaced within it. */
  leaseMs: number;
  logger?: { warn(details: object, message: string): void };
}

/**
 * A change feed's message to the other replicas: changes its poller found, or records our own
 * write changed (`own`), which only the poller of the event (wherever it runs) takes in and tells.
 */
interface ChangeMessage {
  /** The replica that published it (which told its own subscribers directly). */
  from: string;
  changes: ReservationChange[];
  own?: ReservationModel[];
}

interface Member {
  listener: ChangeListener;
  closed: () => void;
}

export class RedisFeedRegistry implements FeedRegistry {
  private readonly feeds = new Map<string, SharedFeed>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly createFeed: (licensee: UpstreamAccount, eventId: number) => ChangeFeed,
    private readonly settings: SharedFeedSettings,
  ) {}

  join(
    licensee: UpstreamAccount,
    eventId: number,
    listener: ChangeListener,
    closed: () => void = () => {},
  ): Promise<FeedMembership> {
    const key = `${licensee.systemIdentifier}:${eventId}`;
    let feed = this.feeds.get(key);
    if (!feed) {
      const created: SharedFeed = new SharedFeed(
        this.redis,
        { licenseeId: licensee.systemIdentifier, eventId },
        () => this.createFeed(licensee, eventId),
        this.settings,
        () => {
          if (this.feeds.get(key) === created) this.feeds.delete(key);
        },
      );
      this.feeds.set(key, created);
      feed = created;
    }
    return feed.join({ listener, closed });
  }

  active() {
    return [...this.feeds.values()].map((feed) => feed.describe());
  }

  footprint(): FeedFootprint {
    let sum = NO_FOOTPRINT;
    for (const feed of this.feeds.values()) sum = addFootprints(sum, feed.footprint());
    return sum;
  }

  async watching(licensee: UpstreamAccount, eventId: number): Promise<boolean> {
    if (this.feeds.has(`${licensee.systemIdentifier}:${eventId}`)) return true;
    // A feed of another replica holds the event's lease.
    const lease = RedisLease.keyOf(this.redis, feedName(licensee.systemIdentifier, eventId));
    return (await this.redis.commands.exists(lease).catch(() => 0)) === 1;
  }

  eventsWatched(licensee: UpstreamAccount): number[] {
    return [...this.feeds.values()]
      .map((feed) => feed.describe())
      .filter((feed) => feed.licenseeId === licensee.systemIdentifier)
      .map((feed) => feed.eventId);
  }

  async publish(licensee: UpstreamAccount, eventId: number, records: readonly ReservationModel[]): Promise<void> {
    // Here when this replica polls the event; the others' poller hears it on the feed's topic.
    this.feeds.get(`${licensee.systemIdentifier}:${eventId}`)?.own(records);
    const message: ChangeMessage = { from: this.redis.replicaId, changes: [], own: [...records] };
    await new RedisFanout<ChangeMessage>(this.redis, feedName(licensee.systemIdentifier, eventId))
      .publish(message)
      .catch(() => {
        // Without Redis each replica polls for itself: the others see the write at their next poll.
      });
  }

  async close(): Promise<void> {
    const feeds = [...this.feeds.values()];
    this.feeds.clear();
    await Promise.all(feeds.map((feed) => feed.close(true)));
  }
}

type Role = 'follower' | 'holder' | 'alone';
/** What the holder wrote: its feed's state, and when (its clock, ms) it last published changes (-Infinity: never). */
type WrittenState = FeedState & { published: number };
type Outcome = 'ready' | 'waiting';

/** One licensee's event on this replica: its subscribers here, and this replica's part in its one poller. */
class SharedFeed {
  private readonly members = new Set<Member>();
  private role: Role = 'follower';
  private poller?: ChangeFeed;
  /** The latest modification heard of, from this replica's polls or another's (the service's clock). */
  private heard = -Infinity;
  /** Keys of the changes told to this replica's subscribers, oldest first. */
  private readonly told = new Set<string>();
  /** This replica's subscribers waited on another replica's feed (see `fromHeard`). */
  private followed = false;
  /** Our own writes' records heard while this replica had no poller (see `own`), oldest first. */
  private ownHeard: ReservationModel[] = [];
  /** Changes this replica polled that other replicas have not been sent (Redis was away). */
  private unshared: ReservationChange[] = [];
  /** Whether Redis may hold less than the poller knows (a write failed): written whole at the next chance. */
  private dirty = false;
  /** When (our clock) the first subscriber here came: what it must be told starts there. */
  private readonly joinedAt = Date.now();
  /**
   * Since when (our clock) the topic's messages have reached this replica without a break, as last
   * looked at (undefined: not listening). Messages published before may have been missed.
   */
  private listening?: number;
  /**
   * This replica follows now, but its own poller goes on until a read of it that began at or after
   * this instant (our clock) has finished: every change published before this replica listened
   * again is then told.
   */
  private handoverFrom = Infinity;
  /** The poller reads only to catch up with what the topic may have missed (see `catchUp`). */
  private catchingUp = false;
  /** The topic's messages may have been missed, and no poller of this replica caught up yet. */
  private behind = false;
  /**
   * Whether this replica is yet to learn if the holder published before it first listened (and
   * after its first subscriber came): false once a poller of its own started, or it looked.
   */
  private firstListen = true;
  /** The catch-up starts from when the first subscriber came (what the holder published before this replica first listened). */
  private behindSinceJoined = false;
  private subscription?: Promise<() => Promise<void>>;
  private over = false;
  private wake?: () => void;
  private readonly ready: Promise<void>;
  private settle!: { resolve: () => void; reject: (error: unknown) => void; done: boolean };
  private released?: Promise<void>;
  private readonly lease: RedisLease;
  private readonly fanout: RedisFanout<ChangeMessage>;
  private readonly stateKey: string;
  private readonly seenKey: string;

  constructor(
    private readonly redis: RedisConnection,
    private readonly id: { licenseeId: string; eventId: number },
    private readonly createFeed: () => ChangeFeed,
    private readonly settings: SharedFeedSettings,
    private readonly forget: () => void,
  ) {
    const name = feedName(id.licenseeId, id.eventId);
    this.lease = new RedisLease(redis, name, settings.leaseMs);
    this.fanout = new RedisFanout(redis, name);
    this.stateKey = `${redis.prefix}${name}:state`;
    this.seenKey = `${redis.prefix}${name}:seen`;
    const client = redis.commands;
    if (!('feedWriteState' in client)) client.defineCommand('feedWriteState', { numberOfKeys: 3, lua: WRITE_STATE });
    this.ready = new Promise((resolve, reject) => (this.settle = { resolve, reject, done: false }));
    // A failed start is told to the members waiting for it; with none left, nobody needs to hear it.
    this.ready.catch(() => {});
    void this.run();
  }

  async join(member: Member): Promise<FeedMembership> {
    this.members.add(member);
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      this.members.delete(member);
      if (this.members.size === 0) void this.close(false);
    };
    try {
      await this.ready;
    } catch (error) {
      leave();
      throw error;
    }
    return { latestModification: () => Math.max(this.heard, this.poller?.latestModification() ?? -Infinity), leave };
  }

  /** Members here (each its listener and closer), and this replica's poller's part, if it polls. */
  footprint(): Partial<FeedFootprint> {
    const { listeners = 0, timers = 0, known = 0 } = this.poller?.footprint() ?? {};
    const members = this.members.size;
    // The poller's one listener is this feed's; the members' listeners are kept as members.
    return { feeds: 1, members, listeners: members + Math.max(0, listeners - 1), closers: members, timers, known };
  }

  describe() {
    return {
      ...this.id,
      members: this.members.size,
      polls: this.poller?.pollCount() ?? 0,
      polling: this.poller !== undefined,
    };
  }

  /**
   * Stops this replica's part and releases the lease if held, without waiting for a step in flight
   * (a baseline read may take a while; a lease it takes meanwhile is released when it ends, or
   * lapses). `ending` also ends the members' streams (shutdown).
   */
  close(ending: boolean): Promise<void> {
    if (!this.over) {
      this.over = true;
      this.forget();
      this.stopPoller();
      this.wake?.();
      if (ending) for (const { closed } of [...this.members]) closed();
      this.released = this.release();
    }
    return this.released!;
  }

  /** Decides this replica's part every third of the lease (sooner while waiting for the holder's first state). */
  private async run(): Promise<void> {
    try {
      while (!this.over) {
        const outcome = await this.step().catch((error: unknown) => this.failed(error));
        if (outcome === 'ready' && !this.settle.done) {
          this.settle.done = true;
          this.settle.resolve();
        }
        if (!this.over) await this.pause(outcome === 'waiting' ? WAITING_MS : this.settings.leaseMs / 3);
      }
    } finally {
      this.stopPoller();
      if (!this.settle.done) this.settle.reject(new Error('the change feed closed'));
      await this.release();
    }
  }

  /** Gives the lease up (fenced by owner: a lease that is not ours is left alone) and stops listening. */
  private async release(): Promise<void> {
    await this.lease.release().catch(() => false);
    await (await this.subscription?.catch(() => undefined))?.().catch(() => undefined);
  }

  private async step(): Promise<Outcome> {
    this.subscription ??= this.fanout.subscribe((message) => this.heardFrom(message));
    // Subscribing failed (Redis away): try again next time.
    if (
      !(await this.subscription.then(
        () => true,
        () => false,
      ))
    )
      this.subscription = undefined;
    // A connection that cannot tell when it listened again is taken to listen since it subscribed.
    const listening = !this.subscription ? undefined : this.redis.listeningSince ? this.redis.listeningSince() : 0;
    // The topic's messages stopped reaching this replica meanwhile (Redis restarted, say): some may be lost.
    const missed = this.listening !== undefined && listening !== this.listening;
    this.listening = listening;
    let held: boolean | undefined;
    try {
      held = this.role === 'holder' ? await this.renew() : (await this.lease.acquire()).held;
    } catch {
      held = undefined;
    }
    if (this.over) return 'ready';
    if (held === undefined) return this.redisFailed();
    if (held) return this.hold();
    // Not hearing the holder's changes: this replica polls for its own subscribers until it does.
    if (listening === undefined) return this.alone();
    return this.follow(Math.max(Date.now(), listening + RESUBSCRIBED_MS), missed);
  }

  /**
   * A Redis command failed. With the connection down, this replica polls for itself; with it up
   * (a command too slow on a busy machine), nothing changes until the next step: a replica that
   * took every slow answer for an outage would start a poller of its own, and a baseline read.
   */
  private redisFailed(): Outcome | Promise<Outcome> {
    if (!this.redis.connected()) return this.alone();
    return this.settle.done ? 'ready' : 'waiting';
  }

  /** Redis is away (the connection is down): this replica polls for its own subscribers, as the others with subscribers do. */
  private async alone(): Promise<Outcome> {
    if (this.role !== 'alone') {
      this.settings.logger?.warn(
        { licensee: this.id.licenseeId, eventId: this.id.eventId },
        'Redis unreachable: this replica polls the change feed itself until Redis is back',
      );
      this.role = 'alone';
    }
    if (!this.poller) await this.startPoller(this.fromHeard());
    return 'ready';
  }

  /** This replica holds the lease: it polls, going on from what the last holder wrote. */
  private async hold(): Promise<Outcome> {
    if (this.role !== 'holder') {
      // A poller that only caught up knows too little to go on from (its records are not all known).
      if (this.catchingUp) this.stopPoller();
      const wasAlone = this.poller !== undefined;
      this.role = 'holder';
      if (wasAlone) {
        // Its own poller went on while Redis was away: what it knows is the newest there is.
        this.dirty = true;
      } else {
        let state: WrittenState | undefined;
        try {
          state = await this.readState();
        } catch {
          // Still the lease's holder in Redis: the next step takes it again (the same owner may).
          this.role = 'follower';
          return this.redisFailed();
        }
        // Published after our first subscriber came, before we listened: known to the state, never
        // told here. A baseline read from that instant tells it (and knows every record as well).
        const missedFirst = this.firstListen && state !== undefined && state.published >= this.joinedAt;
        try {
          await this.keepingLease(
            this.startPoller(state && !missedFirst ? { resume: state } : this.fromHeard(missedFirst)),
          );
        } catch (error) {
          // The event is unknown, or the service cannot be read: another replica may try.
          this.role = 'follower';
          await this.lease.release().catch(() => false);
          throw error;
        }
        this.dirty = !state || missedFirst;
      }
    }
    await this.share();
    return 'ready';
  }

  /**
   * Another replica holds the lease: its changes arrive on the topic. Ready once it wrote its first
   * state. The topic tells only what is published while this replica listens: a replica that polled
   * itself until now (Redis was away, or it held the lease) goes on polling until a read begun after
   * it listened again has finished, and a follower that `missed` messages (the topic's connection
   * broke since the last step) catches up with a poller of its own, read from where it heard up to.
   */
  private async follow(listenedFrom: number, missed: boolean): Promise<Outcome> {
    this.followed = true;
    if (this.role !== 'follower') {
      this.role = 'follower';
      this.unshared = [];
      this.handoverFrom = listenedFrom;
    }
    let fields: (string | null)[];
    try {
      fields = await this.redis.commands.hmget(this.stateKey, 'latest', 'published');
    } catch {
      return this.redisFailed();
    }
    const [latest = null, published = null] = fields;
    // Listening now, never having polled: what the holder published after our first subscriber came
    // and before this replica listened never reached it.
    if (this.firstListen && !this.poller) {
      this.firstListen = false;
      if (published !== null && Number(published) >= this.joinedAt) this.behind = this.behindSinceJoined = true;
    }
    if (missed) this.behind = true;
    if (this.behind) {
      this.handoverFrom = listenedFrom;
      // A catch-up that failed (its baseline read) is tried again at the next step.
      if (!this.poller) await this.catchUp();
      this.behind = this.behindSinceJoined = false;
    }
    if (this.poller && this.poller.readBegan() >= this.handoverFrom) {
      this.stopPoller();
      this.unshared = [];
    }
    if (latest === null) return 'waiting';
    this.heard = Math.max(this.heard, Number(latest));
    return 'ready';
  }

  /** A start failed: the first one fails the members waiting (an unknown event); later ones are retried. */
  private failed(error: unknown): Outcome {
    if (!this.settle.done) {
      this.settle.done = true;
      this.settle.reject(error);
      void this.close(false);
      return 'ready';
    }
    this.settings.logger?.warn(
      { licensee: this.id.licenseeId, eventId: this.id.eventId, error: (error as Error).name },
      'change feed could not take over; trying again',
    );
    return 'ready';
  }

  private async startPoller(from: FeedStart | undefined): Promise<void> {
    if (this.over) return;
    // Polling from its first subscriber's arrival (or from a state that knows everything published).
    this.firstListen = false;
    const poller = this.createFeed();
    poller.listen((changes) => this.polled(changes));
    this.poller = poller;
    const owed = this.ownHeard;
    this.ownHeard = [];
    try {
      await poller.start(from);
    } catch (error) {
      poller.stop();
      if (this.poller === poller) this.poller = undefined;
      throw error;
    }
    poller.recordOwed(owed);
  }

  private stopPoller(): void {
    this.poller?.stop();
    this.poller = undefined;
    this.catchingUp = false;
    this.handoverFrom = Infinity;
  }

  /**
   * From where this replica heard up to, or, when it heard nothing, from when its first subscriber
   * came (a poller that started the moment it began would miss what changed while this replica
   * waited for another's baseline read, which that replica may have stopped before telling). A
   * fresh read tells nothing of that minute that the read finds as it was (feed.ts, `start`), unless
   * this replica's subscribers waited on another replica, whose changes since they came it may
   * have missed (`sinceJoined`: the holder published some): it tells that minute's records too.
   */
  private fromHeard(sinceJoined = false): FeedStart {
    if (this.heard !== -Infinity && !sinceJoined) return { heardUpTo: this.heard };
    return { askedAt: this.joinedAt, missed: sinceJoined || this.followed };
  }

  /**
   * A poller of this replica's own until the handover stops it: without a baseline read when this
   * replica heard a change, telling every record modified since (a change already told is not told
   * again); else a baseline read from when its first subscriber came.
   */
  private async catchUp(): Promise<void> {
    if (this.behindSinceJoined || this.heard === -Infinity) return this.startPoller(this.fromHeard(true));
    const from = Math.floor(this.heard / 60_000) * 60_000;
    await this.startPoller({ resume: { seen: new Map(), latest: from, baseline: from } });
    this.catchingUp = true;
  }

  /** This replica's poller found changes: its subscribers first, then (as holder) the other replicas. */
  private polled(changes: readonly ReservationChange[]): void {
    this.tell(changes);
    this.unshared.push(...changes);
    if (this.unshared.length > MAX_UNSHARED) this.unshared.splice(0, this.unshared.length - MAX_UNSHARED);
    if (this.role === 'holder') void this.share();
  }

  /** Publishes what the other replicas have not been sent, then writes what the poller knows (while the lease is ours). */
  private async share(): Promise<void> {
    const poller = this.poller;
    if (!poller) return;
    const changes = this.unshared;
    this.unshared = [];
    try {
      if (changes.length > 0) {
        // When, first: a replica that listens only from later reads it, and catches up (see `follow`).
        const kept = 3 * this.settings.leaseMs;
        await this.redis.commands
          .multi()
          .hset(this.stateKey, 'published', Date.now())
          .pexpire(this.stateKey, kept)
          .exec();
        await this.fanout.publish({ from: this.redis.replicaId, changes });
      }
    } catch {
      this.unshared = changes.concat(this.unshared);
      this.dirty = true;
      return;
    }
    const whole = this.dirty;
    if (changes.length === 0 && !whole) return;
    // While its baseline read goes on, the poller knows only part of the event: a successor must
    // not take that for all of it (it reads its own baseline instead); the whole is written after.
    if (!poller.baselineRead()) {
      this.dirty = true;
      return;
    }
    const { latest, baseline, seen } = poller.state();
    const entries: Iterable<[number, SeenRecord]> = whole ? seen : changes.map(seenAfter);
    const args: (string | number)[] = [
      this.lease.key,
      this.stateKey,
      this.seenKey,
      this.redis.replicaId,
      3 * this.settings.leaseMs,
      String(latest),
      String(baseline),
      whole ? 1 : 0,
    ];
    for (const [number, record] of entries) args.push(number, `${record.hash}|${record.cancelled ? 1 : 0}`);
    try {
      const written = (await (this.redis.commands as ScriptClient).feedWriteState(args)) === 1;
      if (whole && written) this.dirty = false;
      // The lease went to another replica: it polls now, and this poller stops at the next step.
      if (!written) this.dirty = true;
    } catch {
      this.dirty = true;
    }
  }

  /**
   * Renews the lease every third of it until `work` (a baseline read, which takes a while on a large
   * event) ends: `run` renews it only between steps, and a lease that lapsed meanwhile would start
   * another replica's baseline read of the same event.
   */
  private async keepingLease<T>(work: Promise<T>): Promise<T> {
    const timer = setInterval(() => void this.lease.renew().catch(() => false), this.settings.leaseMs / 3);
    try {
      return await work;
    } finally {
      clearInterval(timer);
    }
  }

  /** Renews the lease, and keeps the written state as long as it. */
  private async renew(): Promise<boolean> {
    if (!(await this.lease.renew())) return false;
    const kept = 3 * this.settings.leaseMs;
    await this.redis.commands.multi().pexpire(this.stateKey, kept).pexpire(this.seenKey, kept).exec();
    return true;
  }

  private async readState(): Promise<WrittenState | undefined> {
    const results = await this.redis.commands.multi().hgetall(this.stateKey).hgetall(this.seenKey).exec();
    const [state, seen] = (results ?? []).map(([error, value]) => {
      if (error) throw error;
      return value as Record<string, string>;
    });
    if (!state?.latest) return undefined;
    const published = state.published === undefined ? -Infinity : Number(state.published);
    const records = new Map<number, SeenRecord>();
    for (const [number, value] of Object.entries(seen ?? {})) {
      const [hash = '', cancelled] = value.split('|');
      records.set(Number(number), { hash, cancelled: cancelled === '1' });
    }
    return { seen: records, latest: Number(state.latest), baseline: Number(state.baseline), published };
  }

  /** Another replica's changes (this replica's own were told when polled), or its own write's records. */
  private heardFrom(message: ChangeMessage): void {
    if (message.from === this.redis.replicaId || this.over) return;
    if (message.own) return this.own(message.own);
    this.tell(message.changes);
  }

  /**
   * Records our own write changed: the poller, when it runs here, tells them (and shares them as it
   * polled them). Without one, they are kept for a fresh read this replica may start (the holder
   * may stop before telling them, and its successor's read cannot tell them from what was there
   * before its subscribers came).
   */
  own(records: readonly ReservationModel[]): void {
    if (this.poller) return this.poller.record(records);
    this.ownHeard.push(...records);
    if (this.ownHeard.length > MAX_OWN_HEARD) this.ownHeard.splice(0, this.ownHeard.length - MAX_OWN_HEARD);
  }

  /** Tells this replica's subscribers the changes they have not been told. */
  private tell(changes: readonly ReservationChange[]): void {
    const fresh = changes.filter((change) => !this.told.has(change.key));
    for (const change of fresh) {
      this.heard = Math.max(this.heard, instantOf(change.modifiedAt));
      this.told.add(change.key);
    }
    for (const key of this.told) {
      if (this.told.size <= MAX_TOLD) break;
      this.told.delete(key);
    }
    if (fresh.length === 0) return;
    for (const { listener } of this.members) listener(fresh);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** The name of an event's feed: its lease, state and topic. */
const feedName = (licenseeId: string, eventId: number) => `changes:${licenseeId}:${eventId}`;
