import type { RedisConnection } from '../../redis/connection.ts';
import type { CacheStore } from '../cache.ts';

/**
 * The cache shared by every replica: each answer is a Redis key with the endpoint's lifetime, filed
 * in one set per tag. Dropping a tag deletes its answers and announces the drop on a channel, so
 * every replica's reads in flight learn of it (later reads do not join them).
 *
 * The stale-read rule across replicas, without trusting clocks: every drop takes the next number
 * of one counter and marks its tag with it. A read that misses notes the counter; its answer is
 * stored only if none of its tags was marked after that, even when the announcement of the drop
 * has not arrived yet. While Redis is away, reads miss and nothing is stored; drops that could not
 * be made are made when it is back.
 */

/** KEYS: the answer, the drop counter. Returns {answer} or {false, counter}. */
const GET_OR_COUNTER = `
local answer = redis.call('GET', KEYS[1])
if answer then return {answer} end
return {false, redis.call('GET', KEYS[2]) or '0'}
`;

/** KEYS: the answer, then each tag's set, then each tag's mark. ARGV: JSON, lifetime, the counter at the miss, tag count. */
const SET_UNLESS_DROPPED = `
local count = tonumber(ARGV[4])
local missedAt = tonumber(ARGV[3])
for i = 1, count do
  local mark = redis.call('GET', KEYS[1 + count + i])
  if mark and tonumber(mark) > missedAt then return 0 end
end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
for i = 1, count do
  redis.call('SADD', KEYS[1 + i], KEYS[1])
  if redis.call('PTTL', KEYS[1 + i]) < ttl then redis.call('PEXPIRE', KEYS[1 + i], ttl) end
end
return 1
`;

/** KEYS: the tag's set, its mark, the drop counter. ARGV: how long the mark is kept. */
const DROP_TAG = `
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do redis.call('DEL', key) end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], redis.call('INCR', KEYS[3]), 'PX', tonumber(ARGV[1]))
return 1
`;

/** A drop is remembered longer than any read can last (deadline and retries included). */
const MARK_KEPT_MS = 10 * 60_000;
/** Misses remembered at most (reads that failed never store, so their notes are dropped oldest first). */
const MAX_NOTED_MISSES = 10_000;
const CHANNEL = 'cache-dropped';

type ScriptClient = RedisConnection['commands'] & {
  cacheGetOrCounter(answer: string, counter: string): Promise<[string | null, string?]>;
  cacheSetUnlessDropped(...args: (string | number)[]): Promise<number>;
  cacheDropTag(set: string, mark: string, counter: string, keptMs: number): Promise<number>;
};

/** A drop's announcement for a change read from the service (see CacheStore.dropTag) starts with this. */
const CHANGED_UPSTREAM = '~';

export class RedisCacheStore implements CacheStore {
  private readonly redis: ScriptClient;
  private readonly listeners: ((tag: string, changedUpstream: boolean) => void)[] = [];
  /** Per key, the drop counter when a read of it missed (the earliest, if several are in flight). */
  private readonly missedAt = new Map<string, number>();
  /** Tags dropped while Redis was away: dropped there when it is back. */
  private readonly owed = new Set<string>();

  constructor(private readonly connection: RedisConnection) {
    this.redis = connection.commands as ScriptClient;
    const client = connection.commands;
    // Once per connection: several stores of one process (tests) share it.
    if (!('cacheDropTag' in client)) {
      client.defineCommand('cacheGetOrCounter', { numberOfKeys: 2, lua: GET_OR_COUNTER });
      client.defineCommand('cacheSetUnlessDropped', { lua: SET_UNLESS_DROPPED });
      client.defineCommand('cacheDropTag', { numberOfKeys: 3, lua: DROP_TAG });
    }
    connection.onReconnect(() => void this.payDebts());
  }

  /** Starts hearing other replicas' drops. */
  async listen(): Promise<void> {
    await this.connection.subscribe(CHANNEL, (message) => {
      const changedUpstream = message.startsWith(CHANGED_UPSTREAM);
      const tag = changedUpstream ? message.slice(CHANGED_UPSTREAM.length) : message;
      for (const listener of this.listeners) listener(tag, changedUpstream);
    });
  }

  onDropped(listener: (tag: string, changedUpstream: boolean) => void): void {
    this.listeners.push(listener);
  }

  async get(key: string): Promise<unknown> {
    const [answer, counter] = await this.redis
      .cacheGetOrCounter(this.answerKey(key), this.counterKey())
      .catch(() => [null] as const);
    if (answer) return JSON.parse(answer);
    if (counter !== undefined && !this.missedAt.has(key)) {
      if (this.missedAt.size >= MAX_NOTED_MISSES) this.missedAt.delete(this.missedAt.keys().next().value!);
      this.missedAt.set(key, Number(counter));
    }
    return undefined;
  }

  async set(key: string, value: unknown, ttlMs: number, tags: string[]): Promise<void> {
    const missedAt = this.missedAt.get(key);
    this.missedAt.delete(key);
    // No miss noted (Redis was away when the read began): the read's age is unknown, so it is not stored.
    if (missedAt === undefined) return;
    const keys = [this.answerKey(key), ...tags.map((tag) => this.tagKey(tag)), ...tags.map((tag) => this.markKey(tag))];
    await this.redis
      .cacheSetUnlessDropped(
        keys.length,
        ...keys,
        JSON.stringify(value),
        Math.max(1, Math.round(ttlMs)),
        missedAt,
        tags.length,
      )
      .catch(() => undefined);
  }

  async dropTag(tag: string, changedUpstream = false): Promise<void> {
    try {
      await this.redis.cacheDropTag(this.tagKey(tag), this.markKey(tag), this.counterKey(), MARK_KEPT_MS);
      await this.connection.publish(CHANNEL, changedUpstream ? `${CHANGED_UPSTREAM}${tag}` : tag);
    } catch {
      // Owed as a drop of our own write's (the stricter): its copies are not served meanwhile.
      this.owed.add(tag);
    }
  }

  /** Forgets every cached answer of this prefix (tests, operators); KEYS is fine for that, never on a request's path. */
  async clear(): Promise<void> {
    for (const pattern of ['cache:*', 'cache-tag:*']) {
      const keys = await this.redis.keys(`${this.connection.prefix}${pattern}`);
      if (keys.length > 0) await this.redis.del(...keys);
    }
  }

  private async payDebts(): Promise<void> {
    for (const tag of [...this.owed]) {
      this.owed.delete(tag);
      await this.dropTag(tag);
    }
  }

  private answerKey(key: string): string {
    return `${this.connection.prefix}cache:${key}`;
  }

  private tagKey(tag: string): string {
    return `${this.connection.prefix}cache-tag:${tag}`;
  }

  private markKey(tag: string): string {
    return `${this.connection.prefix}cache-dropped:${tag}`;
  }

  private counterKey(): string {
    return `${this.connection.prefix}cache-drops`;
  }
}
