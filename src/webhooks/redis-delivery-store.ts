import type { RedisConnection } from '../redis/connection.ts';
import {
  type Delivery,
  type DeliveryAttempt,
  type DeliveryStatus,
  type DeliveryStore,
  KEPT_PER_ENDPOINT,
  type NewDelivery,
  newDelivery,
} from './delivery-store.ts';

/**
 * The delivery queue on Redis, shared by replicas (keys under REDIS_PREFIX `webhooks:`):
 *
 * - `delivery` (hash, id → the delivery as JSON), `message` (hash, endpoint NUL webhook-id → the
 *   first delivery of it: a change told twice is queued once), `endpoint:<id>` (sorted set of its
 *   deliveries by position, for listings), `position` (a counter);
 * - `lane:<endpoint>:<lane>` (list of the lane's pending ids, in order) and `lanes:<endpoint>` (its
 *   lanes that hold any);
 * - `due` (sorted set of lane heads by when they are next due) and, while their endpoint is paused,
 *   `parked:<endpoint>` instead; `paused` (set of endpoint ids).
 *
 * A claim moves the head's score in `due` to the end of a lease (`claimMs`): no other replica takes
 * it meanwhile, and if the claimer dies the head is due again when the lease ends, and another
 * replica sends it, with the same `webhook-id` (at least once). Adding, claiming, settling,
 * pausing and resuming are each one Lua script, so a lane's head is never lost or doubled.
 */

const ADD = `
-- KEYS: message, delivery, lane, due, paused, parked, endpointIndex, lanes
-- ARGV: messageKey, again, id, json, position, endpointId, dueAt, laneName
if ARGV[2] == '0' then
  local existing = redis.call('HGET', KEYS[1], ARGV[1])
  if existing and redis.call('HEXISTS', KEYS[2], existing) == 1 then return existing end
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 or ARGV[2] == '0' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[7], ARGV[5], ARGV[3])
redis.call('SADD', KEYS[8], ARGV[8])
if redis.call('RPUSH', KEYS[3], ARGV[3]) == 1 then
  if redis.call('SISMEMBER', KEYS[5], ARGV[6]) == 1 then
    redis.call('ZADD', KEYS[6], ARGV[7], ARGV[3])
  else
    redis.call('ZADD', KEYS[4], ARGV[7], ARGV[3])
  end
end
return ARGV[3]
`;

const CLAIM = `
-- KEYS: due; ARGV: id, now, leaseEnd
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
`;

const SETTLE = `
-- KEYS: delivery, due, lane, paused, parked, lanes
-- ARGV: id, json, status, nextAttemptAt, endpointId, laneName
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] == 'PENDING' then
  if redis.call('ZSCORE', KEYS[2], ARGV[1]) then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
  if redis.call('ZSCORE', KEYS[5], ARGV[1]) then redis.call('ZADD', KEYS[5], ARGV[4], ARGV[1]) end
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('LREM', KEYS[3], 1, ARGV[1])
local head = redis.call('LINDEX', KEYS[3], 0)
if not head then
  redis.call('SREM', KEYS[6], ARGV[6])
  return 1
end
local next = cjson.decode(redis.call('HGET', KEYS[1], head))
if redis.call('SISMEMBER', KEYS[4], ARGV[5]) == 1 then
  redis.call('ZADD', KEYS[5], next.nextAttemptAt, head)
else
  redis.call('ZADD', KEYS[2], next.nextAttemptAt, head)
end
return 1
`;

const PAUSE = `
-- KEYS: paused, due, parked; ARGV: endpointId, head ids…
redis.call('SADD', KEYS[1], ARGV[1])
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[2], ARGV[i])
  if score then
    redis.call('ZREM', KEYS[2], ARGV[i])
    redis.call('ZADD', KEYS[3], score, ARGV[i])
  end
end
return 1
`;

const RESUME = `
-- KEYS: paused, due, parked; ARGV: endpointId
redis.call('SREM', KEYS[1], ARGV[1])
local parked = redis.call('ZRANGE', KEYS[2 + 1], 0, -1, 'WITHSCORES')
for i = 1, #parked, 2 do redis.call('ZADD', KEYS[2], parked[i + 1], parked[i]) end
redis.call('DEL', KEYS[3])
return 1
`;

