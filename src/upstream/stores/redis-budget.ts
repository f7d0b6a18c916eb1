import type { Redis } from 'ioredis';
import type { RedisConnection } from '../../redis/connection.ts';
import { type BackgroundLane, type BudgetStore, LANE_ASK_WINDOWS } from '../budget.ts';

/**
 * The rolling-window budget in Redis, shared by every replica: per licensee two sorted sets, the
 * slots of calls in flight and the slots of finished calls, each scored by when it leaves the
 * window. One Lua script prunes, counts and takes, so two replicas can never both take the last
 * slot (Redis runs a script alone). A slot freed on one replica is announced on a channel, so a
 * replica whose waiters found only calls in flight (no time to wake at) pumps again.
 */

/**
 * Prunes, then takes a slot when fewer than the limit are counted; else answers when one frees.
 * KEYS: done, flying, the background lane's takes (scored by when taken), the lane's last ask.
 * ARGV: now, limit, slot, flying until, lane ('b' background, 'f' any other, '' none), floor, window,
 * windows an ask lasts. The lane (BackgroundLane in budget.ts): a background take marks the lane as
 * asking for LANE_ASK_WINDOWS windows and counts against its floor; any other take leaves what is
 * left of the floor while it asks.
 */
const TAKE = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local flyingUntil = tonumber(ARGV[4])
local lane = ARGV[5]
local floor = tonumber(ARGV[6])
local windowMs = tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if lane == 'b' then
  redis.call('SET', KEYS[4], '1', 'PX', windowMs * tonumber(ARGV[8]))
elseif lane == 'f' and floor > 0 and redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - windowMs)
  local left = floor - redis.call('ZCARD', KEYS[3])
  if left > 0 then limit = math.max(1, limit - left) end
end
local done = redis.call('ZCARD', KEYS[1])
local flying = redis.call('ZCARD', KEYS[2])
if done + flying < limit then
  redis.call('ZADD', KEYS[2], flyingUntil, ARGV[3])
  redis.call('PEXPIRE', KEYS[2], math.ceil(flyingUntil - now))
  if lane == 'b' then
    redis.call('ZADD', KEYS[3], now, ARGV[3])
    redis.call('PEXPIRE', KEYS[3], windowMs)
  end
  return {1}
end
local index = done + flying - limit
if index < done then
  return {0, redis.call('ZRANGE', KEYS[1], index, index, 'WITHSCORES')[2]}
end
return {0, redis.call('ZRANGE', KEYS[2], index - done, index - done, 'WITHSCORES')[2]}
`;

/**
 * Files sends as finished (ARGV: now, then slot and free time pairs) and calls in flight (ARGV
 * after the marker '|': slot and latest free time pairs). Used by finish, and to write a replica's
 * own sends back into a Redis that restarted empty. Keys expire when their last slot leaves.
 */
const RECORD = `
local now = tonumber(ARGV[1])
local i = 2
local flying = false
while i <= #ARGV do
  if ARGV[i] == '|' then
    flying = true
    i = i + 1
  else
    local slot, freeAt = ARGV[i], tonumber(ARGV[i + 1])
    if flying then
      if freeAt > now then redis.call('ZADD', KEYS[2], 'NX', freeAt, slot) end
    else
      redis.call('ZREM', KEYS[2], slot)
      if freeAt > now then redis.call('ZADD', KEYS[1], freeAt, slot) end
    end
    i = i + 2
  end
end
for k = 1, 2 do
  local last = redis.call('ZRANGE', KEYS[k], -1, -1, 'WITHSCORES')[2]
  if last then redis.call('PEXPIRE', KEYS[k], math.max(1, math.ceil(tonumber(last) - now))) end
