import type { RedisConnection } from './connection.ts';

/**
 * A lease in Redis: at most one holder at a time across replicas (one change-feed poller per
 * licensee and event, say), held for a while and renewed by its holder, free again when released
 * or when its holder stops renewing (a replica that died). Renew and release are fenced by the
 * holder's id, so a holder whose lease lapsed and went to another can neither extend nor end the
 * new holder's. Each grant also gets a number larger than every earlier one (a fencing token), for
 * work that must refuse a stale holder's writes.
 */

/** KEYS: the lease, its grant counter. ARGV: owner, ttl. Returns the grant number, or 0 when held by another. */
const ACQUIRE = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]))
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('INCR', KEYS[2])
`;
/** KEYS: the lease. ARGV: owner, ttl. 1 when renewed, 0 when not ours any more. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;
/** KEYS: the lease. ARGV: owner. 1 when released, 0 when not ours. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type ScriptClient = RedisConnection['commands'] & {
  leaseAcquire(lease: string, counter: string, owner: string, ttlMs: number): Promise<number>;
  leaseRenew(lease: string, owner: string, ttlMs: number): Promise<number>;
  leaseRelease(lease: string, owner: string): Promise<number>;
};

export type LeaseGrant = { held: true; fence: number } | { held: false };

export class RedisLease {
  private readonly redis: ScriptClient;
  /** The lease's Redis key (scripts that write only while the lease is theirs check it). */
  readonly key: string;

  constructor(
    connection: RedisConnection,
    /** What the lease is for, e.g. `changes:1001:5002`; namespaced by REDIS_PREFIX. */
    name: string,
    private readonly ttlMs: number,
    /** Who holds it: by default this replica. */
    private readonly owner = connection.replicaId,
  ) {
    this.redis = connection.commands as ScriptClient;
    this.key = RedisLease.keyOf(connection, name);
    const client = connection.commands;
    if (!('leaseAcquire' in client)) {
      client.defineCommand('leaseAcquire', { numberOfKeys: 2, lua: ACQUIRE });
      client.defineCommand('leaseRenew', { numberOfKeys: 1, lua: RENEW });
      client.defineCommand('leaseRelease', { numberOfKeys: 1, lua: RELEASE });
    }
  }

  /** The Redis key of the lease named `name` (whether it is held: `EXISTS`). */
  static keyOf(connection: Pick<RedisConnection, 'prefix'>, name: string): string {
    return `${connection.prefix}lease:${name}`;
  }

  /** Takes the lease if it is free (or already ours, which extends it); its fence number when held. */
  async acquire(): Promise<LeaseGrant> {
    const fence = await this.redis.leaseAcquire(this.key, `${this.key}:grants`, this.owner, this.ttlMs);
    return fence > 0 ? { held: true, fence } : { held: false };
  }

  /** Extends the lease for another ttl; false when it is not ours any more (lapsed, taken by another). */
  async renew(): Promise<boolean> {
    return (await this.redis.leaseRenew(this.key, this.owner, this.ttlMs)) === 1;
  }

  /** Gives the lease up; false when it was not ours. */
  async release(): Promise<boolean> {
    return (await this.redis.leaseRelease(this.key, this.owner)) === 1;
  }
}
