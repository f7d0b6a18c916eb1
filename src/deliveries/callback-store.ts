import type { RedisConnection } from '../redis/connection.ts';
import { RedisLease } from '../redis/lease.ts';
import type { CallbackTarget } from './callback-protocol.ts';

/**
 * Where callback subscriptions are recorded. Without Redis, in this process only (it ends them when
 * it stops). With Redis, every subscription is a record that any replica can open again, held by
 * one replica at a time through a lease it renews: when that replica dies the lease lapses, and
 * another replica's sweep adopts the record and runs the subscription again from it.
 */

/** A callback subscription as recorded: where to deliver, and how to open it again. */
export interface CallbackRecord {
  /** The record's key: the router's subscription id and callback URL, hashed. */
  key: string;
  target: CallbackTarget;
  /** The request that opened it: its address, the client's credential headers, its GraphQL parameters. */
  request: { url: string; headers: Record<string, string>; params: Record<string, unknown> };
  /**
   * Where the stream stands (ISO instant): its start, then the `modifiedAt` of the latest change the
   * router accepted. Another replica resumes from it (`since`), so nothing after it is lost.
   */
  cursor?: string;
}

export interface CallbackStore {
  /** Records `record` as this replica's; false when another replica holds it. `lost` is called if it is taken away. */
  hold(record: CallbackRecord, lost: () => void): Promise<boolean>;
  /** Records a held subscription's new cursor; nothing once it is no longer held here. */
  advance(record: CallbackRecord): Promise<void>;
  /** Forgets a subscription that ended. */
  drop(key: string): Promise<void>;
  /** Lets a subscription go without forgetting it (this replica stops; another may run it). */
  letGo(key: string): Promise<void>;
  /** Calls `adopt` with each recorded subscription no replica holds (taken by this one first). */
  watch(adopt: (record: CallbackRecord) => Promise<void>): void;
  /** Whether the records outlive this process (another replica ends or carries on what it held). */
  readonly shared: boolean;
  close(): Promise<void>;
}

/** One process's subscriptions: nothing to record beyond the running ones. */
export class MemoryCallbackStore implements CallbackStore {
  readonly shared = false;
  async hold(): Promise<boolean> {
    return true;
  }
  async advance(): Promise<void> {}
  async drop(): Promise<void> {}
  async letGo(): Promise<void> {}
  watch(): void {}
  async close(): Promise<void> {}
}

export class RedisCallbackStore implements CallbackStore {
  readonly shared = true;
  private readonly records: string;
  private readonly held = new Map<string, { lease: RedisLease; timer: NodeJS.Timeout }>();
  private sweeper?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly redis: RedisConnection,
    /** How long a holder's lease lasts without renewal: a dead replica's subscriptions are adopted after it. */
    private readonly leaseMs: number,
  ) {
    this.records = `${redis.prefix}callbacks`;
  }

  private lease(key: string) {
    return new RedisLease(this.redis, `callback:${key}`, this.leaseMs);
  }

  async hold(record: CallbackRecord, lost: () => void): Promise<boolean> {
    if (this.held.has(record.key)) {
      await this.redis.commands.hset(this.records, record.key, JSON.stringify(record));
      return true;
    }
    const lease = this.lease(record.key);
    // Already ours when the sweep took it for an adoption: acquire then extends it.
    if (!(await lease.acquire()).held) return false;
    await this.redis.commands.hset(this.records, record.key, JSON.stringify(record));
    const timer = setInterval(() => {
      lease.renew().then(
        (renewed) => {
          if (renewed || !this.held.has(record.key)) return;
          this.forget(record.key);
          lost();
        },
        // Redis away: the lease is renewed again once it is back, or found lost then.
        () => {},
      );
    }, this.leaseMs / 3);
    timer.unref();
    this.held.set(record.key, { lease, timer });
    return true;
  }

  async advance(record: CallbackRecord): Promise<void> {
    // Dropped or lost: written now, it would bring back a record that ended, or undo the adopter's.
    if (!this.held.has(record.key)) return;
    await this.redis.commands.hset(this.records, record.key, JSON.stringify(record));
  }

  private forget(key: string) {
    const holding = this.held.get(key);
    if (holding) clearInterval(holding.timer);
    this.held.delete(key);
    return holding;
  }

  async drop(key: string): Promise<void> {
    const holding = this.forget(key);
    await this.redis.commands.hdel(this.records, key).catch(() => undefined);
    await holding?.lease.release().catch(() => undefined);
  }

  async letGo(key: string): Promise<void> {
    await this.forget(key)
      ?.lease.release()
      .catch(() => undefined);
  }

  watch(adopt: (record: CallbackRecord) => Promise<void>): void {
    // Every half lease: a dead replica's subscriptions are running again within 1.5 leases of its death.
    this.sweeper = setInterval(() => void this.sweep(adopt), this.leaseMs / 2);
    this.sweeper.unref();
  }

  private async sweep(adopt: (record: CallbackRecord) => Promise<void>) {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const recorded = await this.redis.commands.hgetall(this.records);
      for (const [key, text] of Object.entries(recorded)) {
        if (this.held.has(key)) continue;
        if (await this.redis.commands.exists(RedisLease.keyOf(this.redis, `callback:${key}`))) continue;
        if (!(await this.lease(key).acquire()).held) continue;
        await adopt(JSON.parse(text) as CallbackRecord).catch(() => undefined);
      }
    } catch {
      // Redis away: the next sweep tries again.
    } finally {
      this.sweeping = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.held.keys()].map((key) => this.letGo(key)));
  }
}
