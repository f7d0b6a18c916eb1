import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { CachedType } from '../../config/response-cache-ttls.ts';
import type { RedisConnection } from '../../redis/connection.ts';

/**
 * The response cache's drops across replicas: each replica keeps its own answers, and a mutation
 * through one drops what it changed on all of them (docs/architecture.md, "Response cache").
 *
 * A drop is announced on Redis pub/sub, and it also takes the next number of its licensee's drop
 * counter in the same script, so that a replica can tell, without trusting the timing of the
 * announcement, whether it has heard every drop made so far: a replica about to serve a kept
 * answer reads the counter and serves it only when it has heard up to that number. The mutating
 * replica answers once its own announcement came back, but another replica reads its socket to
 * Redis in its own time: a client that reads through it at once may come first (two replicas in
 * one process under load did). The read joins one in flight per licensee only when that one was
 * sent after the hit began, so every hit sees a count at least as new as any drop answered before.
 *
 * While Redis is away a replica serves what it kept (as long as each answer's lifetime allows), the
 * drops it could not announce are announced when Redis is back, and it lets go of every answer
 * kept meanwhile (they may predate a drop it could not hear).
 */
export interface DropMessage {
  licensee: string;
  types: CachedType[];
}

/** How long a mutation's answer waits at most to hear its response-cache drop back from Redis. */
const ECHO_WAIT_MS = 250;
/** Response-cache drops kept while Redis is away, to announce when it is back. */
const MAX_OWED_DROPS = 1_000;
/** The channel (`fanout:` like src/redis/fanout.ts's topics, prefixed by REDIS_PREFIX). */
const CHANNEL = 'fanout:response-cache-invalidations';

/**
 * KEYS: the licensee's drop counter. ARGV: the channel, the message as JSON (an object). Publishes
 * the message with the counter's new value as `generation`; the message is built by concatenation
 * (Lua's cjson would print an empty `types` list as an object).
 */
const COUNT_AND_PUBLISH = `
local generation = redis.call('INCR', KEYS[1])
local message = ARGV[2]
redis.call('PUBLISH', ARGV[1], string.sub(message, 1, -2) .. ',"generation":' .. generation .. '}')
return generation
`;

type ScriptClient = RedisConnection['commands'] & {
  responseCacheDrop(counter: string, channel: string, message: string): Promise<number>;
};

interface CounterReads {
  /** The read in flight (sent when it was made). */
  sent?: Promise<number>;
  /** The read to be sent once `sent` is answered, which hits that began meanwhile join. */
  queued?: Promise<number>;
}

export class ReplicaDrops {
  private readonly redis: ScriptClient;
  /** Per licensee, the highest drop number this replica has applied to its cache. */
  private readonly heard = new Map<string, number>();
  private readonly reads = new Map<string, CounterReads>();
  private readonly echoes = new Map<string, () => void>();
  private readonly owed: DropMessage[] = [];
  private unsubscribe: Promise<(() => Promise<void>) | undefined> = Promise.resolve(undefined);

  constructor(
    private readonly connection: RedisConnection,
    /** The licensees whose answers this replica may keep (their counters are read at start; a reload's added ones by `follow`). */
    private readonly licensees: readonly string[],
    /** Drops a licensee's kept answers holding these types. */
    private readonly drop: (message: DropMessage) => void,
    /** Lets go of every kept answer (Redis back after a loss). */
    private readonly dropAll: () => void,
    private readonly logger?: Logger,
  ) {
    this.redis = connection.commands as ScriptClient;
    if (!('responseCacheDrop' in connection.commands))
      connection.commands.defineCommand('responseCacheDrop', { numberOfKeys: 1, lua: COUNT_AND_PUBLISH });
    connection.onReconnect(() => {
      this.dropAll();
      void this.readCounters();
      for (const message of this.owed.splice(0)) void this.announce(message).catch(() => this.owe(message));
    });
  }

  /** Starts hearing other replicas' drops; what was counted before now is taken as heard (nothing is kept yet). */
  listen(): Promise<void> {
    this.unsubscribe = this.connection
      .subscribe(CHANNEL, (text) => this.hear(JSON.parse(text) as DropMessage & { id?: string; generation?: number }))
      .then(
        async (unsubscribe) => {
          await this.readCounters();
          return unsubscribe;
        },
        (error: unknown) => {
          this.logger?.warn({ err: error }, 'Redis unreachable: response-cache drops of other replicas are not heard');
          return undefined;
        },
      );
    return this.unsubscribe.then(() => undefined);
  }