end
return 1
`;

/** A send of this replica, as the fallback keeps them (and writes them back). */
export interface OwnSend {
  slot: string;
  /** When the call finished; undefined while it is in flight. */
  finishedAt?: number;
  takenAt: number;
}

type ScriptClient = Redis & {
  budgetTake(
    done: string,
    flying: string,
    backgroundTakes: string,
    backgroundAsked: string,
    now: number,
    limit: number,
    slot: string,
    flyingUntil: number,
    lane: '' | 'b' | 'f',
    floor: number,
    windowMs: number,
    askWindows: number,
  ): Promise<[number, string?]>;
  budgetRecord(done: string, flying: string, ...args: (string | number)[]): Promise<number>;
};

export interface RedisBudgetOptions {
  /** The budget's window (the same on every replica): a finished call's slot leaves it this long after. */
  windowMs: number;
  /** The longest a call can be in flight: a replica that dies mid-call frees its slot this long after the window. */
  longestCallMs: number;
}

export class RedisBudgetStore implements BudgetStore {
  private readonly redis: ScriptClient;
  private next = 0;
  /** Slot-freed announcements heard per licensee; a take that saw one arrive answers "try again now". */
  private readonly heard = new Map<string, number>();
  private readonly listeners: ((licensee: string) => void)[] = [];

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: RedisBudgetOptions,
  ) {
    this.redis = connection.commands as ScriptClient;
    const client = connection.commands;
    // Once per connection: several stores of one process (tests) share it.
    if (!('budgetTake' in client)) {
      client.defineCommand('budgetTake', { numberOfKeys: 4, lua: TAKE });
      client.defineCommand('budgetRecord', { numberOfKeys: 2, lua: RECORD });
    }
  }

  /** Starts hearing other replicas' freed slots. */
  async listen(): Promise<void> {
    await this.connection.subscribe('budget-freed', (licensee) => {
      this.heard.set(licensee, (this.heard.get(licensee) ?? 0) + 1);
      for (const listener of this.listeners) listener(licensee);
    });
  }

  onSlotFreed(listener: (licensee: string) => void): void {
    this.listeners.push(listener);
  }

  async take(licensee: string, now: number, limit: number, windowMs: number, lane?: BackgroundLane) {
    const slot = `${this.connection.replicaId}:${++this.next}`;
    const heardBefore = this.heard.get(licensee) ?? 0;
    const [taken, freeAt] = await this.redis.budgetTake(
      ...this.keys(licensee),
      ...this.laneKeys(licensee),
      now,
      limit,
      slot,
      now + this.options.longestCallMs + windowMs,
      lane ? (lane.background ? 'b' : 'f') : '',
      lane?.floor ?? 0,
      windowMs,
      LANE_ASK_WINDOWS,
    );
    if (taken === 1) return { taken: true as const, slot };
    // A slot freed while the script ran: the waiter's pump may have been busy, so it must look again.
    if ((this.heard.get(licensee) ?? 0) !== heardBefore) return { taken: false as const, freeAt: now };
    return { taken: false as const, freeAt: Number(freeAt) };
  }

  async finish(licensee: string, slot: string, at: number) {
    await this.record(licensee, at, [{ slot, finishedAt: at, takenAt: at }]);
    await this.connection.publish('budget-freed', licensee);
  }

  async freeTimes(licensee: string, now: number) {
    const [done, flying] = this.keys(licensee);
    const [scores, inFlight] = await Promise.all([
      this.redis.zrangebyscore(done, `(${now}`, '+inf', 'WITHSCORES'),
      this.redis.zcount(flying, `(${now}`, '+inf'),
    ]);
    const times: number[] = [];
    for (let i = 1; i < scores.length; i += 2) times.push(Number(scores[i]));
    return [...times, ...Array<number>(inFlight).fill(Infinity)];
  }

  /** Writes sends into Redis: finished ones until a window after they finished, calls in flight until their latest end. */
  async record(licensee: string, now: number, sends: OwnSend[]): Promise<void> {
    const { windowMs } = this.options;
    const finished = sends
      .filter((send) => send.finishedAt !== undefined)
      .flatMap((send) => [send.slot, send.finishedAt! + windowMs]);
    const flying = sends
      .filter((send) => send.finishedAt === undefined)
      .flatMap((send) => [send.slot, send.takenAt + this.options.longestCallMs + windowMs]);
    await this.redis.budgetRecord(...this.keys(licensee), now, ...finished, '|', ...flying);
  }

  private keys(licensee: string): [string, string] {
    // The braces keep every key of a licensee in one slot of a Redis Cluster.
    const base = `${this.connection.prefix}budget:{${licensee}}`;
    return [`${base}:done`, `${base}:flying`];
  }

  /** The background lane's takes in the window, and its last ask (BackgroundLane). */
  private laneKeys(licensee: string): [string, string] {
    const base = `${this.connection.prefix}budget:{${licensee}}`;
    return [`${base}:background`, `${base}:background-asked`];
  }
}
