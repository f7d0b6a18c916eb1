import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * The gateway's connection to Redis (REDIS_URL): one client for commands and one for pub/sub (a
 * subscribed ioredis client can run nothing else). The first connection is bounded: ioredis
 * retries for ever by default, and a gateway that cannot reach its shared state at start must say
 * so and stop. Once running, it reconnects on its own, and commands fail at once while it is away
 * (no offline queue), so the stores can fall back instead of hanging.
 */

export interface RedisSettings {
  /** redis:// or rediss:// (TLS), a password in the URL when the server wants one. */
  url: string;
  /** Put before every key and channel (REDIS_PREFIX), so several gateways can share one Redis. */
  prefix: string;
}

export interface RedisConnection {
  readonly commands: Redis;
  readonly prefix: string;
  /** Tells apart this process's locks and slots from other replicas'. */
  readonly replicaId: string;
  /** Whether commands reach Redis now. */
  connected(): boolean;
  /** Calls `listener` with each message published on `channel` (the prefix is added here); resolves to its unsubscribe. */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;
  publish(channel: string, message: string): Promise<void>;
  /**
   * Since when (our clock, ms) the pub/sub connection has been up without a break, undefined while
   * it is down: a message published before then may not have reached this replica.
   */
  listeningSince?(): number | undefined;
  /** Calls `listener` each time the connection is back after a loss. */
  onReconnect(listener: () => void): void;
  close(): Promise<void>;
}

export class RedisUnreachableError extends Error {
  override name = 'RedisUnreachableError';
}

/** How long the first connection may take before the gateway gives up (it must exit within 10 s). */
const FIRST_CONNECTION_MS = 6_000;
/** A command that gets no answer in this time fails, and the store that sent it falls back. */
const COMMAND_TIMEOUT_MS = 1_000;

/** The URL with its password hidden, for messages and logs. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'an unparsable URL';
  }
}

/** Connects to Redis; rejects with RedisUnreachableError (naming REDIS_URL) when it cannot within a few seconds. */
export async function openRedis(
  settings: RedisSettings,
  firstConnectionMs = FIRST_CONNECTION_MS,
): Promise<RedisConnection> {
  const options = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: Math.min(firstConnectionMs, 5_000),
    // Back after a loss within a second or so; the fallback budget serves meanwhile.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
  };
  const commands = new Redis(settings.url, options);
  // The subscriptions are made again here on each reconnection (below): ioredis's own
  // (autoResubscribe) leaves its SUBSCRIBE's failure unhandled when Redis goes away again meanwhile,
  // and an unhandled rejection ends a Node process.
  const subscriber = new Redis(settings.url, { ...options, autoResubscribe: false });
  // Without a listener an 'error' event would throw; the stores notice failures on their commands.
  for (const client of [commands, subscriber]) client.on('error', () => {});
  try {
    await bounded(Promise.all([commands.connect(), subscriber.connect()]), firstConnectionMs);
  } catch (error) {
    commands.disconnect();
    subscriber.disconnect();
    throw new RedisUnreachableError(
      `REDIS_URL: cannot reach Redis at ${redactRedisUrl(settings.url)} (${(error as Error).message}); start Redis or fix REDIS_URL`,
    );
  }

  const listeners = new Map<string, ((message: string) => void)[]>();
  subscriber.on('message', (channel: string, message: string) => {
    for (const listener of listeners.get(channel) ?? []) listener(message);
  });
  let listeningSince: number | undefined = Date.now();
  subscriber.on('close', () => void (listeningSince = undefined));
  // Registered once connected: each 'ready' is a reconnection. Every channel is subscribed again
  // (a failure: the next reconnection tries again).
  subscriber.on('ready', () => {
    if (listeners.size > 0) subscriber.subscribe(...listeners.keys()).catch(() => undefined);
    listeningSince ??= Date.now();
  });
  let lost = false;
  const reconnectListeners: (() => void)[] = [];
  commands.on('close', () => void (lost = true));
  commands.on('ready', () => {
    if (!lost) return;
    lost = false;
    for (const listener of reconnectListeners) listener();
  });

  return {
    commands,
    prefix: settings.prefix,
    replicaId: randomUUID(),
    connected: () => commands.status === 'ready',
    listeningSince: () => (subscriber.status === 'ready' ? listeningSince : undefined),
    async subscribe(channel, listener) {
      const full = settings.prefix + channel;
      const unsubscribe = async () => {
        const rest = (listeners.get(full) ?? []).filter((l) => l !== listener);
        if (rest.length > 0) return void listeners.set(full, rest);
        listeners.delete(full);
        await subscriber.unsubscribe(full).catch(() => undefined);
      };
      const list = listeners.get(full);
      if (list) {
        list.push(listener);
        return unsubscribe;
      }
      listeners.set(full, [listener]);
      // Subscribed again after each reconnection (the 'ready' listener above).
      try {
        await subscriber.subscribe(full);
      } catch (error) {
        // Not subscribed (Redis away): a later try must subscribe afresh.
        listeners.delete(full);
        throw error;
      }
      return unsubscribe;
    },
    async publish(channel, message) {
      await commands.publish(settings.prefix + channel, message);
    },
    onReconnect: (listener) => void reconnectListeners.push(listener),
    async close() {
      for (const client of [commands, subscriber]) {
        // quit waits for Redis; a lost connection is simply dropped.
        await client.quit().catch(() => client.disconnect());
      }
    },
  };
}

function bounded<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
