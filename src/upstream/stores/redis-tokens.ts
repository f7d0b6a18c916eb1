import type { RedisConnection } from '../../redis/connection.ts';
import { type HeldToken, MemoryTokenStore, TOKEN_LIFETIME_MS, type TokenStore } from '../tokens.ts';

/**
 * One token per licensee for every replica: it lives in Redis until its lifetime ends, and a
 * renewal runs under a lock with an expiry, so one replica authenticates while the others wait
 * for the lock and then read the token it stored. Dropping a rejected token is a compare-and-delete,
 * so several replicas that saw the same rejection drop it once and authenticate once. While Redis
 * is away the replica keeps its own copy and authenticates for itself (a few extra authenticates
 * beat failing requests), and writes it back when Redis returns.
 */

/** Deletes KEYS[1] only if its value is ARGV[1] (a lock still ours, a token still the one rejected). */
const DELETE_IF = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
/** Drops the token (JSON in KEYS[1]) only if it is still the one rejected (ARGV[1]). */
const DROP_TOKEN = `
local held = redis.call('GET', KEYS[1])
if held and cjson.decode(held).token == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** How long a renewal may hold the lock: longer than an authenticate with its retries takes. */
const LOCK_MS = 20_000;
/** How often a replica waiting for another's renewal looks for the new token. */
const POLL_MS = 50;

type ScriptClient = RedisConnection['commands'] & {
  deleteIf(key: string, value: string): Promise<number>;
  dropToken(key: string, token: string): Promise<number>;
};

export class RedisTokenStore implements TokenStore {
  private readonly redis: ScriptClient;
  /** This replica's copy, served while Redis is away. */
  private readonly local = new MemoryTokenStore();

  constructor(
    private readonly connection: RedisConnection,
    private readonly now: () => number = Date.now,
  ) {
    this.redis = connection.commands as ScriptClient;
    connection.onReconnect(() => void this.writeBack());
    const client = connection.commands;
    // Once per connection: several stores of one process (tests) share it.
    if (!('deleteIf' in client)) {
      client.defineCommand('deleteIf', { numberOfKeys: 1, lua: DELETE_IF });
      client.defineCommand('dropToken', { numberOfKeys: 1, lua: DROP_TOKEN });
    }
  }

  async get(licensee: string): Promise<HeldToken | undefined> {
    try {
      const text = await this.redis.get(this.key(licensee));
      const held = text === null ? undefined : (JSON.parse(text) as HeldToken);
      if (held) await this.local.set(licensee, held);
      return held;
    } catch {
      return this.local.get(licensee);
    }
  }

  async set(licensee: string, held: HeldToken): Promise<void> {
    await this.local.set(licensee, held);
    const lifeLeftMs = Math.floor(held.obtainedAt + TOKEN_LIFETIME_MS - this.now());
    if (lifeLeftMs <= 0) return;
    await this.redis.set(this.key(licensee), JSON.stringify(held), 'PX', lifeLeftMs).catch(() => undefined);
  }

  async drop(licensee: string, token: string): Promise<void> {
    await this.local.drop(licensee, token);
    await this.redis.dropToken(this.key(licensee), token).catch(() => undefined);
  }

  /**
   * Runs `obtain` for the licensee under the replicas' lock, unless a token `usable` says is good
   * turns up first (another replica renewed it); stores and returns the result.
   */
  async renew(
    licensee: string,
    usable: (held: HeldToken) => boolean,
    obtain: () => Promise<HeldToken>,
  ): Promise<HeldToken> {
    const lock = `${this.key(licensee)}:renewing`;
    const owner = `${this.connection.replicaId}:${this.now()}:${Math.random()}`;
    const giveUpAt = this.now() + 2 * LOCK_MS;
    for (;;) {
      let locked: boolean;
      try {
        locked = (await this.redis.set(lock, owner, 'PX', LOCK_MS, 'NX')) === 'OK';
      } catch {
        // Redis is away: this replica renews for itself.
        return this.store(licensee, await obtain());
      }
      const held = await this.get(licensee);
      if (held && usable(held)) {
        if (locked) await this.redis.deleteIf(lock, owner).catch(() => undefined);
        return held;
      }
      if (locked) {
        try {
          return await this.store(licensee, await obtain());
        } finally {
          await this.redis.deleteIf(lock, owner).catch(() => undefined);
        }
      }
      // Another replica renews: wait for its token (or for its lock to lapse, and take it over).
      if (this.now() > giveUpAt) return this.store(licensee, await obtain());
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * After a loss, Redis may have restarted empty: the tokens held here go back (unless another
   * replica stored one first), so the replicas do not each authenticate again.
   */
  private async writeBack(): Promise<void> {
    for (const [licensee, held] of this.local.entries()) {
      const lifeLeftMs = Math.floor(held.obtainedAt + TOKEN_LIFETIME_MS - this.now());
      if (lifeLeftMs > 0)
        await this.redis.set(this.key(licensee), JSON.stringify(held), 'PX', lifeLeftMs, 'NX').catch(() => undefined);
    }
  }

  private async store(licensee: string, held: HeldToken): Promise<HeldToken> {
    await this.set(licensee, held);
    return held;
  }

  private key(licensee: string): string {
    return `${this.connection.prefix}token:{${licensee}}`;
  }
}