type Scripted = RedisConnection['commands'] & {
  webhookAdd(...args: (string | number)[]): Promise<string>;
  webhookClaim(...args: (string | number)[]): Promise<number>;
  webhookSettle(...args: (string | number)[]): Promise<number>;
  webhookPause(...args: (string | number)[]): Promise<number>;
  webhookResume(...args: (string | number)[]): Promise<number>;
};

export class RedisDeliveryStore implements DeliveryStore {
  private readonly redis: Scripted;
  private readonly key: (name: string) => string;

  constructor(
    connection: RedisConnection,
    /** How long a claim holds a delivery: longer than an attempt (twice WEBHOOK_TIMEOUT_MS from gateway-webhooks.ts), short enough for a dead replica's to be taken over soon. */
    private readonly claimMs = 30_000,
    private readonly kept = KEPT_PER_ENDPOINT,
  ) {
    this.redis = connection.commands as Scripted;
    this.key = (name) => `${connection.prefix}webhooks:${name}`;
    const client = connection.commands;
    if (!('webhookAdd' in client)) {
      client.defineCommand('webhookAdd', { numberOfKeys: 8, lua: ADD });
      client.defineCommand('webhookClaim', { numberOfKeys: 1, lua: CLAIM });
      client.defineCommand('webhookSettle', { numberOfKeys: 6, lua: SETTLE });
      client.defineCommand('webhookPause', { numberOfKeys: 3, lua: PAUSE });
      client.defineCommand('webhookResume', { numberOfKeys: 3, lua: RESUME });
    }
  }

  private laneKey(endpointId: string, lane: string) {
    return this.key(`lane:${endpointId}:${lane}`);
  }

  private async read(ids: readonly string[]): Promise<Delivery[]> {
    if (ids.length === 0) return [];
    const texts = await this.redis.hmget(this.key('delivery'), ...ids);
    return texts.filter((text): text is string => text !== null).map((text) => JSON.parse(text) as Delivery);
  }

  async has(endpointId: string, messageId: string): Promise<boolean> {
    return (await this.redis.hexists(this.key('message'), `${endpointId}\u0000${messageId}`)) === 1;
  }

  async add(input: NewDelivery, now: number, again = false): Promise<{ delivery: Delivery; added: boolean }> {
    const delivery = newDelivery(input, now, await this.redis.incr(this.key('position')));
    const { id } = delivery;
    const answered = await this.redis.webhookAdd(
      this.key('message'),
      this.key('delivery'),
      this.laneKey(input.endpointId, delivery.lane),
      this.key('due'),
      this.key('paused'),
      this.key(`parked:${input.endpointId}`),
      this.key(`endpoint:${input.endpointId}`),
      this.key(`lanes:${input.endpointId}`),
      `${input.endpointId}\u0000${input.messageId}`,
      again ? '1' : '0',
      id,
      JSON.stringify(delivery),
      delivery.position,
      input.endpointId,
      now,
      delivery.lane,
    );
    if (answered === id) return { delivery, added: true };
    const [existing] = await this.read([answered]);
    return existing ? { delivery: existing, added: false } : { delivery, added: true };
  }

  async due(now: number, limit: number): Promise<Delivery[]> {
    const ids = await this.redis.zrangebyscore(this.key('due'), '-inf', now, 'LIMIT', 0, limit);
    return this.read(ids);
  }

  async nextDue(): Promise<number | undefined> {
    const [, score] = await this.redis.zrange(this.key('due'), '0', '0', 'WITHSCORES');
    return score === undefined ? undefined : Number(score);
  }

  async claim(id: string, now: number): Promise<boolean> {
    return (await this.redis.webhookClaim(this.key('due'), id, now, now + this.claimMs)) === 1;
  }

  async settle(
    id: string,
    attempt: DeliveryAttempt | undefined,
    next: { status: DeliveryStatus; nextAttemptAt?: number },
  ): Promise<void> {
    const [delivery] = await this.read([id]);
    if (!delivery) return;
    if (attempt) delivery.attempts.push(attempt);
    delivery.status = next.status;
    if (next.nextAttemptAt !== undefined) delivery.nextAttemptAt = next.nextAttemptAt;
    const finished = await this.redis.webhookSettle(
      this.key('delivery'),
      this.key('due'),
      this.laneKey(delivery.endpointId, delivery.lane),
      this.key('paused'),
      this.key(`parked:${delivery.endpointId}`),
      this.key(`lanes:${delivery.endpointId}`),
      id,
      JSON.stringify(delivery),
      next.status,
      delivery.nextAttemptAt,
      delivery.endpointId,
      delivery.lane,
    );
    if (finished === 1) await this.forgetOldest(delivery.endpointId);
  }