  /**
   * Announces the drop of what a mutation changed, and resolves once this replica heard it back (at
   * most ECHO_WAIT_MS): every replica's next read of the counter then sees it. Never rejects.
   */
  async publish(message: DropMessage): Promise<void> {
    try {
      await this.announce(message);
    } catch (error) {
      // The mutation was applied and is answered; the other replicas drop their answers when Redis is back.
      this.owe(message);
      this.logger?.warn(
        { err: error, licensee: message.licensee },
        'Redis unreachable: other replicas drop the answers this mutation changed once it is back',
      );
    }
  }

  /**
   * Whether this replica has heard every drop of the licensee's answers announced before now (a
   * kept answer may be served). True when Redis cannot say: what was kept is served, as before
   * any drop could be announced.
   */
  async heardEvery(licensee: string): Promise<boolean> {
    const counted = await this.counted(licensee).catch(() => undefined);
    return counted === undefined || counted <= (this.heard.get(licensee) ?? 0);
  }

  async close(): Promise<void> {
    await (await this.unsubscribe)?.();
  }

  private async announce(message: DropMessage): Promise<void> {
    const id = randomUUID();
    const heard = new Promise<void>((resolve) => {
      this.echoes.set(id, resolve);
      setTimeout(resolve, ECHO_WAIT_MS).unref();
    });
    try {
      await this.redis.responseCacheDrop(
        this.counterKey(message.licensee),
        this.connection.prefix + CHANNEL,
        JSON.stringify({ licensee: message.licensee, types: message.types, id }),
      );
      await heard;
    } finally {
      this.echoes.delete(id);
    }
  }

  private hear({ licensee, types, id, generation }: DropMessage & { id?: string; generation?: number }): void {
    this.drop({ licensee, types });
    if (generation !== undefined) this.noteHeard(licensee, generation);
    if (id) this.echoes.get(id)?.();
  }

  private noteHeard(licensee: string, generation: number): void {
    if (generation > (this.heard.get(licensee) ?? 0)) this.heard.set(licensee, generation);
  }

  private owe(message: DropMessage): void {
    if (this.owed.length < MAX_OWED_DROPS) this.owed.push(message);
  }

  /** Licensees a reload added: nothing of theirs is kept here yet, so every drop counted so far is heard. */
  async follow(licensees: readonly string[]): Promise<void> {
    if (licensees.length === 0) return;
    const counts = await this.redis
      .mget(...licensees.map((licensee) => this.counterKey(licensee)))
      .catch(() => undefined);
    counts?.forEach((count, n) => this.noteHeard(licensees[n]!, Number(count ?? 0)));
  }

  /** Takes every licensee's counter as heard: called once this replica's cache holds nothing older. */
  private async readCounters(): Promise<void> {
    if (this.licensees.length === 0) return;
    const counts = await this.redis
      .mget(...this.licensees.map((licensee) => this.counterKey(licensee)))
      .catch(() => undefined);
    counts?.forEach((count, n) => this.noteHeard(this.licensees[n]!, Number(count ?? 0)));
  }

  /** The licensee's drop counter, from a read sent after this call began (joined when one is queued). */
  private counted(licensee: string): Promise<number> {
    let reads = this.reads.get(licensee);
    if (!reads) this.reads.set(licensee, (reads = {}));
    if (reads.queued) return reads.queued;
    const inFlight = reads.sent;
    if (!inFlight) return this.send(licensee, reads);
    const later = reads;
    later.queued = inFlight.then(noop, noop).then(() => {
      later.queued = undefined;
      return this.send(licensee, later);
    });
    return later.queued;
  }

  private send(licensee: string, reads: CounterReads): Promise<number> {
    const sent = this.redis.get(this.counterKey(licensee)).then((count) => Number(count ?? 0));
    reads.sent = sent;
    // Registered before any queued read's continuation: the queued read finds `sent` cleared.
    sent.then(noop, noop).then(() => {
      if (reads.sent === sent) reads.sent = undefined;
    });
    return sent;
  }

  private counterKey(licensee: string): string {
    return `${this.connection.prefix}response-cache-drops:${licensee}`;
  }
}

function noop(): void {}
