import type { RedisConnection } from '../../redis/connection.ts';
import { RedisBudgetStore } from './redis-budget.ts';
import { RedisCacheStore } from './redis-cache.ts';
import { FallbackBudgetStore } from './redis-fallback-budget.ts';
import { RedisTokenStore } from './redis-tokens.ts';

type Logger = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

export interface SharedStoreOptions {
  windowMs: number;
  /** The per-attempt timeout: bounds how long a call stays in flight (three phases: connect, headers, body). */
  timeoutMs: number;
  /** REDIS_FALLBACK_SHARE. */
  fallbackShare: number;
  logger?: Logger;
}

export interface SharedStores {
  budget: FallbackBudgetStore;
  tokens: RedisTokenStore;
  cache: RedisCacheStore;
  close(): void;
}

/** The budget, token and cache stores of every replica on one Redis, listening to each other's announcements. */
export async function sharedStores(connection: RedisConnection, options: SharedStoreOptions): Promise<SharedStores> {
  const redisBudget = new RedisBudgetStore(connection, {
    windowMs: options.windowMs,
    longestCallMs: 3 * options.timeoutMs,
  });
  const budget = new FallbackBudgetStore(redisBudget, connection, {
    share: options.fallbackShare,
    windowMs: options.windowMs,
    logger: options.logger,
  });
  const cache = new RedisCacheStore(connection);
  await Promise.all([redisBudget.listen(), cache.listen()]);
  return { budget, tokens: new RedisTokenStore(connection), cache, close: () => budget.close() };
}