  /** Keeps about `kept` finished deliveries of an endpoint (the oldest finished ones go first). */
  private async forgetOldest(endpointId: string) {
    const index = this.key(`endpoint:${endpointId}`);
    const excess = (await this.redis.zcard(index)) - this.kept;
    if (excess <= 0) return;
    const oldest = await this.read(await this.redis.zrange(index, '0', String(excess - 1)));
    const gone = oldest.filter((delivery) => delivery.status !== 'PENDING');
    if (gone.length === 0) return;
    const batch = this.redis.multi();
    for (const delivery of gone)
      batch
        .hdel(this.key('delivery'), delivery.id)
        .hdel(this.key('message'), `${endpointId}\u0000${delivery.messageId}`)
        .zrem(index, delivery.id);
    await batch.exec();
  }

  async release(id: string): Promise<void> {
    const [delivery] = await this.read([id]);
    if (delivery) await this.redis.zadd(this.key('due'), 'XX', delivery.nextAttemptAt, id);
  }

  /** The heads of the endpoint's lanes. */
  private async heads(endpointId: string): Promise<string[]> {
    const lanes = await this.redis.smembers(this.key(`lanes:${endpointId}`));
    const heads = await Promise.all(lanes.map((lane) => this.redis.lindex(this.laneKey(endpointId, lane), 0)));
    return heads.filter((head): head is string => head !== null);
  }

  async pause(endpointId: string): Promise<void> {
    await this.redis.webhookPause(
      this.key('paused'),
      this.key('due'),
      this.key(`parked:${endpointId}`),
      endpointId,
      ...(await this.heads(endpointId)),
    );
  }

  async resume(endpointId: string): Promise<void> {
    await this.redis.webhookResume(this.key('paused'), this.key('due'), this.key(`parked:${endpointId}`), endpointId);
  }

  async get(licenseeId: string, id: string): Promise<Delivery | undefined> {
    const [delivery] = await this.read([id]);
    return delivery?.licenseeId === licenseeId ? delivery : undefined;
  }

  async list(
    endpointId: string,
    { first, after, status }: { first: number; after?: number; status?: DeliveryStatus },
  ): Promise<Delivery[]> {
    const found: Delivery[] = [];
    let max: string = after === undefined ? '+inf' : `(${after}`;
    while (found.length < first) {
      const ids = await this.redis.zrevrangebyscore(this.key(`endpoint:${endpointId}`), max, '-inf', 'LIMIT', 0, 200);
      if (ids.length === 0) break;
      const page = await this.read(ids);
      for (const delivery of page) {
        if (found.length >= first) break;
        if (status === undefined || delivery.status === status) found.push(delivery);
      }
      const last = page.at(-1);
      if (!last || ids.length < 200) break;
      max = `(${last.position}`;
    }
    return found;
  }

  async backlog(endpointId: string): Promise<{ pending: number; oldestCreatedAt: number | undefined }> {
    const lanes = await this.redis.smembers(this.key(`lanes:${endpointId}`));
    let pending = 0;
    for (const lane of lanes) pending += await this.redis.llen(this.laneKey(endpointId, lane));
    const heads = await this.read(await this.heads(endpointId));
    const oldestCreatedAt = heads.length === 0 ? undefined : Math.min(...heads.map((head) => head.createdAt));
    return { pending, oldestCreatedAt };
  }

  async dropEndpoint(endpointId: string): Promise<void> {
    const index = this.key(`endpoint:${endpointId}`);
    const deliveries = await this.read(await this.redis.zrange(index, '0', '-1'));
    const lanes = await this.redis.smembers(this.key(`lanes:${endpointId}`));
    const batch = this.redis.multi();
    for (const delivery of deliveries)
      batch
        .hdel(this.key('delivery'), delivery.id)
        .hdel(this.key('message'), `${endpointId}\u0000${delivery.messageId}`)
        .zrem(this.key('due'), delivery.id);
    for (const lane of lanes) batch.del(this.laneKey(endpointId, lane));
    batch
      .del(index, this.key(`lanes:${endpointId}`), this.key(`parked:${endpointId}`))
      .srem(this.key('paused'), endpointId);
    await batch.exec();
  }

  async close(): Promise<void> {}
}
