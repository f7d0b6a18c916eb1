import type { RedisConnection } from './connection.ts';

/**
 * A principal's live subscriptions counted across replicas: a sorted set per principal whose
 * members are this replica's slots, scored by when they lapse. A replica renews its own slots'
 * scores while they live, so the slots of a replica that died lapse within SLOT_TTL_MS instead
 * of holding the principal's places for ever. One Lua script prunes, counts and takes, so two
 * replicas can never both take the last place. While Redis is away, `fallback` counts alone
 * (this replica's own subscriptions), as the budget falls back to its share.
 */

/** How long a slot lives without renewal; renewed every third of it. */
export const SLOT_TTL_MS = 60_000;

const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

type Slots = { acquire(principal: string): Promise<(() => void) | null> };

export class RedisSubscriptionSlots implements Slots {
  private readonly held = new Map<string, string>(); // member → principal
  private sequence = 0;
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisConnection,
    private readonly limit: number,
    private readonly fallback: Slots,
    private readonly now: () => number = Date.now,
  ) {
    this.renewal = setInterval(() => void this.renew(), SLOT_TTL_MS / 3);
    this.renewal.unref();
  }

  private key(principal: string): string {
    return `${this.redis.prefix}subscriptions:${principal}`;
  }

  async acquire(principal: string): Promise<(() => void) | null> {
    const member = `${this.redis.replicaId}:${++this.sequence}`;
    let taken: unknown;
    try {
      taken = await this.redis.commands.eval(
        TAKE,
        1,
        this.key(principal),
        this.now(),
        this.limit,
        this.now() + SLOT_TTL_MS,
        member,
        SLOT_TTL_MS * 2,
      );
    } catch {
      return this.fallback.acquire(principal);
    }
    if (taken !== 1) return null;
    this.held.set(member, principal);
    return () => {
      if (!this.held.delete(member)) return;
      this.redis.commands.zrem(this.key(principal), member).catch(() => {
        // Lost with Redis: the slot lapses on its own, unrenewed.
      });
    };
  }

  private async renew(): Promise<void> {
    const lapse = this.now() + SLOT_TTL_MS;
    const pipeline = this.redis.commands.pipeline();
    for (const [member, principal] of this.held)
      pipeline.zadd(this.key(principal), 'XX', lapse, member).pexpire(this.key(principal), SLOT_TTL_MS * 2);
    if (this.held.size > 0) await pipeline.exec().catch(() => {});
  }

  close(): void {
    clearInterval(this.renewal);
  }
}
