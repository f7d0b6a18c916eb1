import type { RedisConnection } from './connection.ts';

/**
 * Automatic persisted queries shared by every replica: a document under its licensee and hash,
 * kept a day after it was last sent with its text. While Redis is away, `fallback` (this replica's
 * own store) answers, so a client falls back to sending the text at worst.
 */
const KEPT_SECONDS = 24 * 60 * 60;

type Store = { get(key: string): Promise<string | undefined>; set(key: string, document: string): Promise<void> };

export class RedisPersistedQueryStore implements Store {
  constructor(
    private readonly redis: RedisConnection,
    private readonly fallback: Store,
  ) {}

  private key(key: string): string {
    return `${this.redis.prefix}apq:${key}`;
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return (await this.redis.commands.get(this.key(key))) ?? undefined;
    } catch {
      return this.fallback.get(key);
    }
  }

  async set(key: string, document: string): Promise<void> {
    await this.fallback.set(key, document);
    await this.redis.commands.set(this.key(key), document, 'EX', KEPT_SECONDS).catch(() => {});
  }
}
