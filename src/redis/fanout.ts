import type { RedisConnection } from './connection.ts';

/**
 * One topic's messages to every replica: what one replica publishes (the change feed's poller, say)
 * reaches every subscriber on every replica, itself included, through Redis pub/sub. Delivery is
 * at most once and only to replicas connected at the time: a subscriber that must not miss
 * anything reads the source again after a reconnection.
 */
export class RedisFanout<T> {
  constructor(
    private readonly connection: RedisConnection,
    /** e.g. `changes:1001:5002`; namespaced by REDIS_PREFIX. */
    private readonly topic: string,
  ) {}

  async publish(message: T): Promise<void> {
    await this.connection.publish(`fanout:${this.topic}`, JSON.stringify(message));
  }

  /** Calls `listener` with each message of the topic; resolves to its unsubscribe. */
  subscribe(listener: (message: T) => void): Promise<() => Promise<void>> {
    return this.connection.subscribe(`fanout:${this.topic}`, (text) => listener(JSON.parse(text) as T));
  }
}
